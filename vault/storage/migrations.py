"""Numbered, transactional schema migrations for rmh's SQLite files.

Migration i (from 0) takes a database from `PRAGMA user_version` i to i + 1. Each runs as one
script inside `BEGIN IMMEDIATE ... COMMIT` together with the version bump, so a crash leaves the
file at the old version or the new one, never between. A file newer than this rmh is refused.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from ..errors import SchemaTooNew


def migrate(conn: sqlite3.Connection, migrations: Sequence[str]) -> None:
    """Apply every migration past the file's user_version, each in its own transaction."""
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version > len(migrations):
        raise SchemaTooNew(version, len(migrations))
    for number in range(version, len(migrations)):
        script = (
            f"BEGIN IMMEDIATE;\n{migrations[number]}\n;\n"
            f"PRAGMA user_version = {number + 1};\nCOMMIT;"
        )
        try:
            conn.executescript(script)
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
