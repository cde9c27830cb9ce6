"""Anchored reads (storage/anchored.py `open_note`, `stat_note`) fail typed on every path: a
folder on the way this process may not search is `permission_denied` (README), for a stat
as for a read, never a raw OSError; and no failing read or stat leaves a descriptor open."""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

import pytest

from vault import PermissionDenied, Vault
from vault.errors import VaultError


def refuse_folder(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """os.open refuses the folder `name` opened in its parent (EACCES), as the kernel does
    for a folder of mode 000 (root searches any folder, so the seam stands in for it)."""
    real_open = os.open

    def refusing(path: str, flags: int, *a: int, **k: int) -> int:
        if os.fsdecode(path) == name and k.get("dir_fd") is not None:
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real_open(path, flags, *a, **k)

    monkeypatch.setattr(os, "open", refusing)


def test_a_folder_this_process_may_not_search_is_permission_denied(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    v = Vault.init(tmp_path / "v")
    v.write("sub/a", "aaa\n")
    v.write("b", "bbb\n")
    refuse_folder(monkeypatch, "sub")
    for name in ("sub/a.md", "sub/never.md"):
        with pytest.raises(PermissionDenied) as caught:
            v.store.stat(name)
        assert caught.value.data() == {"path": name, "action": "read"}
        with pytest.raises(PermissionDenied):
            v.store.read_text(name)
    with pytest.raises(PermissionDenied):  # not indexed: the why-not-found stat
        v.read("sub/never")
    assert v.read("b").text == "bbb\n"
    v.close()


def test_failing_reads_and_stats_leave_no_descriptor_open(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    v = Vault.init(tmp_path / "v")
    v.write("sub/a", "aaa\n")
    v.write("real/b", "bbb\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text("outside\n")
    (v.root / "esc").symlink_to(outside)
    (v.root / "inlink").symlink_to(v.root / "real")
    (v.root / "loop.md").symlink_to(v.root / "loop.md")
    os.mkfifo(v.root / "fifo.md")
    (v.root / "dir.md").mkdir()
    (v.root / "file").write_text("a file, not a folder\n")
    names = ["none.md", "file/a.md", "esc/x.md", "inlink/b.md", "loop.md", "fifo.md",
             "dir.md", "nodir/a.md", "sub/a.md", "sub/none.md"]
    refuse_folder(monkeypatch, "sub")

    def open_fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    before = open_fds()
    for _ in range(20):
        for name in names:
            for op in (v.store.read_bytes, v.store.read_text, v.store.stat):
                with contextlib.suppress(VaultError):
                    op(name)
    assert open_fds() == before
    v.close()
