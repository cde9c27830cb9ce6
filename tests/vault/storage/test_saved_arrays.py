"""Reading rmh's derived `.npz`/`.npy` files (saved_arrays.py): a file numpy fails on in
any way, not only with the errors the readers used to name, reads as None (the value is then
computed again), never an exception. Each damage below is one numpy raises an unexpected
kind of error for: NotImplementedError, tokenize.TokenError."""

from __future__ import annotations

from pathlib import Path

import numpy as np

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
