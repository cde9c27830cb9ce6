"""A delete run again after a kill between its trash link and its unlink reuses the trash entry
that is the very file (STORE10) and removes the note's name. Between the check that the name
is that file and the unlink an editor (no lock) may save the note by rename: before FIX36 the
unlink by name then removed the editor's new file, its bytes found nowhere (a lost save). Now
the name is renamed aside and checked there (storage/removal.py `_unlinked`): the save is
kept. The editor's save is made at the exact point by wrapping the real inode check."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.vault.editor_saves import saving_after_check
from vault.storage import removal
from vault.storage.store import TRASH_DIR, Store


def _vault(tmp_path: Path) -> tuple[Store, Path]:
    vault = tmp_path / "vault"
    (vault / ".rmh" / "trash" / "sub").mkdir(parents=True)
    (vault / "sub").mkdir()
    note = vault / "sub" / "b.md"
    note.write_text("before the delete\n", encoding="utf-8")
    os.link(note, vault / TRASH_DIR / "sub" / "b.md")  # a delete killed after its link
    return Store(vault), note


def _everything(root: Path) -> list[str]:
    return sorted(p.read_text(encoding="utf-8") for p in root.rglob("*")
                  if p.is_file() and (p.suffix == ".md" or p.name.startswith(".b.md")))


def test_an_editor_save_between_the_check_and_the_unlink_is_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, note = _vault(tmp_path)
    monkeypatch.setattr(removal, "_same_file", saving_after_check(
        note, "the editor's save\n", removal._same_file))
    store.trash("sub/b.md")
    texts = _everything(tmp_path / "vault")
    assert "the editor's save\n" in texts, texts  # main: lost (the unlink took it)
    assert "before the delete\n" in texts, texts


def test_without_a_save_the_rerun_reuses_the_entry_and_removes_the_name(
        tmp_path: Path) -> None:
    store, note = _vault(tmp_path)
    assert store.trash("sub/b.md") == "sub/b.md"
    assert not note.exists()
    assert _everything(tmp_path / "vault") == ["before the delete\n"]
    assert not [p for p in note.parent.iterdir()]  # nothing aside left


def test_a_delete_killed_with_the_name_aside_is_finished_by_the_next_sweep(
        tmp_path: Path) -> None:
    """A delete killed after renaming the note's name aside, before its unlink (FIX37: a
    delete's first unlink goes this way too): the aside is the very file of the trash entry,
    so the next open's sweep removes it (the unlink it stood for) instead of putting the note
    back beside its own trash entry."""
    store, note = _vault(tmp_path)
    pid = 4_194_305  # above Linux's highest pid_max: no process has it
    aside = note.with_name(f".b.md.rmh-tmp-aside-{pid}-0")
    note.rename(aside)
    assert store.clean_stale_temps() == ["sub/" + aside.name]
    assert not note.exists() and not aside.exists()
    assert _everything(tmp_path / "vault") == ["before the delete\n"]
