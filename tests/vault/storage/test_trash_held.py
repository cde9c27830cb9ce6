"""The trash is read through the vault's `.rmh` as the store holds it (state_anchor.py), never
through the name `.rmh`: a folder put at that name after the open (the held one renamed away,
between the check before a call and its read) is not the vault's state. Before (session 38,
HOUSE38), a recovered move's report of the trash copies an earlier run's fold replaced
(`intent_merge.folded_before`), an erasure's plan of the trash copies to remove and `rmh
restore`'s hint of where a deleted note went each read `root/.rmh/trash` by name: the
stranger's trash was reported, the vault's own copies not."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.commands.learn import _resolve_archived
from vault import NoteNotFound, Vault
from vault.notes.hashing import content_hash
from vault.storage.intent_merge import folded_before
from vault.storage.store import Store

MOVED = b"# Target\nThe moved note's text.\n"


def _swap_state(root: Path) -> None:
    """The held `.rmh` renamed away, another folder with a trash of its own put at its name."""
    os.rename(root / ".rmh", root / ".rmh-away")
    (root / ".rmh" / "trash" / "b").mkdir(parents=True)
    (root / ".rmh" / "trash" / "b" / "Target.md").write_bytes(b"a stranger's copy\n")


def test_the_fold_report_reads_the_held_trash(tmp_path: Path) -> None:
    root = tmp_path / "v"
    (root / ".rmh" / "trash" / "b").mkdir(parents=True)
    (root / "b").mkdir()
    (root / "b" / "Target.md").write_bytes(b"# Target\nAnother note made at the old name.\n")
    (root / ".rmh" / "trash" / "b" / "Target.md").write_bytes(MOVED)  # the fold's copy
    store = Store(root)
    _swap_state(root)
    planned = frozenset({content_hash(MOVED)})
    assert folded_before(store, "b/Target.md", planned) == [".rmh/trash/b/Target.md"]  # main: []
    (root / ".rmh-away" / "trash" / "b" / "Target.md").unlink()
    (root / ".rmh" / "trash" / "b" / "Target.md").write_bytes(MOVED)  # the stranger's
    assert folded_before(store, "b/Target.md", planned) == []  # main: the stranger's copy

def test_the_restore_hint_names_the_held_trash_copy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "v"
    root.mkdir()
    (root / "Gone.md").write_text("# Gone\nDeleted below.\n", encoding="utf-8")
    (root / "Kept.md").write_text("# Kept\n", encoding="utf-8")
    Vault.init(root).close()
    with Vault.open(root) as v:
        v.delete("Gone")
        real = v.resolve

        def resolve_then_swap(note: str, **kw: bool) -> int:
            try:
                return real(note, **kw)
            except NoteNotFound:  # right after the call's check: the state folder swapped
                _swap_state(root)
                raise

        monkeypatch.setattr(v, "resolve", resolve_then_swap)
        try:
            with pytest.raises(NoteNotFound) as gone:
                _resolve_archived(v, "Gone")
        finally:
            os.rename(root / ".rmh", root / ".rmh-stranger")
            os.rename(root / ".rmh-away", root / ".rmh")
    assert "'.rmh/trash/Gone.md'" in str(gone.value)  # main: no hint (the stranger has none)


def test_the_erasure_plan_lists_the_held_trash(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "v"
    root.mkdir()
    (root / "Alice.md").write_text("Alice bakes bread.\n", encoding="utf-8")
    (root / "Other.md").write_text("Nothing of hers.\n", encoding="utf-8")
    Vault.init(root).close()
    with Vault.open(root) as v:
        v.write("Old.md", "Alice's old note.\n")
        v.delete("Old")
        real = v.live.fresh
        swapped: list[bool] = []

        def fresh_then_swap() -> None:
            real()
            if not swapped:  # right after the call's check: the state folder swapped
                swapped.append(True)
                _swap_state(root)

        monkeypatch.setattr(v.live, "fresh", fresh_then_swap)
        try:
            todo = v.forget_plan(subject="Alice")
        finally:
            os.rename(root / ".rmh", root / ".rmh-stranger")
            os.rename(root / ".rmh-away", root / ".rmh")
    assert swapped and todo.notes == ("Alice.md",)
    assert todo.trash == ("Old.md",)  # main: () (the stranger's trash names no Alice)
