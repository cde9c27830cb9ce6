"""The hooks' journal keeps a prompt's first PROMPT_CHARS characters: a prompt cut in the
middle of an erased note's line held no whole needle, so `forget` kept its journal line, with
the line's first half. Now it goes, as a line naming an erased string does
(tests/vault/test_erasure_cut_query.py: the event log's queries)."""

from __future__ import annotations

from pathlib import Path

from harness import hooks_index
from tests.vault.test_erasure_cut_query import LINE, _cut_query


def test_a_prompt_cut_into_an_erased_line_leaves_the_hooks_journal(tmp_path: Path) -> None:
    root = tmp_path / "v"
    (root / ".rmh").mkdir(parents=True)
    hooks_index.journal_shown(root, "s1", _cut_query(LINE), ["keep.md"])
    hooks_index.journal_shown(root, "s1", "tomatoes and basil " * 40, ["keep.md"])
    hooks_index.forget(root, [LINE, "diary.md"])
    kept = hooks_index.take_shown(root, "s1")
    assert [p[:8] for p, _ in kept] == ["tomatoes"]
