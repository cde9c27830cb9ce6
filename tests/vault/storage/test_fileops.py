"""fileops.open_regular: rmh's own files are read only when they are regular files; a FIFO,
a device or a folder in their place is an OSError at once, never a wait or an endless read."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from vault.storage.fileops import open_regular


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
