"""Read-only connections to the index (storage/index.py): on a full disk, where SQLite cannot
create the WAL's shared index file, and for a vault this process may not write (a read-only
mount, another owner: vault ReadOnlyVault)."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from ..errors import DiskFull, IndexUnusable

BUSY_TIMEOUT_MS = 5000  # how long a connection waits for another's lock
log = logging.getLogger("rmh.vault")


def full_disk_connection(path: Path) -> sqlite3.Connection:
    """The index opened to read on a full disk, where SQLite cannot create the WAL's shared
    index file: `immutable` (no locks, no -shm), so reads and searches still answer from the
    index as it is; every write then fails as disk full (callers degrade: landing.py).
    DiskFull when even that fails."""
    try:
        conn = _connect_ro(path, immutable=True)
    except sqlite3.DatabaseError as exc:
        raise DiskFull(path.name) from exc
    log.warning("%s; the index is read only for this run", DiskFull(path.name))
    return conn


def _connect_ro(path: Path, *, immutable: bool) -> sqlite3.Connection:
    """A read-only connection to `path`, checked by one read. `immutable` takes no locks and
    needs no -shm file (a read-only mount); without it SQLite still sees another process's
    commits (a vault another user writes)."""
    uri = f"{path.resolve().as_uri()}?mode=ro" + ("&immutable=1" if immutable else "")
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("SELECT COUNT(*) FROM meta").fetchone()
        if "ctime_ns" not in {r[1] for r in conn.execute("PRAGMA main.table_info(notes)")}:
            # an index from before schema.py's migration 3, which this connection cannot run:
            # its rows read with folders.LEGACY (-1) for the ctime they do not hold
            conn.execute("CREATE TEMP VIEW notes AS SELECT *, -1 AS ctime_ns FROM main.notes")
    except sqlite3.DatabaseError:
        conn.close()
        raise
    return conn


def read_only_connection(path: Path) -> sqlite3.Connection:
    """The index of a read-only vault (ReadOnlyVault): through the owner's WAL files when they
    exist (its process may be writing), else as a snapshot (`immutable`: SQLite creates no
    -shm file, which would then belong to this user and could lock its owner out).
    IndexUnusable when it cannot be read at all (missing, corrupt, unreadable)."""
    live = all(path.with_name(path.name + end).exists() for end in ("-wal", "-shm"))
    if live:  # the owner's WAL files are there: read through them (never create them here)
        try:
            return _connect_ro(path, immutable=False)
        except sqlite3.DatabaseError:
            pass
    try:
        return _connect_ro(path, immutable=True)
    except sqlite3.DatabaseError as exc:
        raise IndexUnusable(f"cannot read index {path.name}: {exc}") from exc
