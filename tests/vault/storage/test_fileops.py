"""fileops.open_regular: rmh's own files are read only when they are regular files; a FIFO,
a device or a folder in their place is an OSError at once, never a wait or an endless read."""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from vault.storage.fileops import open_regular, replace_whole


def test_a_regular_file_and_a_link_to_one_are_read(tmp_path: Path) -> None:
    (tmp_path / "a").write_bytes(b"abc")
    (tmp_path / "link").symlink_to("a")
    for name in ("a", "link"):
        with open_regular(tmp_path / name) as fh:
            assert fh.read() == b"abc"


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_other_kinds_of_file_are_refused_at_once(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "x.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        path.symlink_to("/dev/zero")
    else:
        path.mkdir()
    with pytest.raises(OSError) as got:
        open_regular(path)
    assert got.value.errno == errno.EINVAL


def test_an_absent_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        open_regular(tmp_path / "none")


@pytest.mark.skipif(os.geteuid() != 0, reason="becoming another user needs root")
def test_a_checked_replace_in_a_folder_its_writer_cannot_read_still_lands() -> None:
    """`replace_whole(still=...)` locks the folder by opening it for reading; a user who may
    write `.rmh/` but not read it (mode -wx) could not open it, and every checked save was
    dropped (the note store built again by every process). It now runs unlocked there."""
    base = Path(tempfile.mkdtemp())
    try:
        base.chmod(0o711)
        folder = base / "state"
        folder.mkdir()
        os.chown(folder, 65534, 65534)
        folder.chmod(0o300)
        pid = os.fork()
        if pid == 0:  # the child: another user, who may write the folder but not list it
            code = 3
            try:
                os.setgid(65534)
                os.setuid(65534)
                code = 0 if replace_whole(folder / "x.bin", [b"data"], None, lambda: True) else 4
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert (folder / "x.bin").read_bytes() == b"data"
    finally:
        shutil.rmtree(base)
