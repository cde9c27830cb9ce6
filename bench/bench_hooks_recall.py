"""What the prompt hook injects, on LoCoMo: the evidence it shows, the words it costs, and
silence when nothing is relevant (issue 29 item 1).

The vault: LoCoMo's conversations ingested as `rmh ingest` does (turn, session, entity, fact
and episode notes; dense off), then the hooks' index built (`hooks_index.refresh`). Each
question is a prompt to the hook's default path (`hooks_recall.recall`: the FTS5 index, no
vault opened) and, with `--path engine`, to the warm daemon's path (`hooks_memory.prompt_memory`:
`build_context` over the full search, dense off as `[hooks] dense` is by default), with the
`[hooks]` defaults (`prompt_words` 120, `k` 20, `min_term_share` 0.3):

- answerable (categories 1-4, with evidence turns): the share whose injected memory names an
  evidence turn's note (evidence shown), the share injecting anything, the words injected;
- adversarial (category 5: a question about the other speaker's event) reported apart;
- absent: `bench_abstain.ABSENT`, questions about topics no conversation touches, asked once
  each: the share injecting anything (lower is better).

    python -m bench.bench_hooks_recall --locomo ../shared/data/locomo/locomo10.json \
        [--conversations N] [--vault DIR] [--path fts|engine] [--json OUT]

`--vault DIR` keeps the ingested vault there (reused when it exists: ingest takes ~15 s per
conversation on the 2-core machine).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness import HooksSection, prompt_memory, prompt_recall, refresh_hooks_index
from vault import Vault

from .bench_abstain import ABSENT

REPO = Path(__file__).resolve().parent.parent


def evidence_note(conversation: str, turn: str) -> str:
    """The note `rmh ingest` writes for LoCoMo turn `D3:7` of `conversation`."""
    session = turn.split(":", 1)[0].removeprefix("D")
    return f"conversations/{conversation}/S{session}/{conversation} {turn.replace(':', '-')}.md"


def build(locomo: Path, conversations: int, root: Path) -> None:
    """Ingest the first `conversations` of `locomo` into a new vault at `root` (the CLI)."""
    data = json.loads(locomo.read_text(encoding="utf-8"))[:conversations]
    part = root.parent / f"{root.name}-locomo.json"
    part.write_text(json.dumps(data), encoding="utf-8")
    for argv in (["init", "--no-dense"], ["ingest", str(part)]):
        subprocess.run([sys.executable, "-m", "harness", "--vault", str(root), *argv],
                       check=True, cwd=REPO, stdout=subprocess.DEVNULL)


def measure(v: Vault, locomo: Path, conversations: int, cfg: HooksSection, path: str
            ) -> dict[str, Any]:
    """The report (module docstring) for the vault `v` through the hook path `path`."""
    refresh_hooks_index(v)

    def ask(prompt: str) -> tuple[str, int]:
        if path == "engine":
            text = prompt_memory(v, prompt, cfg.prompt_words, k=cfg.k,
                                 min_share=cfg.min_term_share, session=None)
        else:
            text, _ = prompt_recall(v.root, prompt, cfg.prompt_words, k=cfg.k,
                             min_share=cfg.min_term_share)
        return text, len(text.split())

    groups: dict[str, list[tuple[bool, bool, int]]] = {"answerable": [], "adversarial": []}
    for conv in json.loads(locomo.read_text(encoding="utf-8"))[:conversations]:
        cid = str(conv["sample_id"])
        for qa in conv["qa"]:
            evidence = [str(e) for e in qa.get("evidence") or [] if ":" in str(e)]
            if not evidence:
                continue
            group = "adversarial" if int(qa["category"]) == 5 else "answerable"
            text, words = ask(str(qa["question"]))
            shown = any(evidence_note(cid, e.strip()) in text for e in evidence)
            groups[group].append((shown, bool(text), words))
    absent = [ask(q) for q in ABSENT]
    out: dict[str, Any] = {}
    for name, rows in groups.items():
        n = len(rows)
        out[name] = {"n": n, "evidence_shown": _share([r[0] for r in rows]),
                     "injected": _share([r[1] for r in rows]),
                     "words_mean": round(sum(r[2] for r in rows) / n, 1) if n else 0.0}
    out["absent"] = {"n": len(absent), "injected": _share([bool(a[0]) for a in absent])}
    out["config"] = {"prompt_words": cfg.prompt_words, "k": cfg.k, "path": path,
                     "min_term_share": cfg.min_term_share, "conversations": conversations}
    return out


def _share(flags: Sequence[bool]) -> float:
    return round(sum(flags) / len(flags), 4) if flags else 0.0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--locomo", type=Path, required=True)
    ap.add_argument("--conversations", type=int, default=10)
    ap.add_argument("--vault", type=Path, default=None)
    ap.add_argument("--path", choices=("fts", "engine"), default="fts")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = a.vault if a.vault is not None else Path(tmp) / "v"
        if not (root / ".rmh").is_dir():
            build(a.locomo, a.conversations, root)
        with Vault.open(root) as v:
            report = measure(v, a.locomo, a.conversations, HooksSection(), a.path)
    text = json.dumps(report, indent=1, sort_keys=True)
    if a.json is not None:
        a.json.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
