"""A query that is a note's whole title or alias ranks that note first (pipeline stage 8).

The vaults are generated: a guide note (an overview, an alias of the topic's name) links to
its pages and repeats their titles in its text, the shape of a help or documentation vault
("Introduction to Sync" over "Set up Sync", "Sync settings"...), where the guide outranked the
page a title query names; and a page whose title is inside another's ("Tags", "Tags view").
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from vault import Vault

TOPICS = ["Harbor", "Lantern", "Orchard", "Quill", "Meridian", "Tundra", "Cobalt", "Saffron"]
VERBS = ["Set up", "Configure", "Troubleshoot", "Share", "Restore", "Export", "Import", "Secure"]
FILLER = ("open select choose press button menu option window account password server vault "
          "copy paste click enter tap screen phone desktop").split()
NOUNS = ["settings", "history", "devices", "limits", "storage", "privacy", "files", "folders"]


def _vault(root: Path, seed: int) -> tuple[list[str], dict[str, str]]:
    """Write the vault; return the page paths and the alias -> path of each aliased note."""
    rng = random.Random(seed)
    topic = rng.choice(TOPICS)
    pages = [f"{v} {topic}" for v in rng.sample(VERBS, 4)]
    pages += [f"{topic} {n}" for n in rng.sample(NOUNS, 3)]
    guide = f"Introduction to {topic}"
    lines = [f"---\naliases:\n  - {topic}\n---\n# {guide}\n"]
    for p in pages:  # the guide names each page three times, once as a link
        lines.append(f"- [[{p}]]: {p.lower()} is how you {p.lower()} with {topic}; "
                     f"see {p} and the {topic} overview.\n")
    files = {f"{topic}/{guide}.md": "".join(lines)}
    for p in pages:
        steps = " ".join(rng.choice(FILLER) for _ in range(300))  # a long page, its own words
        files[f"{topic}/{p}.md"] = f"Back to [[{guide}]].\n\n{steps}\n"
    for i in range(16):  # other notes use the same words and point at the guide
        said = " ".join(rng.choice(VERBS).lower() + " " + rng.choice(NOUNS) for _ in range(4))
        files[f"misc/note {i}.md"] = f"{said} in {topic}, see [[{guide}]].\n"
    tag = rng.choice(["Tags", "Labels", "Badges"])
    low = tag.lower()
    files[f"Plugins/{tag} view.md"] = (f"# {tag} view\n\nThe {tag} view lists {low}; "
                                       f"{low} {low} [[{tag}]] and {low}.\n")
    files[f"Editing/{tag}.md"] = f"---\naliases: [Keywords {seed}]\n---\n{tag} group notes.\n"
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return [f"{topic}/{p}.md" for p in pages] + [f"Editing/{tag}.md"], {
        topic: f"{topic}/{guide}.md", f"Keywords {seed}": f"Editing/{tag}.md"}


@pytest.mark.parametrize("seed", range(3))
def test_a_title_query_finds_its_note_first(tmp_path: Path, seed: int) -> None:
    pages, aliases = _vault(tmp_path, seed)
    with Vault.init(tmp_path) as v:
        for path in pages:
            title = Path(path).stem
            for query in (title, title.lower(), f"  {title.upper()} "):
                res = v.search(query, 5, learn=False)
                assert [h.note for h in res.hits][:1] == [path], (query, res.hits)
                assert res.stages["whole_name"].startswith("ran (1 named whole")
        for alias, path in aliases.items():
            assert [h.note for h in v.search(alias, 5, learn=False).hits][:1] == [path]


@pytest.mark.parametrize("seed", range(3))
def test_a_query_that_is_no_whole_name_keeps_its_order(tmp_path: Path, seed: int) -> None:
    """Only the whole query counts: a name inside a longer query moves nothing, so a question
    ranks as the stages before left it (the same order with the stage's input unchanged)."""
    pages, _ = _vault(tmp_path, seed)
    with Vault.init(tmp_path) as v:
        for path in pages:
            query = f"how do I {Path(path).stem} today"
            res = v.search(query, 8, learn=False)
            assert res.stages["whole_name"] == "skipped: the query is no note's whole name"


def test_several_notes_of_one_name_come_first_in_their_order(tmp_path: Path) -> None:
    """Two notes named alike (a title and another's alias) both lead, the hub after them."""
    (tmp_path / "Compass.md").write_text("# Compass\nA compass note.\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("---\naliases: [Compass]\n---\nbearing tool\n",
                                   encoding="utf-8")
    (tmp_path / "hub.md").write_text(
        "Compass compass compass: [[Compass]] [[b]] compass needle compass.\n", encoding="utf-8")
    with Vault.init(tmp_path) as v:
        got = [h.note for h in v.search("compass", 3, learn=False).hits]
        assert sorted(got[:2]) == ["Compass.md", "b.md"] and got[2] == "hub.md"
