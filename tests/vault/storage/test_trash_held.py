"""The trash is read through the vault's `.rmh` as the store holds it (state_anchor.py), never
through the name `.rmh`: a folder put at that name after the open (the held one renamed away,
between the check before a call and its read) is not the vault's state. Before (session 38,
HOUSE38), a recovered move's report of the trash copies an earlier run's fold replaced
(`intent_merge.folded_before`), an erasure's plan of the trash copies to remove and `rmh
restore`'s hint of where a deleted note went each read `root/.rmh/trash` by name: the
stranger's trash was reported, the vault's own copies not."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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

def test_the_restore_hint_names_the_held_trash_copy(tmp_path: Path) -> None:
    root = tmp_path / "v"
    with _vault_with_trash(root, {"Kept.md": "# Kept\n"}, "Gone.md") as v, \
            _state_swapped_after(v, "resolve", root) as swapped, \
            pytest.raises(NoteNotFound) as gone:  # swapped once the name was not found
        _resolve_archived(v, "Gone")
    assert swapped and "'.rmh/trash/Gone.md'" in str(gone.value)  # main: no hint (the
    # stranger's trash has no Gone.md)


def test_the_erasure_plan_lists_the_held_trash(tmp_path: Path) -> None:
    root = tmp_path / "v"
    with _vault_with_trash(root, {"Alice.md": "Alice bakes bread.\n",
                                  "Other.md": "Nothing of hers.\n"}, "Old.md") as v, \
            _state_swapped_after(v.live, "fresh", root) as swapped:  # after the call's check
        todo = v.forget_plan(subject="Alice")
    assert swapped and todo.notes == ("Alice.md",)
    assert todo.trash == ("Old.md",)  # main: () (the stranger's trash names no Alice)


def _vault_with_trash(root: Path, notes: dict[str, str], deleted: str) -> Vault:
    """The vault of `notes` at `root`, open, and a note `deleted` (naming Alice) written
    and deleted: its file in the trash."""
    root.mkdir()
    for path, text in notes.items():
        (root / path).write_text(text, encoding="utf-8")
    Vault.init(root).close()
    v = Vault.open(root)
    v.write(deleted, "Alice's old note.\n")
    v.delete(deleted.removesuffix(".md"))
    return v


@contextlib.contextmanager
def _state_swapped_after(owner: object, method: str, root: Path) -> Iterator[list[bool]]:
    """While open: `.rmh` swapped (`_swap_state`) right after the first call of `owner`'s
    `method` (wrapped: the real one, then the swap, whether it returned or raised); the
    method and `.rmh` put back on exit. Yields a list that holds True once swapped."""
    real = getattr(owner, method)
    swapped: list[bool] = []

    def then_swap(*args: Any, **kwargs: Any) -> Any:
        try:
            return real(*args, **kwargs)
        finally:
            if not swapped:
                swapped.append(True)
                _swap_state(root)

    setattr(owner, method, then_swap)
    try:
        yield swapped
    finally:
        setattr(owner, method, real)
        if swapped:
            os.rename(root / ".rmh", root / ".rmh-stranger")
            os.rename(root / ".rmh-away", root / ".rmh")


def test_the_restore_hint_follows_no_symlink_at_the_trash(tmp_path: Path) -> None:
    """`.rmh/trash` itself a symlink to a folder elsewhere: its files are no trash copies
    (before, HOUSE38: `os.walk` follows its top, so the hint named them as `.rmh/trash/...`
    though the comment said it followed no symlink)."""
    root, elsewhere = tmp_path / "v", tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "Gone.md").write_text("not the vault's\n", encoding="utf-8")
    with _vault_with_trash(root, {"Kept.md": "# Kept\n"}, "Other.md") as v:
        shutil.rmtree(root / ".rmh" / "trash")
        os.symlink(elsewhere, root / ".rmh" / "trash")
        with pytest.raises(NoteNotFound) as gone:
            _resolve_archived(v, "Gone")
    assert "trash" not in str(gone.value)  # main: names '.rmh/trash/Gone.md'
