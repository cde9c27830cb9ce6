"""Numbered, transactional schema migrations for rmh's SQLite files.

Migration i (from 0) takes a database from `PRAGMA user_version` i to i + 1. The version is
read, and every pending migration applied with its version bump, inside one `BEGIN IMMEDIATE`
transaction: of several processes opening a fresh file at once, the first takes the write lock
and migrates, the others wait (the caller's busy timeout) and then find the version current, so
no migration runs twice (issue 27: "table meta already exists"). A crash leaves the file at the
old version or the new one, never between. A file newer than this rmh is refused.

`connect` opens one of them, never through a symlink: `.rmh/learned.sqlite` linked to
another program's database outside the vault (a vault copied or cloned with its links) got
rmh's tables written into it. (Checked just before connecting: a link swapped in between is
the window left, as for an editor that takes no lock.)

`enter_wal` switches a file to WAL first. On a fresh file that switch needs the exclusive lock
while the connection already holds a shared one, so when two processes make it at once SQLite
answers SQLITE_BUSY to one of them at once instead of calling its busy handler (the deadlock
rule of sqlite3_busy_handler, https://sqlite.org/c3ref/busy_handler.html); that one backs off
and tries again, within the same busy budget.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import PathRefused, SchemaTooNew
from ..room import keeps_sqlite_in
from .held_sqlite import connect_held, held_folder


def connect(path: Path | str, *, read_only: bool = False, **options: Any) -> sqlite3.Connection:
    """`sqlite3.connect(path, **options)`; PathRefused (named `folder/file`) when `path` is a
    symlink, wherever it points: rmh's SQLite files are its own, in its state folder. A str
    path is taken as a Path (the public `Ledger.open` takes either). `read_only`: SQLite's
    `mode=ro` (the file is only read; none is made where there is none)."""
    path = Path(path)
    held = held_folder(path)  # in the held `.rmh/`: checked to be its own (held_sqlite.py)
    if os.path.islink(path):
        folder = path.parent.name if held is None else ".rmh"
        raise PathRefused(f"{folder}/{path.name}", "symlink in place of rmh's file")
    if not read_only:  # a write's "disk I/O error" there may be a full quota (room.py)
        keeps_sqlite_in(os.path.realpath(path.parent))
    if held is not None:
        return connect_held(held, path, options, "ro" if read_only else "rw")
    conn: sqlite3.Connection = (sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True,
                                                **options) if read_only  # "#", "?": PLUG6
                                else sqlite3.connect(str(path), **options))
    return conn


connect_state = connect  # vault's public name: the harness's own files of the held `.rmh/`


def statements(script: str) -> Iterator[str]:
    """The complete SQL statements of `script`, in order (a trigger's body stays whole:
    `sqlite3.complete_statement` decides where each ends)."""
    buf = ""
    for piece in script.split(";"):
        buf += piece + ";"
        if sqlite3.complete_statement(buf):
            if buf.strip(" \t\r\n;"):
                yield buf.strip()
            buf = ""
    if buf.strip(" \t\r\n;"):
        raise ValueError(f"incomplete SQL statement: {buf.strip()[:80]!r}")


def enter_wal(conn: sqlite3.Connection, busy_ms: float) -> None:
    """`PRAGMA journal_mode = WAL`, retried with a doubling back-off (5 ms to 100 ms) while
    SQLite refuses it as locked, until the waits add up to `busy_ms`; then the error is raised.
    Only the pause reads no clock: the budget is the sum of the pauses taken."""
    waited, pause = 0.0, 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            text = str(exc).lower()
            if ("locked" not in text and "busy" not in text) or waited >= busy_ms / 1000:
                raise
        time.sleep(pause)
        waited += pause
        pause = min(pause * 2, 0.1)


def _version(conn: sqlite3.Connection, total: int) -> int:
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version > total:
        raise SchemaTooNew(version, total)
    return version


def migrate(conn: sqlite3.Connection, migrations: Sequence[str]) -> None:
    """Apply every migration past the file's user_version in one write transaction (the
    connection must be in autocommit mode, `isolation_level=None`, with its busy timeout
    set). Safe when several processes open the same file at once."""
    if _version(conn, len(migrations)) == len(migrations):
        return  # the common case: no write lock taken
    conn.execute("BEGIN IMMEDIATE")
    try:
        for number in range(_version(conn, len(migrations)), len(migrations)):
            for statement in statements(migrations[number]):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number + 1}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
