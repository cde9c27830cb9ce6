"""A stop that comes once half of a conversation's writes are made writes the rest first
(STORE8, session 33). A conflict in that rest (another program made a note at a path the
ingest writes later) used to leave the conversation half written: the conflict's retry is
refused once stopped (`Done.stopped`), and the notes written were neither taken back nor
finished (REV, session 33: 20 of 28 notes stayed). Now such a conflict takes them back, as
the stop would have, so the conversation is whole or absent, as the README promises, and the
note made by hand is kept as it was made."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault import IngestStopped, Vault, cancellable, ingest_conversations

from .test_take_back_editor import conversation

HAND = "# Mine\nA note I made here by hand.\n"


def test_a_conflict_after_a_late_stop_leaves_the_conversation_whole_or_absent(
        tmp_path: Path) -> None:
    whole = tmp_path / "whole"
    Vault.init(whole, watch=False).close()
    with Vault.open(whole, watch=False) as v:
        order = list(ingest_conversations(v, [conversation()], use_nlp=False).written)
    total, later = len(order), order[-8]  # a note the ingest writes well after half
    root = tmp_path / "v"
    Vault.init(root, watch=False).close()
    folder = root / "conversations" / "chat-editor"

    def stop() -> bool:  # past half of the writes: the hand note made at `later`, then stop
        if not folder.is_dir() or sum(1 for _ in folder.rglob("*.md")) <= total // 2:
            return False
        (root / later).parent.mkdir(parents=True, exist_ok=True)
        if not (root / later).exists():
            (root / later).write_text(HAND, encoding="utf-8")
        return True

    with Vault.open(root, watch=False) as v, pytest.raises(IngestStopped) as stopped, \
            cancellable(stop):
        ingest_conversations(v, [conversation()], use_nlp=False)
    Vault.open(root, watch=False).close()  # the next open: a journal left would finish it
    assert (root / later).read_text(encoding="utf-8") == HAND  # the hand note kept
    ours = {p.relative_to(root).as_posix() for p in folder.rglob("*.md")} - {later}
    assert ours in (set(), set(order) - {later}), f"{len(ours)} of {total - 1} notes left"
    assert set(stopped.value.written) == ours  # it names what stayed
