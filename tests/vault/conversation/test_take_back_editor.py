"""A stopped ingest takes back the notes it created (take_back.py). It checked a note's bytes,
then removed the file: an editor's save landing between the two (Obsidian writes a temp file
and renames it over the note) was removed with it, lost (NOTES-STORE6 "Still weak"). Now the
note is renamed aside before its bytes are checked (`Store.erase(expected_hash=)`): a save
that landed first is put back, one that lands after the rename lands beside it, kept.

The editor's save is made for real (a temp file in the note's folder, renamed over it) at the
very start of the removal, the latest instant the old check-then-remove could not see."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from vault import IngestStopped, Vault, cancellable, ingest_conversations, load_transcript
from vault.conversation.formats import Conversation
from vault.storage.store import Store

SAVED = "# My own words\nTyped in the editor while the ingest was being stopped.\n"


def conversation() -> Conversation:
    lines = [f"{'Alice' if i % 2 else 'Bob'}: message {i} about the garden plan for week {i}"
             for i in range(24)]
    (loaded,) = load_transcript("\n".join(lines), "text").conversations
    return Conversation("chat-editor", loaded.sessions)


def editor_save(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.editor-tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


@pytest.mark.parametrize("landed", [2, 5])
def test_an_editor_save_during_the_take_back_is_never_removed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, landed: int) -> None:
    root = tmp_path / "v"
    Vault.init(root, watch=False).close()
    folder = root / "conversations" / "chat-editor"
    real = Store.erase
    saved: list[str] = []

    def erase_racing(self: Store, path: str, *args: Any, **kwargs: Any) -> None:
        if not saved:  # the editor saves the first note taken back, right now
            editor_save(root / path, SAVED)
            saved.append(path)
        real(self, path, *args, **kwargs)

    monkeypatch.setattr(Store, "erase", erase_racing)

    def stop() -> bool:  # once `landed` notes of the conversation are on disk
        return folder.is_dir() and sum(1 for _ in folder.rglob("*.md")) >= landed

    with Vault.open(root, watch=False) as v, pytest.raises(IngestStopped), cancellable(stop):
        ingest_conversations(v, [conversation()], use_nlp=False)
    assert saved, "nothing was taken back"
    assert (root / saved[0]).read_text(encoding="utf-8") == SAVED  # the save is kept
    left = sorted(p.relative_to(root).as_posix() for p in folder.rglob("*.md"))
    assert left == [saved[0]]  # every other note taken back
    assert not [p for p in folder.rglob(".*") if "rmh-" in p.name]  # nothing set aside left
