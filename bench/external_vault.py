"""A real vault and its questions for bench/bench_learning_agents.py (`--vault`, `--questions`).

The vault is a folder of Markdown notes (e.g. the Obsidian help vault, issue 31, rebuilt by
bench/obsidian_help.py from its fetched notes); it is copied
into the run's scratch folder, so the agents' answer notes and the ledger never touch it. Its
dot-folders (`.obsidian`, `.rmh`, `.git`, ...) and non-Markdown files are left out.

The questions file (bench/data/obsidian_help_questions.json is the one for the help vault) is
JSON: `related`, each `{"id", "question", "paraphrase", "gold": [paths]}`, the training
questions with their held-out wording; `unrelated`, each `{"id", "question", "gold"}`, asked as
written, whose gold notes no related question has. Gold paths are relative to the vault root.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.datasets import Question


@dataclass(frozen=True)
class External:
    where: dict[int, str]  # evidence id -> vault path
    related: list[Question]
    unrelated: list[Question]
    wording: dict[str, str]  # training question -> its held-out paraphrase

    def reword(self, text: str) -> str:
        """The held-out wording of a related question; an unrelated one as written."""
        return self.wording.get(text, text)


def copy_notes(vault: Path, root: Path) -> int:
    """Every Markdown note of `vault` outside its dot-folders, to `root`; returns how many."""
    n = 0
    for src in sorted(vault.rglob("*.md")):
        rel = src.relative_to(vault)
        if any(part.startswith(".") for part in rel.parts):
            continue
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
        n += 1
    return n


def load(vault: Path, questions: Path, root: Path) -> External:
    """Copies `vault` to `root` and reads `questions` against it (module docstring). Raises
    ValueError for a gold path the vault lacks, a related question without a paraphrase, or an
    unrelated question sharing a gold note with a related one."""
    if copy_notes(vault, root) == 0:
        raise ValueError(f"no Markdown notes in {vault}")
    (root / ".rmh").mkdir(exist_ok=True)
    data: dict[str, Any] = json.loads(questions.read_text(encoding="utf-8"))
    items = [("related", q) for q in data["related"]] + [("unrelated", q)
                                                          for q in data["unrelated"]]
    paths = sorted({g for _, q in items for g in q["gold"]})
    missing = [p for p in paths if not (root / p).is_file()]
    if missing:
        raise ValueError(f"gold notes not in the vault: {missing}")
    index = {p: i for i, p in enumerate(paths)}
    asked = {kind: [Question(q["id"], q["question"], kind,
                             frozenset(index[g] for g in q["gold"])) for k, q in items
                    if k == kind] for kind in ("related", "unrelated")}
    trained = frozenset().union(*(q.evidence for q in asked["related"]))
    shared = [q.qid for q in asked["unrelated"] if q.evidence & trained]
    if shared:
        raise ValueError(f"unrelated questions share gold notes with related ones: {shared}")
    wording = {q["question"]: q.get("paraphrase", "") for q in data["related"]}
    if not all(wording.values()):
        raise ValueError("every related question needs a paraphrase")
    return External(dict(enumerate(paths)), asked["related"], asked["unrelated"], wording)
