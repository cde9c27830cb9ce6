"""An editor saving a note the way editors save (its text to a hidden temporary beside it,
renamed over the note), at an exact point of a vault's own file operations: for the tests of
a move's or a delete's window against such a save."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

from vault import Vault

SameFile = Callable[[int, str, int, str], bool]  # storage/removal.py `_same_file`


def save_as_editor(note: Path, text: str) -> None:
    """`text` to `.NAME.swp` beside `note` (its folder made again if gone), renamed over it."""
    tmp = note.with_name(f".{note.name}.swp")
    tmp.parent.mkdir(exist_ok=True)
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(note)


@contextlib.contextmanager
def saving_after_op(v: Vault, note: Path, text: str, at: int) -> Iterator[None]:
    """While open: the editor saves `note` right after `v`'s store's `at`-th file operation
    from now (its `count_op` wrapped; the real one put back on exit)."""
    counted, start = v.store.count_op, v.store.ops

    def editor_saves() -> None:
        counted()
        if v.store.ops - start == at:
            save_as_editor(note, text)

    v.store.count_op = editor_saves  # type: ignore[method-assign]
    try:
        yield
    finally:
        v.store.count_op = counted  # type: ignore[method-assign]


def saving_after_check(note: Path, text: str, real: SameFile) -> SameFile:
    """The real inode check `real`, after whose first "the very file" the editor saves
    `note` (between the check and the unlink it stands for)."""
    saved: list[bool] = []

    def checked(sfd: int, name: str, dfd: int, other: str) -> bool:
        same = real(sfd, name, dfd, other)
        if same and not saved:
            saved.append(True)
            save_as_editor(note, text)
        return same

    return checked
