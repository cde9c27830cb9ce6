"""private_copy.py: every store a process maps for its lifetime (`note_store.load`,
`mapped_arrays.read`, `saved_arrays.map_npy`) is mapped from a private unnamed copy, so a
truncation or an in-place rewrite of the store's file by another program afterwards changes
nothing the process reads (it was SIGBUS on the first touch past the new end: the process
died); where no temporary can be made in the folder the copy is in memory, and where no copy
at all can be made, the store itself is opened as before."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from vault.storage import private_copy

ROOT = Path(__file__).resolve().parents[3]

# A child process (SIGBUS kills the interpreter, so not this one): writes one store with the
# reader's own writer, loads it, damages the file, then reads every byte of what it loaded.
CHILD = r"""
import hashlib, os, sys
from pathlib import Path
import numpy as np
from vault.storage import mapped_arrays, note_store, saved_arrays
from vault.storage.columns import Digests

reader, damage, at = sys.argv[1], sys.argv[2], float(sys.argv[3])
folder = Path(sys.argv[4])
rng = np.random.default_rng(7)
if reader == "mapped_arrays":
    path = folder / "a.bin"
    mapped_arrays.write(path, b"RMHTEST1", {"k": 1}, {
        "x": rng.standard_normal(300_000).astype(np.float32),
        "y": rng.integers(0, 9, size=(5_000, 7), dtype=np.int64)})
    _, got = mapped_arrays.read(path, b"RMHTEST1")
    parts = [got["x"], got["y"]]
elif reader == "map_npy":
    path = folder / "a.npy"
    np.save(path, rng.standard_normal((2_000, 384)).astype(np.float32))
    parts = [saved_arrays.map_npy(path)]
else:
    path = folder / note_store.FILE
    n = 3_000
    cols = note_store.Columns(
        ids=list(range(1, n + 1)), paths=[f"p/{i}.md" for i in range(n)],
        titles=[f"T{i}" for i in range(n)], aliases=[() for _ in range(n)],
        bodies=["body " * (i % 97) for i in range(n)], frontmatter=[{} for _ in range(n)],
        content_hashes=Digests(bytes(32 * n)), src=np.arange(n - 1, dtype=np.int32),
        dst=np.arange(1, n, dtype=np.int32), target_hashes=np.zeros(0, np.int64),
        target_sources=np.zeros(0, np.int64))
    assert note_store.save(folder, "key", 1, cols, ["{}"] * n, ["[]"] * n)
    got = note_store.load(folder, "key")
    parts = [got.src, got.dst, got.paths, got.bodies, got.titles]


def digest() -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(np.ascontiguousarray(p).tobytes() if isinstance(p, np.ndarray)
                 else repr(list(p)).encode())  # every item read again
    return h.hexdigest()


before = digest()
size = path.stat().st_size
if damage == "truncate":
    os.truncate(path, int(size * at))
else:
    with open(path, "r+b") as fh:
        fh.seek(int(size * at))
        fh.write(b"\x5a" * max(1, size // 10))
assert digest() == before, "the loaded store changed under the process"
print("same")
"""


@pytest.mark.parametrize("reader", ["mapped_arrays", "map_npy", "note_store"])
@pytest.mark.parametrize(("damage", "at"), [("truncate", 0.0), ("truncate", 0.5),
                                            ("truncate", 0.97), ("rewrite", 0.0),
                                            ("rewrite", 0.6)])
def test_a_loaded_store_is_untouched_by_its_file_truncated_or_rewritten(
        tmp_path: Path, reader: str, damage: str, at: float) -> None:
    r = subprocess.run([sys.executable, "-c", CHILD, reader, damage, str(at), str(tmp_path)],
                       capture_output=True, text=True, cwd=ROOT, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, (r.returncode, r.stderr[-600:])  # -7: SIGBUS
    assert r.stdout.strip() == "same"


def _store(tmp_path: Path, size: int = 300_000) -> tuple[Path, bytes]:
    data = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8).tobytes()
    path = tmp_path / "store.bin"
    path.write_bytes(data)
    return path, data


def _refuse(*_: Any, **__: Any) -> Any:
    raise PermissionError(errno.EACCES, "refused")


@pytest.mark.parametrize("where", ["folder", "memory"])
def test_the_copy_has_no_name_and_keeps_its_bytes(tmp_path: Path, where: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    path, data = _store(tmp_path)
    if where == "memory":  # a read-only `.rmh/`, a full disk: no temporary in the folder
        monkeypatch.setattr(tempfile, "TemporaryFile", _refuse)
    with private_copy.open_private(path) as fh:
        assert os.fstat(fh.fileno()).st_ino != path.stat().st_ino
        assert os.fstat(fh.fileno()).st_nlink == 0
        assert sorted(os.listdir(tmp_path)) == ["store.bin"]
        os.truncate(path, 0)
        assert fh.read() == data


def test_without_any_copy_the_store_itself_is_opened(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    path, data = _store(tmp_path)
    monkeypatch.setattr(tempfile, "TemporaryFile", _refuse)
    monkeypatch.setattr(os, "memfd_create", _refuse)
    with private_copy.open_private(path) as fh:
        assert os.fstat(fh.fileno()).st_ino == path.stat().st_ino
        assert fh.read() == data


@pytest.mark.parametrize("bound", [-1, 0, 1])
def test_a_store_over_the_bound_is_the_store_itself(tmp_path: Path, bound: int,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Past `COPY_MAX` (the 10^6 vault's stores) the store is mapped as it is; at the bound and
    under it, a copy."""
    path, data = _store(tmp_path)
    monkeypatch.setattr(private_copy, "COPY_MAX", len(data) + bound)
    with private_copy.open_private(path) as fh:
        same = os.fstat(fh.fileno()).st_ino == path.stat().st_ino
        assert same == (bound < 0)
        assert fh.read() == data


@pytest.mark.parametrize("refused", [("copy_file_range",), ("copy_file_range", "sendfile")])
def test_a_kernel_refusing_a_way_to_copy_gets_the_next(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refused: tuple[str, ...]) -> None:
    """`copy_file_range` across file systems (EXDEV), `sendfile` to a file off Linux
    (ENOTSOCK): `sendfile`, then `pread` and `write`."""
    path, data = _store(tmp_path, 40_000_001)  # more than one pread
    calls: list[str] = []

    def refuse(name: str, code: int) -> Any:
        def call(*_: Any) -> int:
            calls.append(name)
            raise OSError(code, name)
        return call

    for name, code in zip(refused, (errno.EXDEV, errno.ENOTSOCK), strict=False):
        monkeypatch.setattr(os, name, refuse(name, code))
    with private_copy.open_private(path) as fh:
        assert os.fstat(fh.fileno()).st_nlink == 0
        assert fh.read() == data
    assert calls == list(refused)  # each refused once, then not asked again


@pytest.mark.parametrize("size", [0, 1, 4096, 300_001])
def test_a_store_that_ends_sooner_than_its_size_gives_a_short_copy(tmp_path: Path,
                                                                   size: int) -> None:
    """Truncated between the size read and the copy: the copy is what is left (the reader's
    size and CRC checks then refuse it, as any damaged store), never an error or a hang."""
    path, data = _store(tmp_path, size)
    with open(path, "rb") as src, tempfile.TemporaryFile(dir=tmp_path) as dst:
        private_copy._copy(src.fileno(), dst.fileno(), size + 12_345)
        dst.seek(0)
        assert dst.read() == data
