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
one of them has no room.

A process killed between the scratch file's create and its unlink left it (one block, for
good: DISK41's "still weak"). The first time a process records a folder it removes there the
scratch files of processes that are gone (`.rmh-room.PID` exactly, a plain file, PID not
alive and not its own); any other name, and a live process's scratch, is left (STORE17,
session 42)."""

from __future__ import annotations

import errno
import os
import re
from contextlib import suppress

_FULL = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC), errno.EFBIG)
_BLOCK = bytes(4096)
_FOLDERS: list[str] = []  # in the order first written: each asked once per error
_SCRATCH = re.compile(r"\.rmh-room\.([1-9][0-9]{0,9})")  # `no_space`'s name, PID in decimal


def keeps_sqlite_in(folder: str) -> None:
    """Record that this process writes SQLite files in `folder` (a real path); the first
    time, remove the scratch files a gone process left there (`remove_dead_scratch`)."""
    if folder not in _FOLDERS:
        _FOLDERS.append(folder)
        remove_dead_scratch(folder)


def _gone(pid: int) -> bool:
    """Whether no process `pid` exists (one of another user's exists: not gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # EPERM: exists, owned by someone else
        return False
    return False


def remove_dead_scratch(folder: str) -> list[str]:
    """Remove from `folder` each plain file named `.rmh-room.PID` whose process is gone (a
    kill inside `no_space`); returns the names removed, sorted. Other names, links, folders
    and the scratch of a live process (or this one) stay; an unreadable folder is left."""
    removed = []
    with suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            m = _SCRATCH.fullmatch(entry.name)
            if m is None or int(m.group(1)) == os.getpid() or not _gone(int(m.group(1))):
                continue
            with suppress(OSError):
                if entry.is_file(follow_symlinks=False):
                    os.unlink(os.path.join(folder, entry.name))
                    removed.append(entry.name)
    return sorted(removed)


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
