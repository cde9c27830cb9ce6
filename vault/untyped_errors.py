"""What an untyped OSError or SQLite error that reached the boundary stands for.

The boundary (harness/errors.py, the CLI) calls `storage_error` on anything untyped, so every
surface says "disk full" or "permission denied", not "internal". Changes to notes are typed
where they are made (storage/fileops.py `refused_change`: the note, action "write"); what
still arrives here names a file by the OSError's file name: its last part only (no host path
leaves), and a temporary of rmh's (`.NAME.rmh-tmp-PID-N` of a note, `.NAME.PID.tmp` of a
`.rmh/` file) by the file it was written for, with action "write" (a temporary is only ever
written). Any other file's action is not known here; "read" is said, as before.

A SQLite file of `.rmh/` damaged in one page (a disk error, a sync tool's partial copy, a
truncation) opens cleanly and fails only when that page is read ("database disk image is
malformed", "file is not a database"), at any statement of any command: IndexUnusable or
LedgerError then, as when the file fails to open, by the package whose code read it (the
learning log's is vault/learning; every other SQLite file of vault/ is the index), so the
user gets the file's one-line fix, not a traceback.
"""

from __future__ import annotations

import errno
import os
import re
import sqlite3

from .errors import DiskFull, IndexUnusable, LedgerError, PermissionDenied, VaultError
from .full_disk import is_disk_full

_TEMP = re.compile(r"\.(.+)\.(?:rmh-tmp-\d+-\d+|\d+\.tmp)")


def storage_error(exc: BaseException, what: str = "vault files") -> VaultError | None:
    """The typed error an untyped OSError or SQLite error stands for (DiskFull; for an
    OSError with EACCES/EPERM, PermissionDenied naming the file as the module docstring
    says), or None."""
    if is_disk_full(exc):
        return DiskFull(what)
    if isinstance(exc, OSError) and exc.errno in (errno.EACCES, errno.EPERM):
        name = (exc.filename if isinstance(exc.filename, str) else what).rsplit("/", 1)[-1]
        temp = _TEMP.fullmatch(name)
        return PermissionDenied(temp[1], "write") if temp else PermissionDenied(name)
    return damaged_database(exc)


_DAMAGED = (11, 26)  # SQLITE_CORRUPT, SQLITE_NOTADB


def damaged_database(exc: BaseException) -> VaultError | None:
    """The typed error of a damaged `.rmh/` SQLite file (module docstring), or None: the
    innermost frame of vault/ that raised it names the file."""
    if getattr(exc, "sqlite_errorcode", None) not in _DAMAGED or not isinstance(
            exc, sqlite3.DatabaseError):
        return None
    package = None
    tb = exc.__traceback__
    while tb is not None:
        name = str(tb.tb_frame.f_globals.get("__name__", ""))
        if name.startswith("vault."):
            package = name
        tb = tb.tb_next
    if package is None:
        return None
    if package.startswith("vault.learning."):
        return LedgerError(f"learned.sqlite: {exc}")
    return IndexUnusable(f"cannot open index index.sqlite: {exc}")


def out_of_descriptors(path: str | os.PathLike[str]) -> OSError | None:
    """The EMFILE/ENFILE this process gets opening a descriptor for `path` (O_PATH: nothing of
    the file is read, a FIFO or device is not acted on), else None. SQLite says "unable to open
    database file" when a process is out of descriptors (`ulimit -n`), which read as a damaged
    `learned.sqlite`, whose fix text says to move it aside and lose the learning log."""
    flags = getattr(os, "O_PATH", os.O_RDONLY | os.O_NONBLOCK) | os.O_CLOEXEC
    try:
        os.close(os.open(path, flags | os.O_NOFOLLOW))
    except OSError as exc:
        return exc if exc.errno in (errno.EMFILE, errno.ENFILE) else None
    return None


def writable(folder: str, *files: str) -> bool:
    """Whether this process may create files in `folder` and write those of `files` in it that
    exist (access(2): owner and mode, ACLs, a read-only mount, which refuses even root)."""
    if not os.access(folder, os.W_OK | os.X_OK):
        return False
    paths = (os.path.join(folder, name) for name in files)
    return all(os.access(p, os.W_OK) for p in paths if os.path.lexists(p))
