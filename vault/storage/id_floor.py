"""Note ids a new index must not hand out.

Note ids are AUTOINCREMENT (schema.py): an index never gives one twice. What was learned from
use (`learned.sqlite`) is keyed by them, and outlives the index: `index.sqlite` may be deleted
and rebuilt. A rebuilt index would count from 1 again and give the old ids to other notes (by
path order), so each note would be ranked and audited with another note's learned state. So an
index that has not handed out an id yet starts above the highest id the learning log holds
(`floor`, read only then): the old state then belongs to no note (lost, as the index was),
never to the wrong one."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable


def reserve_ids(conn: sqlite3.Connection, floor: Callable[[], int] | None) -> None:
    """Make the next note id of the index on `conn` exceed `floor()`, when it has not handed
    out one yet (sqlite_sequence has no row for `notes`); otherwise (or no `floor`) nothing
    is read."""
    if floor is None or _handed_out(conn):
        return
    top = floor()
    if top <= 0:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        if not _handed_out(conn):  # another process may have indexed meanwhile
            conn.execute("INSERT INTO sqlite_sequence(name, seq) VALUES ('notes', ?)", (top,))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _handed_out(conn: sqlite3.Connection) -> bool:
    row = conn.execute("SELECT 1 FROM sqlite_sequence WHERE name = 'notes'").fetchone()
    return row is not None
