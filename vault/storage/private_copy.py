"""Open one of rmh's own `.rmh/` stores as a file nobody else can name, to be memory-mapped.

A memory-mapped file's pages are read when touched, for as long as the mapping lives; when
another program truncates the file in place (`os.truncate`, `: > file`, a sync tool restoring
an old copy over it) a later touch past the new end is SIGBUS, which kills the process: a
running `rmh serve` died on its next search. rmh itself never truncates a store (every writer
renames a new inode into place), so only an outside writer can, and only through the file's
name. SQLite's and LMDB's mmap modes document the same hazard as unsupported; here a store
that a process maps for its lifetime is first copied to an unnamed file of its own
(`tempfile.TemporaryFile` in the same folder: O_TMPFILE on Linux, so it has no name to open,
and is freed when the process closes it or dies) and the copy is what is mapped.

The copy is `copy_file_range` (in the kernel, no bytes through Python; a reflink on btrfs and
XFS, so no bytes at all), or `sendfile` where the kernel refuses that, or `pread` and `write`
where both are refused (another platform, a seccomp filter). Its cost is one pass
over the file's bytes at load, which the CRC-checked stores already make, and the file's
size in page cache and disk while the process lives (measurements: session 30 NOTES-MMAP).
Where the folder cannot hold a temporary (a read-only `.rmh/`, a full disk) the copy goes
to an anonymous memory file (`memfd_create`: memory, not disk); where neither can be made,
the store itself is opened, mapped as before (the one case left open to SIGBUS).

A store larger than `COPY_MAX` bytes is mapped itself, as before: at 10^6 notes the largest
stores (IVF codes, lexical index, note columns) are 0.5 to 1.1 GB each, and a copy per
process would cost their size again in page cache and disk writes and ~0.7 s of CPU per
start, against a documented cold start of about 3 s (session 30 NOTES-MMAP). Such a store
stays open to SIGBUS under an outside in-place truncation (README says so); below the bound,
which every store of a vault of up to about 2x10^5 notes stays under, nothing is.

A store truncated or rewritten while it is copied gives a copy of the wrong size or bytes:
the caller's checks (size, CRC, numpy's shape) refuse it as they refuse any damaged store,
and the value is built again. After the copy, nothing another program does to the store's
name or inode reaches the mapping: the process answers from the bytes it checked.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path
from typing import BinaryIO

from .fileops import open_regular

COPY_MAX = 256 << 20  # bytes: a larger store is mapped itself (module docstring)
_CHUNK = 1 << 30  # bytes per copy call (the kernel caps one call near 2 GiB)
_READ = 1 << 24  # bytes per pread where neither in-kernel copy is allowed
_CALLS = {"range": "copy_file_range", "sendfile": "sendfile"}
_REFUSED = (errno.EXDEV, errno.ENOSYS, errno.EOPNOTSUPP, errno.EINVAL, errno.ENOTSUP,
            errno.ENOTSOCK, errno.EPERM)  # EPERM: a seccomp filter's answer


def open_private(path: str | Path) -> BinaryIO:
    """A file of this process's own, at offset 0, holding the bytes of the regular file at
    `path` (up to its size when opened); OSError as `fileops.open_regular` when `path` is
    absent or not a regular file. Falls back to `path` itself only when no private file can
    be made or filled, or when it is larger than `COPY_MAX` (module docstring)."""
    src = open_regular(path)
    try:
        size = os.fstat(src.fileno()).st_size
        if size > COPY_MAX:
            return src
        for make in (_in_folder, _in_memory):
            try:
                own = make(Path(path).parent)
            except (OSError, AttributeError):  # AttributeError: no memfd on this platform
                continue
            try:
                _copy(src.fileno(), own.fileno(), size)
            except OSError:  # a full disk, a quota: the next place, or the store itself
                own.close()
                continue
            src.close()
            own.seek(0)
            return own
        return src
    except BaseException:
        src.close()
        raise


def _in_folder(folder: Path) -> BinaryIO:
    """An empty file in `folder` with no name (O_TMPFILE; elsewhere unlinked at once)."""
    return tempfile.TemporaryFile(dir=folder)


def _in_memory(_: Path) -> BinaryIO:
    """An empty anonymous file in memory (Linux)."""
    return os.fdopen(os.memfd_create("rmh-store", os.MFD_CLOEXEC), "w+b")


def _copy(src: int, dst: int, size: int) -> None:
    """Copy bytes 0..`size` of `src` to `dst` (at its position 0); stops early, leaving a short
    copy, when `src` ends sooner (truncated meanwhile). Each way is tried until the kernel
    refuses it: `copy_file_range`, `sendfile` (to a file: Linux only), `pread` + `write`."""
    done = 0
    ways = [w for w in ("range", "sendfile") if hasattr(os, _CALLS[w])] + ["read"]
    while done < size:
        count = min(_CHUNK, size - done)
        try:
            if ways[0] == "range":
                got = os.copy_file_range(src, dst, count, done, done)
            elif ways[0] == "sendfile":
                os.lseek(dst, done, os.SEEK_SET)
                got = os.sendfile(dst, src, done, count)
            else:
                os.lseek(dst, done, os.SEEK_SET)
                got = os.write(dst, os.pread(src, min(count, _READ), done))
        except OSError as exc:
            if exc.errno not in _REFUSED or len(ways) == 1:
                raise
            ways.pop(0)
            continue
        if got <= 0:
            return
        done += got
