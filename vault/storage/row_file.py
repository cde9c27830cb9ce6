"""Fixed-width rows of one numpy dtype in an unlinked temporary file, read by position.

What a derived array too large to keep in memory lives in (the int8 codes of the dense
IVF: 1.1 GiB at 10^6 notes). The file is made by `tempfile.TemporaryFile` in a folder the
caller names (the vault's `.rmh/`, on the vault's disk: not `/tmp`, which may be RAM):
on Linux it has no name at all (O_TMPFILE), elsewhere it is unlinked at once, so it is
never seen by sync or a user and its blocks are freed when it is closed, garbage-collected
or its process dies (kill -9 included).

Two ways to read, both by offset (readers on several threads never share a file position):
`span` and `take` copy rows out with `preadv` (the bulk passes of a build), and `blocks`
yields read-only views of a shared mapping of the file, with no copy, and unmaps the pages
from this process when the iteration ends (`madvise(MADV_DONTNEED)`; the page cache keeps
them): a query's scan. So the process's RSS holds only the rows being read; the kernel's
page cache holds the rest while memory allows (reclaimable: under memory pressure a read
goes to the disk instead). Rows are written with `pwrite`. The file's blocks are allocated
when it is made (`posix_fallocate`), so a full disk is an OSError (ENOSPC) then, not later.
A short read or write raises OSError (EIO); nothing here retries a failing disk. A disk that
fails under the mapping while `blocks` is read is SIGBUS, as for any memory-mapped file, not
an OSError.
"""

from __future__ import annotations

import contextlib
import errno
import mmap
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]
SCATTER_BLOCK = 131_072  # rows read per step of `permuted` (48 MiB of int8 at width 384)


def _reserve(fd: int, size: int) -> None:
    """Give the file `size` bytes with its blocks allocated now, so a full disk fails here
    (ENOSPC, where the caller can keep the rows in memory instead), not at a later write;
    a file system without fallocate gets a sparse file (ftruncate)."""
    os.ftruncate(fd, size)
    if size and hasattr(os, "posix_fallocate"):
        try:
            os.posix_fallocate(fd, 0, size)
        except OSError as exc:
            if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                raise


class RowFile:
    """`rows` rows of `width` items of `dtype` (zero until written), on disk."""

    def __init__(self, folder: str | Path, rows: int, width: int,
                 dtype: npt.DTypeLike = np.int8) -> None:
        self.rows, self.width, self.dtype = rows, width, np.dtype(dtype)
        self.row_bytes = width * self.dtype.itemsize
        self._file = tempfile.TemporaryFile(dir=folder)  # noqa: SIM115 (held, closed by close)
        try:
            _reserve(self._file.fileno(), rows * self.row_bytes)
            self._map = (mmap.mmap(self._file.fileno(), rows * self.row_bytes,
                                   prot=mmap.PROT_READ) if rows * self.row_bytes else None)
        except OSError:
            self._file.close()
            raise
        self._view = (np.zeros((0, width), self.dtype) if self._map is None else
                      np.frombuffer(self._map, dtype=self.dtype).reshape(rows, width))
        self.folder = str(folder)

    @property
    def shape(self) -> tuple[int, int]:
        return (self.rows, self.width)

    @property
    def disk_bytes(self) -> int:
        return self.rows * self.row_bytes

    def close(self) -> None:
        """Free the file's blocks (also done when this object is garbage-collected). A view
        from `blocks` still held elsewhere keeps the mapping until it is dropped."""
        self._view = np.zeros((0, self.width), self.dtype)
        if self._map is not None:
            with contextlib.suppress(BufferError):  # a view still held: unmapped when dropped
                self._map.close()
        self._file.close()

    def put(self, at: int, block: npt.NDArray[np.generic]) -> None:
        """Write `block` (rows of this file's width and dtype) as rows `at`, `at + 1`, ..."""
        if block.ndim != 2 or block.shape[1] != self.width or block.dtype != self.dtype:
            raise ValueError(f"rows of width {self.width} and dtype {self.dtype} expected")
        if not 0 <= at <= self.rows - block.shape[0]:
            raise IndexError(at)
        data = np.ascontiguousarray(block).reshape(-1).view(np.uint8).data
        fd, offset = self._file.fileno(), at * self.row_bytes
        while data:
            wrote = os.pwrite(fd, data, offset)
            if wrote <= 0:
                raise OSError(errno.EIO, "short write to a row file")
            data, offset = data[wrote:], offset + wrote

    def span(self, lo: int, hi: int) -> npt.NDArray[np.generic]:
        """Rows `lo:hi` (a new array; `hi` past the end reads to the end, as a slice does)."""
        hi = min(hi, self.rows)
        if not 0 <= lo <= self.rows or hi < lo:
            raise IndexError((lo, hi))
        out = np.empty((hi - lo, self.width), dtype=self.dtype)
        view = out.reshape(-1).view(np.uint8).data
        fd, offset = self._file.fileno(), lo * self.row_bytes
        while view:
            got = os.preadv(fd, [view], offset)
            if got <= 0:
                raise OSError(errno.EIO, "short read from a row file")
            view, offset = view[got:], offset + got
        return out

    def blocks(self, lo: int, hi: int, size: int) -> Iterator[npt.NDArray[np.generic]]:
        """Rows `lo:hi` (`hi` clipped to the end), `size` at a time, as read-only views of the
        mapping; their pages leave this process's RSS when the iteration ends."""
        hi = min(hi, self.rows)
        if not 0 <= lo <= self.rows or hi <= lo or self._map is None:
            return
        try:
            for s in range(lo, hi, size):
                yield self._view[s : min(hi, s + size)]
        finally:
            start = lo * self.row_bytes
            start -= start % mmap.PAGESIZE
            if not self._map.closed:
                self._map.madvise(mmap.MADV_DONTNEED, start, hi * self.row_bytes - start)

    def take(self, rows: I64) -> npt.NDArray[np.generic]:
        """The rows at `rows` (any order, repeats allowed), as a new array."""
        out = np.empty((rows.shape[0], self.width), dtype=self.dtype)
        for j, r in enumerate(rows.tolist()):
            out[j] = self.span(r, r + 1)[0]
        return out

    def permuted(self, order: I64, block: int = SCATTER_BLOCK) -> RowFile:
        """A new file whose row p is this file's row `order[p]` (`order` a permutation); this
        one is closed. Read in blocks of `block` rows; each block's rows go out as runs of
        consecutive destinations, one `pwrite` a run (a list of the IVF gets one run from
        each block, since its rows keep their order)."""
        n = self.rows
        where = np.empty(n, dtype=np.int64)
        where[order] = np.arange(n, dtype=np.int64)  # where[r]: the position of row r
        out = RowFile(self.folder, n, self.width, self.dtype)
        try:
            for s in range(0, n, block):
                e = min(n, s + block)
                dest = where[s:e]
                by_dest = np.argsort(dest, kind="stable")
                d, rows = dest[by_dest], self.span(s, e)[by_dest]
                bounds = np.flatnonzero(np.diff(d) != 1) + 1
                for a, b in zip([0, *bounds.tolist()], [*bounds.tolist(), e - s], strict=True):
                    out.put(int(d[a]), rows[a:b])
        except BaseException:
            out.close()
            raise
        self.close()
        return out
