"""What a disk-full error looks like, from the OS, SQLite or the vault itself.

A full disk, a quota or a file-size limit reach rmh as an OSError (ENOSPC, EDQUOT, EFBIG), as a
SQLite error (SQLITE_FULL, or only a "disk I/O error" whose extended code says which write
failed), or as DiskFull once typed. `is_disk_full` answers for any of them; room.py's
`no_space` (and errors.py's `size_limited`) tell the cases SQLite reports only as an I/O
error. The typed error itself is vault/errors.py's DiskFull.
"""

from __future__ import annotations

import errno
import sqlite3

from .errors import DiskFull, size_limited
from .room import sqlite_folder_full

_FULL = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC), errno.EFBIG)
_SQLITE_FULL = 13  # "database or disk is full"
# the "disk I/O error"s SQLite gives EFBIG as: a write, a truncate, the WAL index grown
# (SQLITE_IOERR_WRITE, _TRUNCATE, _SHMSIZE); never a read's or a damaged file system's
_SQLITE_EFBIG = (778, 1546, 4874)


def is_disk_full(exc: BaseException) -> bool:
    """Whether `exc` says the disk (or quota, or file-size limit) is full: an OSError with
    ENOSPC/EDQUOT/EFBIG, a SQLite error with SQLITE_FULL (also when SQLite only got
    SQLITE_IOERR writing: its message then names the full disk; the IOERR codes SQLite reports
    EFBIG and EDQUOT as, `_SQLITE_EFBIG`, under a file-size limit or where a folder of its
    files has no room: room.py), or DiskFull itself (the index
    opened read only on a full disk refuses every write with it)."""
    if isinstance(exc, DiskFull):
        return True
    if isinstance(exc, OSError):
        return exc.errno in _FULL
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        return ((code is not None and code & 0xFF == _SQLITE_FULL) or "disk is full" in str(exc)
                or (code in _SQLITE_EFBIG and (size_limited() or sqlite_folder_full())))
    return False
