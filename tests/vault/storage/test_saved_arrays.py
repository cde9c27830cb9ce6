"""Reading rmh's derived `.npz`/`.npy` files (saved_arrays.py): a file numpy fails on in
any way, not only with the errors the readers used to name, reads as None (the value is then
computed again), never an exception. Each damage below is one numpy raises an unexpected
kind of error for: NotImplementedError, tokenize.TokenError."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pytest

from vault.storage import private_copy, saved_arrays
from vault.storage.fileops import open_regular
from vault.storage.saved_arrays import map_npy, read_npz


def raise_zip_version(path: Path) -> None:
    """Set the 'version needed to extract' of every central-directory entry of the zip at
    `path` past what Python's zipfile reads (it raises NotImplementedError)."""
    raw = bytearray(path.read_bytes())
    at = raw.find(b"PK\x01\x02")
    assert at >= 0
    while at >= 0:
        raw[at + 6:at + 8] = b"\xff\x00"
        at = raw.find(b"PK\x01\x02", at + 4)
    path.write_bytes(bytes(raw))


def tear_npy_header(path: Path) -> None:
    """Open a bracket in the `.npy` header's dict literal (numpy's header parser then
    raises tokenize.TokenError)."""
    raw = bytearray(path.read_bytes())
    end = raw.index(b"}")
    raw[end:end + 1] = b"("
    path.write_bytes(bytes(raw))


def test_a_zip_of_an_unknown_version_reads_as_none(tmp_path: Path) -> None:
    path = tmp_path / "a.npz"
    np.savez(path, x=np.arange(3))
    assert read_npz(path, lambda z: z["x"].tolist()) == [0, 1, 2]
    raise_zip_version(path)
    assert read_npz(path, lambda z: z["x"].tolist()) is None


def test_a_torn_npy_header_maps_as_none(tmp_path: Path) -> None:
    path = tmp_path / "a.npy"
    np.save(path, np.ones((2, 3), np.float32))
    got = map_npy(path)
    assert got is not None and got.shape == (2, 3)
    del got
    tear_npy_header(path)
    assert map_npy(path) is None


def test_absent_files_read_as_none(tmp_path: Path) -> None:
    assert read_npz(tmp_path / "none.npz", lambda z: 1) is None
    assert map_npy(tmp_path / "none.npy") is None


def _swap_after_check(monkeypatch: pytest.MonkeyPatch, path: Path,
                      put: Callable[[Path], None]) -> list[bool]:
    """Make `open_regular` (as `saved_arrays` and `private_copy`, map_npy's opener, call it)
    replace the file at `path` (`put(path)` makes the replacement) right after it checked
    and opened it: the moment a reader that opens the path again reads whatever is there
    now. The list holds True once swapped."""
    real = open_regular
    swapped: list[bool] = []

    def open_then_swap(name: str | Path) -> BinaryIO:
        fh = real(name)
        if not swapped:
            path.rename(path.with_name("checked.npy"))
            put(path)
            swapped.append(True)
        return fh

    monkeypatch.setattr(saved_arrays, "open_regular", open_then_swap)
    monkeypatch.setattr(private_copy, "open_regular", open_then_swap)
    return swapped


def test_a_file_swapped_after_the_check_is_not_read(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Another `.npy` put in place after the check: the checked file's rows are mapped."""
    path = tmp_path / "a.npy"
    np.save(path, np.arange(6, dtype=np.float32).reshape(2, 3))
    swapped = _swap_after_check(monkeypatch, path,
                                lambda p: np.save(p, np.full((4, 4), 7.0, np.float32)))
    got = map_npy(path)
    assert swapped and got is not None
    assert got.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_a_fifo_swapped_in_after_the_check_is_never_opened(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A FIFO put in place after the check: no open of it (which waits for a writer). A
    thread opens it for writing after 3 s, so a reader that did open it returns then (with
    what it read) instead of hanging the suite."""
    path = tmp_path / "a.npy"
    np.save(path, np.ones((2, 2), np.float32))
    swapped = _swap_after_check(monkeypatch, path, os.mkfifo)
    done = threading.Event()

    def release() -> None:
        if not done.wait(3.0):
            fd = os.open(path, os.O_WRONLY)
            os.write(fd, b"\x93NUMPY garbage")
            os.close(fd)

    writer = threading.Thread(target=release)
    writer.start()
    start = time.monotonic()
    got = map_npy(path)
    waited = time.monotonic() - start
    done.set()
    writer.join()
    assert swapped and got is not None and got.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert waited < 2.0


SWAPPER = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b, stop = (p.encode() for p in sys.argv[1:4])
print("ready", flush=True)
while not os.path.exists(stop):
    if libc.renameat2(-100, a, -100, b, 2) != 0:
        sys.exit(f"renameat2: errno {ctypes.get_errno()}")
"""


READER = """
import sys
from vault.storage.saved_arrays import map_npy
seen = set()
for _ in range(2000):
    arr = map_npy(sys.argv[1])
    seen.add(None if arr is None else str(arr.tolist()))
print(sorted(map(str, seen)))
"""


def test_a_process_swapping_the_file_for_a_fifo_never_stops_a_reader(tmp_path: Path) -> None:
    """A real process exchanges the `.npy` and a FIFO (renameat2 RENAME_EXCHANGE) in a tight
    loop while another maps it 2,000 times: each map is the true rows or None, and the reader
    ends (one that opened the FIFO would wait for a writer forever: killed at 60 s)."""
    path, fifo, stop = tmp_path / "a.npy", tmp_path / "fifo", tmp_path / "stop"
    np.save(path, np.arange(4, dtype=np.int64))
    os.mkfifo(fifo)
    swapper = subprocess.Popen([sys.executable, "-c", SWAPPER, str(path), str(fifo),
                                str(stop)], stdout=subprocess.PIPE, text=True)
    try:
        assert swapper.stdout is not None and swapper.stdout.readline() == "ready\n"
        reader = subprocess.run([sys.executable, "-c", READER, str(path)], timeout=60,
                                capture_output=True, text=True, check=True,
                                cwd=Path(__file__).resolve().parents[3])
    finally:
        stop.touch()
        swapper.wait(timeout=30)
    assert swapper.returncode == 0
    # the true rows or None (the swapper may win every time on a loaded machine), never other
    assert reader.stdout.strip() in ("['None', '[0, 1, 2, 3]']", "['[0, 1, 2, 3]']", "['None']")
