"""mapped_arrays.py: named arrays written whole and read back over a mapping, equal to what
was written; anything damaged, truncated or foreign reads as None; the bytes do not depend on
the hash seed; a writer killed at either file operation leaves the old file or the new."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from vault.storage import mapped_arrays

ROOT = Path(__file__).resolve().parents[3]
MAGIC = b"RMHTEST1"


def _arrays(seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 200))
    return {
        "i64": rng.integers(-2**62, 2**62, size=n, dtype=np.int64),
        "i32": rng.integers(-9, 9, size=(n, 3), dtype=np.int32),
        "f32": rng.standard_normal(n).astype(np.float32),
        "f64": np.asarray([np.nan, -0.0, np.inf, 1e-300]),
        "u32": rng.integers(0, 2**32 - 1, size=n, dtype=np.uint32),
        "u8": np.frombuffer("naïve ﬁle\x00".encode(), dtype=np.uint8),
        "flags": rng.random(n) < 0.5,
        "scalar": np.int64(7), "flag": np.bool_(True), "empty": np.zeros(0, np.float32),
        "text": np.asarray(["a", "über", ""]), "strided": np.arange(20)[::3],
    }


def _same(a: dict[str, Any], b: dict[str, npt.NDArray[Any]]) -> bool:
    return sorted(a) == sorted(b) and all(
        np.asarray(a[k]).dtype == b[k].dtype and np.asarray(a[k]).shape == b[k].shape
        and np.asarray(a[k]).tobytes() == b[k].tobytes() for k in a)


@pytest.mark.parametrize("seed", range(5))
def test_read_equals_what_was_written(tmp_path: Path, seed: int) -> None:
    arrays, head = _arrays(seed), {"version": seed, "digest": "ab" * 16, "ü": [1, 2]}
    path = tmp_path / "x.bin"
    assert mapped_arrays.write(path, MAGIC, head, arrays)
    got = mapped_arrays.read(path, MAGIC)
    assert got is not None and got[0] == head and _same(arrays, got[1])
    before = path.read_bytes()
    if got[1]["i64"].size:  # a private mapping: writing an array leaves the file alone
        got[1]["i64"][0] += 1
    assert path.read_bytes() == before
    assert not list(tmp_path.glob(".*.tmp"))


def test_damage_reads_as_none(tmp_path: Path) -> None:
    path = tmp_path / "x.bin"
    assert mapped_arrays.write(path, MAGIC, {"v": 1}, _arrays(1))
    good = path.read_bytes()
    assert mapped_arrays.read(path, b"RMHOTHER") is None  # another kind of file
    cases = [b"", good[:8], good[:20], good[: len(good) // 2], good[:-1], good + b"\0",
             b"garbage" * 100]
    cases += [good[:i] + bytes([good[i] ^ 0x40]) + good[i + 1:]
              for i in (0, 9, 20, 40, len(good) // 2, len(good) - 1)]
    for bad in cases:
        path.write_bytes(bad)
        assert mapped_arrays.read(path, MAGIC) is None, bad[:40]
    assert mapped_arrays.read(tmp_path / "absent.bin", MAGIC) is None
    with pytest.raises(TypeError):
        mapped_arrays.write(path, MAGIC, {}, {"o": np.asarray([object()])})


WRITE = """
import sys
from pathlib import Path
import numpy as np
from vault.storage import mapped_arrays
from vault.storage.store import Store
after = int(sys.argv[2])
count_op = Store(Path(sys.argv[1]), fault_after=after).count_op if after else None
arrays = {"terms": np.asarray(sorted({"b%d" % i for i in range(50)} | {"a", "ä"})),
          "n": np.arange(10), "z": np.zeros(3, np.float32)}
print(mapped_arrays.write(Path(sys.argv[1]) / "x.bin", b"RMHTEST1", {"k": "v"}, arrays, count_op))
"""


def _write(root: Path, after: int, seed: str = "0") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", WRITE, str(root), str(after)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": seed})


def test_the_bytes_do_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    outs = set()
    for seed in ("1", "2", "3"):
        assert _write(tmp_path, 0, seed).stdout.strip() == "True"
        outs.add((tmp_path / "x.bin").read_bytes())
    assert len(outs) == 1


@pytest.mark.parametrize("after", [1, 2, 3])
def test_killed_at_each_file_operation(tmp_path: Path, after: int) -> None:
    """SIGKILLed after the temporary is written (1), after the rename (2), not at all (3):
    the old file or the new one, whole; a dead writer's temporary goes at the next write."""
    path = tmp_path / "x.bin"
    assert mapped_arrays.write(path, MAGIC, {"k": "old"}, {"n": np.arange(3)})
    old = path.read_bytes()
    run = _write(tmp_path, after)
    temps = list(tmp_path.glob(".x.bin.*.tmp"))
    got = mapped_arrays.read(path, MAGIC)
    assert got is not None
    if after == 1:
        assert run.returncode == -9 and len(temps) == 1 and path.read_bytes() == old
        assert got[0] == {"k": "old"}
    else:
        assert run.returncode == (-9 if after == 2 else 0), run.stderr
        assert not temps and got[0] == {"k": "v"} and got[1]["n"].tolist() == list(range(10))
    assert mapped_arrays.write(path, MAGIC, {"k": "next"}, {"n": np.arange(2)})
    assert not list(tmp_path.glob(".x.bin.*.tmp"))  # swept


def test_an_unwritable_folder_returns_false(tmp_path: Path) -> None:
    assert not mapped_arrays.write(tmp_path / "no" / "x.bin", MAGIC, {}, {"n": np.arange(2)})
