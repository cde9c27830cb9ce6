"""Whether a folder has room for one more block for this user: what a "disk I/O error" from
SQLite means when the disk or this user's quota is full (session 41).

SQLite reports ENOSPC as SQLITE_FULL but any other failed write, EDQUOT (a user's disk quota
spent) among them, as SQLITE_IOERR_WRITE, and a WAL index it cannot grow as _SHMSIZE (the
same codes a damaged file system gives). `os.statvfs` sees a full disk (no block available)
but not a quota: a user past their quota on a half-empty disk has `f_bavail` > 0. So a folder
with blocks left is also asked the way a quota answers: one block written to a scratch file
there (`.rmh-room.PID`, removed at once), refused with ENOSPC or EDQUOT or not.

`keeps_sqlite_in` records the folders this process keeps SQLite files in (storage/migrations.py
`connect`); `is_disk_full` (full_disk.py) takes a write's "disk I/O error" for a full disk when
one of them has no room."""

from __future__ import annotations

import errno
import os
from contextlib import suppress

_FULL = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC), errno.EFBIG)
_BLOCK = bytes(4096)
_FOLDERS: list[str] = []  # in the order first written: each asked once per error


def keeps_sqlite_in(folder: str) -> None:
    """Record that this process writes SQLite files in `folder` (a real path)."""
    if folder not in _FOLDERS:
        _FOLDERS.append(folder)


def no_space(folder: str) -> bool:
    """Whether the file system holding `folder` has no block left for this user: none
    available (`statvfs`), or one block written there refused with ENOSPC or EDQUOT (a quota,
    which `statvfs` does not show). A folder that cannot be read or written otherwise
    (missing, read only, not permitted) is not full."""
    try:
        if os.statvfs(folder).f_bavail == 0:
            return True
    except OSError:
        return False
    name = os.path.join(folder, f".rmh-room.{os.getpid()}")
    try:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        return exc.errno in _FULL
    try:
        os.write(fd, _BLOCK)
    except OSError as exc:
        return exc.errno in _FULL
    finally:
        os.close(fd)
        with suppress(OSError):
            os.unlink(name)
    return False


def sqlite_folder_full() -> bool:
    """Whether a folder this process keeps SQLite files in has no room (`no_space`)."""
    return any(no_space(folder) for folder in _FOLDERS)
