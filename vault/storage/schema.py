"""The index's schema: its numbered migrations, and the stat rows' key kept by triggers.

`MIGRATIONS` (storage/migrations.py runs them): notes, their raw links, skipped files, meta;
then the embedding cache; then each note's ctime (storage/folders.py: part of its identity; the
rows of an older index get folders.LEGACY: its first sync adopts each file's ctime).
With index.py the only code that runs SQL on the index.

The stat key (storage/stat_store.py says what it guards): three triggers on `notes`, after
every INSERT, DELETE, and UPDATE of a stat column (id, path, size, mtime_ns, inode,
content_hash, ctime_ns), add one to `stat_key.changes` and fold the changed row into
`stat_key.sum` (a one-row table of integers: one UPDATE per changed row, 3-9 us each, where two
updates of `meta`'s text values cost 6-12 us), a running sum modulo the prime P = 2^31 - 1:

    sum <- (sum * 1000003 + term(row)) mod P

where term(row) weighs the row's id, size, mtime, inode and ctime (each mod P), its path's length
and its last name character, four hex digits of its content hash, and the kind of change
(a polynomial rolling hash, Karp & Rabin 1987, "Efficient randomized pattern-matching
algorithms", over the sequence of changes). Every value stays below 2^52, so SQLite's 64-bit
integers never overflow into reals. The table and triggers are created when missing
(`install_stat_key`) and are not a numbered migration: `user_version` stays, an older rmh
still opens the index, and its writes bump the key too (the triggers live in the database).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from .migrations import statements

MIGRATIONS: tuple[str, ...] = (
    # 1: notes, their raw links, skipped files, meta.
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE notes (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        path TEXT NOT NULL UNIQUE,
        title TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        inode INTEGER NOT NULL,
        content_hash TEXT NOT NULL,
        frontmatter TEXT NOT NULL,
        frontmatter_error TEXT,
        aliases TEXT NOT NULL,
        tags TEXT NOT NULL,
        body TEXT NOT NULL
    );
    CREATE INDEX notes_hash ON notes(content_hash);
    CREATE TABLE links (
        src INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
        ord INTEGER NOT NULL,
        target TEXT NOT NULL,
        heading TEXT,
        block TEXT,
        alias TEXT,
        embed INTEGER NOT NULL,
        kind TEXT NOT NULL,
        PRIMARY KEY (src, ord)
    );
    CREATE TABLE skipped (path TEXT PRIMARY KEY, reason TEXT NOT NULL);
    INSERT INTO meta(key, value) VALUES ('generation', '0');
    """,
    # 2: embedding cache keyed by model fingerprint and chunk-text hash.
    """
    CREATE TABLE embeddings (
        model TEXT NOT NULL,
        key TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vec BLOB NOT NULL,
        PRIMARY KEY (model, key)
    );
    """,
    # 3: each note's ctime, in its identity (-1 = folders.LEGACY: sync.py adopts the file's).
    """
    ALTER TABLE notes ADD COLUMN ctime_ns INTEGER NOT NULL DEFAULT -1;
    """,
)

STAT_KEY_VERSION = 2  # 2: ctime_ns in the term and the watched columns
_P = 2147483647


def _term(r: str, tag: int) -> str:
    """A changed row (`new` or `old`) as an integer below 2^40, in SQL."""
    digits = "".join(f" + instr('0123456789abcdef', substr({r}.content_hash, {k}, 1))"
                     f" * {16 ** (k - 1)}" for k in range(1, 5))
    return (f"(({r}.id % {_P}) * 3 + ({r}.size % {_P}) * 5 + ({r}.mtime_ns % {_P}) * 7"
            f" + ({r}.inode % {_P}) * 11 + ({r}.ctime_ns % {_P}) * 23 + length({r}.path) * 13"
            f" + coalesce(unicode(substr({r}.path, -4, 1)), 0) * 17"
            f" + ({digits[3:]}) * 19 + {tag})")


def _body(r: str, tag: int) -> str:
    return (f"UPDATE stat_key SET changes = changes + 1, sum = (sum * 1000003 + {_term(r, tag)})"
            f" % {_P} WHERE one = 0;")


STAT_TRIGGERS = tuple(f"rmh_stat{STAT_KEY_VERSION}_{op}" for op in ("insert", "update", "delete"))
STAT_KEY_SQL = f"""
CREATE TABLE IF NOT EXISTS stat_key (one INTEGER PRIMARY KEY CHECK (one = 0),
                                     changes INTEGER NOT NULL, sum INTEGER NOT NULL);
INSERT OR IGNORE INTO stat_key(one, changes, sum) VALUES (0, 0, 0);
CREATE TRIGGER IF NOT EXISTS {STAT_TRIGGERS[0]} AFTER INSERT ON notes
BEGIN {_body("new", 1)} END;
CREATE TRIGGER IF NOT EXISTS {STAT_TRIGGERS[1]}
AFTER UPDATE OF id, path, size, mtime_ns, inode, content_hash, ctime_ns ON notes
BEGIN {_body("new", 2)} END;
CREATE TRIGGER IF NOT EXISTS {STAT_TRIGGERS[2]} AFTER DELETE ON notes
BEGIN {_body("old", 3)} END;
"""


def _stat_triggers(conn: sqlite3.Connection) -> list[str]:
    """The names of the stat key's triggers the index holds (of any version), sorted."""
    return sorted(r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'rmh\\_stat%'"
        " ESCAPE '\\'"))


def stat_key_installed(conn: sqlite3.Connection) -> bool:
    """Whether the index has this version's stat key table, row and triggers (and no other
    version's triggers)."""
    if _stat_triggers(conn) != sorted(STAT_TRIGGERS):
        return False
    if not conn.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'"
                        " AND name = 'stat_key'").fetchone()[0]:
        return False
    rows = conn.execute("SELECT count(*) FROM stat_key").fetchone()
    return int(rows[0]) == 1


def install_stat_key(conn: sqlite3.Connection) -> bool:
    """Create the stat key's table and triggers when missing (and drop another version's
    triggers), in one write transaction (the connection in autocommit mode, outside a
    transaction); True when they were missing: a persisted stat file beside the index may
    then name rows changed without them."""
    if stat_key_installed(conn):
        return False
    conn.execute("BEGIN IMMEDIATE")
    try:
        for name in _stat_triggers(conn):
            if name not in STAT_TRIGGERS:
                conn.execute(f"DROP TRIGGER {name}")
        for statement in statements(STAT_KEY_SQL):
            conn.execute(statement)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return True


def stat_key(conn: sqlite3.Connection) -> str | None:
    """The stat rows' key as the connection sees them now; None without the key rows."""
    try:
        row = conn.execute("SELECT changes, sum FROM stat_key WHERE one = 0").fetchone()
    except sqlite3.OperationalError:  # no such table: an index without the key
        return None
    return None if row is None else f"{STAT_KEY_VERSION}.{int(row[0])}.{int(row[1])}"


def stat_sample(conn: sqlite3.Connection, ids: Sequence[int]
                ) -> tuple[int | None, list[tuple[Any, ...]]]:
    """The index's largest note id, and the stat rows (id, path, size, mtime_ns, inode,
    content_hash, ctime_ns) of those of `ids` it holds (at most 500 ids)."""
    top = conn.execute("SELECT max(id) FROM notes").fetchone()[0]
    rows = conn.execute("SELECT id, path, size, mtime_ns, inode, content_hash, ctime_ns"
                        " FROM notes"
                        f" WHERE id IN ({','.join('?' * len(ids))})", list(ids)).fetchall()
    return (None if top is None else int(top)), [tuple(r) for r in rows]
