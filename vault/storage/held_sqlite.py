"""A SQLite file of the held `.rmh/` (storage/state_anchor.py) opened where the folder is.

SQLite takes a path, and resolves every symlink in it itself (then opens the text it got):
`/proc/self/fd/N/index.sqlite` becomes the folder's current path at the connect, so a `.rmh`
swapped for a symlink in that moment would have SQLite create and write its file wherever the
symlink leads. So the file is made first in the held folder (never by SQLite), SQLite opens it
only to read and write (`mode=rw`: it creates nothing), a first read opens its `-wal` and
`-shm` as well, and then every file the connect opened is checked to be the held folder's own
(by inode, through the descriptor): one that is not closes the connection before any write,
PathRefused. Left: a `-wal` made later (the switch of a new file to WAL) and the files SQLite
opens or removes by its path after this (a rollback journal, the `-wal` removed at the last
close) follow the path of that moment; the check before every call (`Store.check_root`) is
what stands there."""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
from pathlib import Path
from typing import Any

from ..errors import PathRefused

_HELD = re.compile(r"^/proc/self/fd/(\d+)$")
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(
    os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)


def held_folder(path: Path) -> int | None:
    """The descriptor of the held folder `path` is in, or None (a plain path)."""
    found = _HELD.match(str(path.parent))
    return int(found.group(1)) if found else None


def _open_files() -> dict[str, str]:
    """This process's descriptors -> what each names now."""
    out = {}
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            out[fd] = os.readlink(f"/proc/self/fd/{fd}")
    return out


def connect_held(folder: int, path: Path, options: dict[str, Any]) -> sqlite3.Connection:
    """`sqlite3.connect` of `path` (`/proc/self/fd/N/NAME`) checked to be the held folder's
    NAME (module docstring)."""
    name = path.name
    with contextlib.suppress(FileExistsError):  # an existing folder or FIFO: SQLite says so
        os.close(os.open(name, _CREATE, 0o644, dir_fd=folder))
    before = _open_files()
    where = Path(os.path.realpath(path.parent), name)
    conn: sqlite3.Connection = sqlite3.connect(f"{where.as_uri()}?mode=rw", uri=True, **options)
    try:
        _check(folder, name, before)  # the file itself, before SQLite reads or writes it
        with contextlib.suppress(sqlite3.DatabaseError):  # reported by the caller's first use
            conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()  # -wal, -shm
        _check(folder, name, before)
    except BaseException:
        conn.close()
        raise
    return conn


def _check(folder: int, name: str, before: dict[str, str]) -> None:
    """PathRefused unless every descriptor opened since `before` to a file named NAME... is
    the held folder's file of that name, and one descriptor of this process is NAME's."""
    ours = False  # SQLite may reuse a descriptor an earlier connection to the file left
    mine = os.stat(name, dir_fd=folder, follow_symlinks=False)
    for fd, target in _open_files().items():
        base = os.path.basename(target)
        if not base.startswith(name):
            continue
        with contextlib.suppress(OSError):
            ours = ours or os.path.samestat(os.stat(f"/proc/self/fd/{fd}"), mine)
        if before.get(fd) == target:
            continue
        try:
            held: os.stat_result | None = os.stat(base, dir_fd=folder, follow_symlinks=False)
        except OSError:
            held = None
        if held is None or not os.path.samestat(os.stat(f"/proc/self/fd/{fd}"), held):
            raise PathRefused(f".rmh/{name}", "the state folder was swapped while it opened; "
                              "nothing written")
    if not ours:
        raise PathRefused(f".rmh/{name}", "the state folder was swapped while it opened; "
                          "nothing written")
