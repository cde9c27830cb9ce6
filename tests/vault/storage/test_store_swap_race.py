"""A guarded write (`Store.write_text(expected_hash=)`) racing an editor that saves in place
(open, truncate, write the same size): the editor's save never disappears under a write that
reports success. The identity recheck and the rename were two steps; a save between them was
replaced unseen (NOTES-MOVE3 §5: 7 of 3000 races on main). Now the swap is an atomic
exchange whose replaced file is checked (storage/fileops.py `swap_in`)."""

from __future__ import annotations

import hashlib
import os
import threading
import time
from pathlib import Path

import pytest

from vault.errors import EditConflict
from vault.storage.fileops import swap_in
from vault.storage.store import Store

BASE, THEIRS, OURS = "a" * 4000 + "\n", "b" * 4000 + "\n", "c" * 4000 + "\n"


def test_a_swap_judged_changed_puts_their_file_back(tmp_path: Path) -> None:
    (tmp_path / "n.md").write_text(THEIRS, encoding="utf-8")
    (tmp_path / ".n.tmp").write_text(OURS, encoding="utf-8")
    seen: list[str] = []
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        def unchanged() -> bool:  # what the swap replaced: the file that was at n.md
            seen.append((tmp_path / ".n.tmp").read_text(encoding="utf-8"))
            return False
        assert not swap_in(".n.tmp", "n.md", fd, unchanged)
        assert swap_in(".n.tmp", "gone.md", fd, lambda: True) is False  # nothing to swap
    finally:
        os.close(fd)
    assert (tmp_path / "n.md").read_text(encoding="utf-8") == THEIRS
    assert seen in ([THEIRS], [])  # [] where the system cannot exchange: a plain replace


@pytest.mark.slow
def test_an_editor_saving_in_place_is_never_replaced_unseen(tmp_path: Path) -> None:
    (tmp_path / ".rmh").mkdir()
    store = Store(tmp_path)
    path = tmp_path / "n.md"
    expected = hashlib.sha256(BASE.encode()).hexdigest()
    lost = 0
    for i in range(1500):
        path.write_text(BASE, encoding="utf-8")
        go, landed = threading.Event(), list[bool]()

        def editor(delay: float = (i % 50) * 0.00004, go: threading.Event = go,
                   landed: list[bool] = landed) -> None:
            go.wait()
            time.sleep(delay)  # 0..2 ms into the guarded write: across its steps
            with open(path, "r+b") as fh:
                fh.truncate(0)
                fh.write(THEIRS.encode())
                fh.flush()
                landed.append(os.stat(path).st_ino == os.fstat(fh.fileno()).st_ino)

        thread = threading.Thread(target=editor)
        thread.start()
        go.set()
        try:
            store.write_text("n.md", OURS, expected_hash=expected)
            written = True
        except EditConflict:
            written = False
        thread.join()
        # their save landed in the note's file before the swap, the write succeeded anyway,
        # and their bytes are gone
        lost += written and landed[0] and path.read_text(encoding="utf-8") != THEIRS
    assert lost == 0
