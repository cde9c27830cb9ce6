"""harness.hooks_recall: one prompt (or one session-start brief) reads the hooks' index
through one SQLite connection, whatever it asks of it: the term counts, the search, the
dated notes, each recalled turn's turn before."""

from __future__ import annotations

import random
import sqlite3
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from harness.hooks_index import refresh, remember_used
from harness.hooks_recall import brief, recall
from vault import Vault

WORDS = ["kiln", "glaze", "vase", "clay", "wheel", "oven", "paint", "brush", "canvas", "easel"]


def _turn(conv: str, i: int, text: str) -> str:
    previous = f'previous: "[[conversations/{conv}/{conv} T{i - 1}]]"\n' if i else ""
    return (f"---\ntier: L0\nspeaker: Ann\nconversation: {conv}\ndate: 2024-05-0{1 + i % 9}\n"
            f"{previous}---\nAnn: {text}\n")


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    """A vault of conversation turns (each naming the turn before) and plain notes, dated
    over nine days of May 2024, with the hooks' index built."""
    rng = random.Random(21)
    root = tmp_path / "v"
    with Vault.init(root) as v:
        for conv in ("c1", "c2"):
            for i in range(12):
                v.write(f"conversations/{conv}/{conv} T{i}.md",
                        _turn(conv, i, " ".join(rng.choices(WORDS, k=rng.randint(3, 9)))))
        for i in range(10):
            v.write(f"n{i}.md", f"---\ndate: 2024-05-0{1 + i % 9}\n---\n"
                    + " ".join(rng.choices(WORDS, k=rng.randint(2, 8))) + ".\n")
        v.sync()
        refresh(v)
    return root


class _Counting:
    def __init__(self) -> None:
        self.calls = 0
        self._real = sqlite3.connect

    def __call__(self, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        self.calls += 1
        conn: sqlite3.Connection = self._real(*args, **kwargs)
        return conn


def test_one_prompt_opens_one_connection(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(5)
    counting = _Counting()
    monkeypatch.setattr(sqlite3, "connect", counting)
    prompts = ["What about the " + " and ".join(rng.sample(WORDS, rng.randint(1, 4))) + "?"
               for _ in range(20)]
    prompts += ["What happened on 3 May 2024?", "What did we talk about on 8 May 2024?"]
    shown_turns_before = 0
    for prompt in prompts:
        before = counting.calls
        _, notes = recall(root, prompt, 400, k=10, min_share=0.2)
        assert counting.calls - before == 1, prompt
        shown_turns_before += sum(a.endswith(" T0.md") and b.endswith(" T1.md")
                                  for a, b in pairwise(notes))
    assert shown_turns_before  # turns were recalled with the turn before them
    remember_used(root, ["n1.md", "n2.md", "gone.md"])
    before = counting.calls
    assert "Used lately: n1.md; n2.md" in brief(root, str(root.parent / "kiln-glaze"), 200)
    assert counting.calls - before == 1


def test_no_index_no_connection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    counting = _Counting()
    monkeypatch.setattr(sqlite3, "connect", counting)
    assert recall(tmp_path, "the kiln and the glaze", 80, k=5, min_share=0.3) == ("", [])
    assert brief(tmp_path, str(tmp_path / "kiln"), 80) == ""
    assert counting.calls == 0
