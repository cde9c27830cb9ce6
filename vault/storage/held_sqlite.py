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


def _descriptors() -> dict[int, tuple[int, int]]:
    """This process's descriptors -> (device, inode) of the file each is open on now: one
    `fstat` each, no path read (a process may hold thousands: a readlink of every one, three
    times a connect, cost a server with many clients that much CPU at each connect)."""
    out = {}
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # closed meanwhile (the listing's own among them)
            info = os.fstat(int(fd))
            out[int(fd)] = (info.st_dev, info.st_ino)
    return out


def connect_held(folder: int, path: Path, options: dict[str, Any], mode: str = "rw"
                 ) -> sqlite3.Connection:
    """`sqlite3.connect` of `path` (`/proc/self/fd/N/NAME`) checked to be the held folder's
    NAME (module docstring); `mode` "ro": only read, and nothing made first."""
    name = path.name
    if mode == "rw":
        with contextlib.suppress(FileExistsError):  # an existing folder or FIFO: SQLite says
            os.close(os.open(name, _CREATE, 0o644, dir_fd=folder))
    before = _descriptors()
    where = Path(os.path.realpath(path.parent), name)
    conn: sqlite3.Connection = sqlite3.connect(f"{where.as_uri()}?mode={mode}", uri=True,
                                               **options)
    try:
        _check(folder, name, before)  # the file itself, before SQLite reads or writes it
        _still_named(folder, where.parent, name)  # SQLite opens NAME-wal, NAME-shm by it
        with contextlib.suppress(sqlite3.DatabaseError):  # reported by the caller's first use
            conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()  # -wal, -shm
        _check(folder, name, before)
    except BaseException:
        conn.close()
        raise
    return conn


def _still_named(folder: int, where: Path, name: str) -> None:
    """PathRefused unless `where` (the text SQLite joins `-wal`, `-shm` to) still names the
    held folder: a swap since the connect refused before the first read opens them there
    (STORE13: an empty `-wal` and a `-shm` were made outside; the moment between this and
    SQLite's open remains, module docstring)."""
    try:
        same = os.path.samestat(os.stat(where), os.fstat(folder))
    except OSError:
        same = False
    if not same:
        raise PathRefused(f".rmh/{name}", "the state folder was swapped while it opened; "
                          "nothing written")


def _check(folder: int, name: str, before: dict[int, tuple[int, int]]) -> None:
    """PathRefused unless every descriptor opened since `before` (new, or open on another file
    than then) to a file named NAME... is the held folder's file of that name, and one
    descriptor of this process is NAME's. Only those new descriptors' names are read."""
    held_file = os.stat(name, dir_fd=folder, follow_symlinks=False)
    mine = (held_file.st_dev, held_file.st_ino)
    ours = False  # SQLite may reuse a descriptor an earlier connection to the file left
    for fd, ident in _descriptors().items():
        if ident == mine:
            ours = True
            continue
        if before.get(fd) == ident:
            continue
        try:
            base = os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:  # closed meanwhile
            continue
        if not base.startswith(name):
            continue
        try:
            info = os.stat(base, dir_fd=folder, follow_symlinks=False)
            held: tuple[int, int] | None = (info.st_dev, info.st_ino)
        except OSError:
            held = None
        if held != ident:
            raise PathRefused(f".rmh/{name}", "the state folder was swapped while it opened; "
                              "nothing written")
    if not ours:
        raise PathRefused(f".rmh/{name}", "the state folder was swapped while it opened; "
                          "nothing written")
