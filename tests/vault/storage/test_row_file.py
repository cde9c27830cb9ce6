"""RowFile: fixed-width rows on disk in a file with no name, read and written by offset."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from vault.storage.row_file import RowFile


def rows(n: int, width: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(-128, 128, (n, width)).astype(np.int8)


def test_rows_read_back_as_written_and_the_folder_stays_empty(tmp_path: Path) -> None:
    data = rows(1000, 12)
    f = RowFile(tmp_path, 1000, 12)
    assert f.shape == (1000, 12) and f.disk_bytes == 12_000
    np.testing.assert_array_equal(f.span(0, 1000), np.zeros((1000, 12), np.int8))  # unwritten
    f.put(0, data[:600])
    f.put(600, data[600:])
    np.testing.assert_array_equal(f.span(0, 1000), data)
    np.testing.assert_array_equal(f.span(990, 2000), data[990:])  # a slice's end
    assert f.span(1000, 1000).shape == (0, 12)
    pick = np.array([5, 999, 5, 0], np.int64)
    np.testing.assert_array_equal(f.take(pick), data[pick])
    assert os.listdir(tmp_path) == []
    f.close()


def test_other_dtypes_and_bad_calls(tmp_path: Path) -> None:
    f = RowFile(tmp_path, 4, 3, np.float32)
    block = np.arange(12, dtype=np.float32).reshape(4, 3)
    f.put(0, block)
    np.testing.assert_array_equal(f.span(1, 3), block[1:3])
    with pytest.raises(ValueError):
        f.put(0, block.astype(np.float64))
    with pytest.raises(ValueError):
        f.put(0, np.zeros((1, 4), np.float32))
    with pytest.raises(IndexError):
        f.put(2, block)  # past the end
    with pytest.raises(IndexError):
        f.span(5, 6)
    with pytest.raises(FileNotFoundError):
        RowFile(tmp_path / "missing", 1, 1)


@pytest.mark.parametrize(("n", "block"), [(0, 4), (1, 4), (10, 3), (257, 7), (1000, 1000),
                                          (1000, 64), (300, 1)])
def test_permuted_equals_the_gather(tmp_path: Path, n: int, block: int) -> None:
    data = rows(n, 5, seed=n + block)
    rng = np.random.default_rng(n)
    for order in (np.argsort(rng.integers(0, 9, n), kind="stable"), rng.permutation(n),
                  np.arange(n)[::-1].copy()):
        f = RowFile(tmp_path, n, 5)
        f.put(0, data)
        out = f.permuted(order.astype(np.int64), block)
        np.testing.assert_array_equal(out.span(0, n), data[order])
        with pytest.raises(ValueError):
            f.span(0, 1)  # the source was closed (its blocks freed)
        out.close()
    assert os.listdir(tmp_path) == []


def test_readers_on_many_threads_see_their_own_rows(tmp_path: Path) -> None:
    data = rows(4096, 64)
    f = RowFile(tmp_path, 4096, 64)
    f.put(0, data)

    def read(k: int) -> bool:
        lo = (k * 97) % 4000
        return bool(np.array_equal(f.span(lo, lo + 96), data[lo : lo + 96]))

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(read, range(400)))


def test_a_killed_process_leaves_no_file(tmp_path: Path) -> None:
    child = textwrap.dedent(f"""
        import sys, numpy as np
        from vault.storage.row_file import RowFile
        f = RowFile({str(tmp_path)!r}, 100_000, 64)
        f.put(0, np.ones((100_000, 64), np.int8))
        print("written", flush=True)
        sys.stdin.read()
    """)
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.Popen([sys.executable, "-c", child], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "written"
    assert os.listdir(tmp_path) == []  # never had a name
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert os.listdir(tmp_path) == []


def rss_file_kb() -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("RssFile:"))


def test_blocks_are_views_whose_pages_leave_the_rss_after_the_scan(tmp_path: Path) -> None:
    data = rows(20_000, 1024)  # 20 MB
    f = RowFile(tmp_path, 20_000, 1024)
    f.put(0, data)
    parts = list(f.blocks(0, 20_000, 3000))
    assert [p.shape[0] for p in parts] == [3000] * 6 + [2000]
    np.testing.assert_array_equal(np.concatenate(parts), data)
    assert not parts[0].flags.writeable
    got = [p.copy() for p in f.blocks(17, 5000, 512)]
    np.testing.assert_array_equal(np.concatenate(got), data[17:5000])
    assert list(f.blocks(5, 5, 8)) == [] and list(f.blocks(0, 10, 4))[-1].shape == (2, 1024)
    del parts, got
    f.close()
    if os.path.exists("/proc/self/status"):
        g = RowFile(tmp_path, 20_000, 1024)
        g.put(0, data)
        before, peak = rss_file_kb(), 0
        for part in g.blocks(0, 20_000, 4096):
            assert int(np.abs(part.astype(np.int32)).sum()) >= 0  # reads every page
            peak = max(peak, rss_file_kb())
        assert peak - before > 10_000  # mapped while being read
        assert rss_file_kb() - before < 2_000  # and unmapped after
        g.close()
    assert os.listdir(tmp_path) == []


def test_a_full_disk_fails_when_the_file_is_made_not_at_a_later_write(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The blocks are allocated up front: ENOSPC from fallocate is an OSError of the
    constructor (where the dense index falls back to memory), and no file is left."""
    def full(fd: int, offset: int, size: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", full, raising=False)
    with pytest.raises(OSError) as err:
        RowFile(tmp_path, 1000, 384)
    assert err.value.errno == errno.ENOSPC and os.listdir(tmp_path) == []


@pytest.mark.skipif(not hasattr(os, "posix_fallocate"), reason="no fallocate here")
def test_the_blocks_are_allocated_when_the_file_is_made(tmp_path: Path) -> None:
    f = RowFile(tmp_path, 4096, 1024)  # 4 MiB of zeros, allocated, not sparse
    fd = f._file.fileno()
    assert os.fstat(fd).st_blocks * 512 >= 4096 * 1024
    f.close()
