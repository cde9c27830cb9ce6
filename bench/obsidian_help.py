"""The Obsidian help vault for bench/bench_learning_agents.py, rebuilt from a folder of its notes.

The help vault (issue 31; NOTES-LRN17.md, NOTES-LRN28.md) is not stored in this repository:
obsidianmd/obsidian-help names no licence, so its text stays out of it. A person (or a helper
with the stored-index tools: `find_files` repo `obsidianmd/obsidian-help` under `en/`, then
`read_file` per path) fills a folder with the English notes, keeping the layout below `en/`
(`Plugins/Backlinks.md`, ...). This module turns that folder into the vault the bench reads:

- every `*.md` outside dot-folders, at the same relative path;
- image and icon embeds (`![[x.png]]`, `![[x.svg#icon]]`, `![alt](url.png)`) removed, since the
  vault holds no attachments and their file names are no words of the page;
- a check that every gold note of `--questions` (bench/data/obsidian_help_questions.json)
  is in the vault, and a list of the notes that link to at least `--hub-links` distinct
  notes (the human-written index pages: "Core plugins", "Home", the Sync and Publish
  introductions) for the hub workload of NOTES-LRN28.md.

Run:  python -m bench.obsidian_help --notes FOLDER --out VAULT
      then bench_learning_agents --vault VAULT --questions bench/data/obsidian_help_questions.json
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Sequence
from pathlib import Path

_IMAGE = r"(?:png|jpe?g|gif|svg|webp|bmp)"
_EMBED = re.compile(r"!\[\[[^\]\n]*\." + _IMAGE + r"(?:#[^\]|\n]*)?(?:\|[^\]\n]*)?\]\]",
                    re.IGNORECASE)
_MD_IMAGE = re.compile(r"!\[[^\]\n]*\]\([^)\n]*\." + _IMAGE + r"\)", re.IGNORECASE)
_LINK = re.compile(r"(?<!!)\[\[([^\]|#\n]+)")


def clean(text: str) -> str:
    """The note's text without image and icon embeds (module docstring); other text as is."""
    return _MD_IMAGE.sub("", _EMBED.sub("", text))


def links(text: str) -> set[str]:
    """The distinct targets (last path part, lower case) of the note's wikilinks."""
    return {m.group(1).strip().rsplit("/", 1)[-1].lower() for m in _LINK.finditer(text)}


def build(notes: Path, out: Path) -> list[str]:
    """Writes the cleaned notes of `notes` under `out`; returns their relative paths, sorted.
    Raises FileExistsError when `out` already holds a note (nothing is overwritten)."""
    paths = sorted(p for p in notes.rglob("*.md")
                   if not any(part.startswith(".") for part in p.relative_to(notes).parts))
    if out.exists() and any(out.rglob("*.md")):
        raise FileExistsError(f"{out} already holds notes")
    written = []
    for src in paths:
        rel = src.relative_to(notes)
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(clean(src.read_text(encoding="utf-8")), encoding="utf-8")
        written.append(rel.as_posix())
    return written


def hubs(vault: Path, paths: Sequence[str], least: int) -> list[tuple[str, int]]:
    """Notes whose wikilinks reach at least `least` distinct other notes of the vault, with
    that count, most first (ties by path)."""
    names = {Path(p).stem.lower() for p in paths}
    found = []
    for p in paths:
        reach = (links((vault / p).read_text(encoding="utf-8")) & names) - {Path(p).stem.lower()}
        if len(reach) >= least:
            found.append((p, len(reach)))
    return sorted(found, key=lambda item: (-item[1], item[0]))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--notes", type=Path, required=True, help="folder of the fetched notes")
    ap.add_argument("--out", type=Path, required=True, help="vault folder to write")
    ap.add_argument("--questions", type=Path,
                    default=Path(__file__).parent / "data" / "obsidian_help_questions.json")
    ap.add_argument("--hub-links", type=int, default=8)
    args = ap.parse_args(argv)
    paths = build(args.notes, args.out)
    data = json.loads(args.questions.read_text(encoding="utf-8"))
    gold = sorted({g for kind in ("related", "unrelated") for q in data[kind] for g in q["gold"]})
    missing = [g for g in gold if g not in set(paths)]
    print(f"{len(paths)} notes written to {args.out}; {len(gold) - len(missing)} of "
          f"{len(gold)} gold notes present")
    for path, reach in hubs(args.out, paths, args.hub_links):
        print(f"hub: {path} links {reach} notes")
    if missing:
        print("missing gold notes: " + ", ".join(missing))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
