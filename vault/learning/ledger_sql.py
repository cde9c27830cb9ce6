"""The SQL of learned.sqlite: schema migrations, event rows, and derived-state rows.

Used only by vault/learning/ledger.py (which owns the transactions). Derived tables mirror
`LearnedState` one row per key, so loading them gives back exactly the state that wrote them
(SQLite REAL is an IEEE double: floats round-trip bit for bit).
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Callable, Generator, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ..errors import LedgerError
from ..storage.migrations import connect as connect
from ..storage.migrations import enter_wal
from ..storage.migrations import migrate as apply_migrations
from .damage import ROW_DAMAGE as ROW_DAMAGE
from .damage import event_of, note_of
from .snapshot import load_open
from .state import Event, LearnedState, Pair, SessionState, Touched

SCHEMA_VERSION = 3
WAL_LIMIT = 4 << 20  # bytes of WAL kept after a checkpoint (`migrate`)
EVENT_OVERHEAD = 32  # bytes one event row costs beside its payload (retention.py `cost`)
# an event's size as retention counts it (the payload's UTF-8 bytes plus the row), in SQL
_COST = f"{EVENT_OVERHEAD} + LENGTH(CAST(data AS BLOB))"

_MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE events(
        seq INTEGER PRIMARY KEY AUTOINCREMENT, t REAL NOT NULL, kind TEXT NOT NULL,
        session TEXT, note INTEGER, data TEXT NOT NULL);
    CREATE INDEX events_session ON events(session, seq);
    CREATE TRIGGER events_no_update BEFORE UPDATE ON events
        BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
    CREATE TRIGGER events_no_delete BEFORE DELETE ON events
        BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
    CREATE TABLE note(
        id INTEGER PRIMARY KEY, q REAL NOT NULL, q_updates INTEGER NOT NULL,
        activation REAL NOT NULL, as_of REAL NOT NULL, accesses INTEGER NOT NULL,
        sessions INTEGER NOT NULL, shown INTEGER NOT NULL, seen INTEGER NOT NULL,
        recalled INTEGER NOT NULL, archived_at REAL);
    CREATE TABLE pair(a INTEGER NOT NULL, b INTEGER NOT NULL, count INTEGER NOT NULL,
        last_t REAL NOT NULL, PRIMARY KEY(a, b)) WITHOUT ROWID;
    CREATE TABLE note_session(note INTEGER NOT NULL, session TEXT NOT NULL,
        PRIMARY KEY(note, session)) WITHOUT ROWID;
    CREATE TABLE session(id TEXT PRIMARY KEY, started REAL NOT NULL, last_t REAL NOT NULL,
        ended REAL, recovered INTEGER NOT NULL);
    CREATE TABLE reward(source TEXT PRIMARY KEY, n INTEGER NOT NULL, total REAL NOT NULL);
    CREATE TABLE gone(note INTEGER PRIMARY KEY);
    """,
    # 2 (LEARNING_VERSION 3): the Beta-PBM evidence per note (vault/learning/evidence.py)
    """
    ALTER TABLE note ADD COLUMN used REAL NOT NULL DEFAULT 0;
    ALTER TABLE note ADD COLUMN skipped REAL NOT NULL DEFAULT 0;
    ALTER TABLE note ADD COLUMN terms TEXT NOT NULL DEFAULT '{}';
    CREATE TABLE qterm(term TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
    """,
    # 3: retention (learning/compact.py): the base the oldest events were folded into, and
    # the log's size as retention counts it
    f"""
    CREATE TABLE base(id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL,
        t REAL NOT NULL, folded INTEGER NOT NULL, state TEXT NOT NULL, open TEXT NOT NULL);
    INSERT OR REPLACE INTO meta(key, value)
        SELECT 'log_bytes', CAST(COALESCE(SUM({_COST}), 0) AS TEXT) FROM events;
    """,
    "ALTER TABLE qterm ADD COLUMN last INTEGER NOT NULL DEFAULT 0;",  # 4: v13, query_log.py
    "ALTER TABLE session ADD COLUMN end_seq INTEGER NOT NULL DEFAULT 0;",  # 5: v14, ended.py
)

_NOTE_COLS = ("q", "q_updates", "activation", "as_of", "accesses", "sessions", "shown", "seen",
              "recalled", "archived_at", "used", "skipped")
_EVENT_COLS = "seq, t, kind, session, note, data"
WORD = "w:"  # qterm keys of query words (state.word_df); a phrase never holds ":"


def schema_version() -> int:
    """The `user_version` of a file this rmh has migrated to its last migration."""
    return len(_MIGRATIONS)


def migrate(conn: sqlite3.Connection) -> None:
    """Busy timeout first (several processes may open a fresh file at once), WAL +
    synchronous=FULL, then apply numbered migrations (user_version; storage/migrations.py).
    The WAL is cut back to WAL_LIMIT after a checkpoint: a compaction's large transaction
    (compact.py) would otherwise leave it at its high-water mark until the ledger closes."""
    conn.execute("PRAGMA busy_timeout=10000")
    enter_wal(conn, 10000)
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute(f"PRAGMA journal_size_limit={WAL_LIMIT}")
    apply_migrations(conn, _MIGRATIONS)


GUARDS = (
    "CREATE TRIGGER events_no_update BEFORE UPDATE ON events "
    "BEGIN SELECT RAISE(ABORT, 'events are append-only'); END",
    "CREATE TRIGGER events_no_delete BEFORE DELETE ON events "
    "BEGIN SELECT RAISE(ABORT, 'events are append-only'); END",
)


def drop_guards(conn: sqlite3.Connection) -> None:
    """Lift the append-only triggers (inside a rewrite's transaction: erasure, retention)."""
    conn.execute("DROP TRIGGER IF EXISTS events_no_update")
    conn.execute("DROP TRIGGER IF EXISTS events_no_delete")


def restore_guards(conn: sqlite3.Connection) -> None:
    for trigger in GUARDS:
        conn.execute(trigger)


def delete_events(conn: sqlite3.Connection, where: str, args: tuple[Any, ...]) -> None:
    """Delete the events `where` holds, the triggers lifted for it (caller's transaction)."""
    drop_guards(conn)
    conn.execute(f"DELETE FROM events WHERE {where}", args)
    restore_guards(conn)


def vacuum(conn: sqlite3.Connection) -> None:
    """Rewrite the file without free pages, then empty the WAL (erasure: freed pages and old
    WAL frames would otherwise keep deleted text)."""
    conn.execute("VACUUM")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


@contextmanager
def read_snapshot(conn: sqlite3.Connection) -> Iterator[None]:
    """Several reads from one state of the file (a deferred transaction: in WAL mode its first
    read fixes what it sees), or from the caller's transaction when one is open. A base and
    the events after it read in two statements could straddle another process's compaction,
    which deletes events the older base lacks: a replay missed them (session 26 review)."""
    if conn.in_transaction:
        yield
        return
    conn.execute("BEGIN")
    try:
        yield
    finally:
        if conn.in_transaction:
            conn.execute("COMMIT")


def get_meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    return None if row is None else str(row[0])


def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))


def insert_event(conn: sqlite3.Connection, t: float, kind: str, session: str | None,
                 note: int | None, data: dict[str, Any]) -> tuple[int, int]:
    """Append one event; (its seq, its size as retention counts it: `event_cost`)."""
    if not math.isfinite(t):  # NaN would be stored as NULL: an untyped IntegrityError
        raise LedgerError(f"an event's time must be finite Unix seconds, not {t!r}")
    text = payload(data)
    cur = conn.execute(
        "INSERT INTO events(t, kind, session, note, data) VALUES (?, ?, ?, ?, ?)",
        (t, kind, session, note, text),
    )
    return int(cur.lastrowid or 0), event_cost(text)


def payload(data: Mapping[str, Any]) -> str:
    """An event's payload as the log stores it (canonical JSON)."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def event_cost(text: str) -> int:
    """The size retention counts for an event whose stored payload is `text` (= _COST)."""
    return EVENT_OVERHEAD + len(text.encode("utf-8"))


def log_bytes(conn: sqlite3.Connection) -> int:
    """The log's size as retention counts it (kept in `meta`, updated with each append;
    counted afresh when that row does not decode, damage.py)."""
    try:
        return int(get_meta(conn, "log_bytes") or 0)
    except ValueError:
        return recount_log_bytes(conn)


def add_log_bytes(conn: sqlite3.Connection, n: int) -> int:
    """Count `n` more bytes of log (inside the caller's transaction); the new total."""
    total = log_bytes(conn) + n
    set_meta(conn, "log_bytes", str(total))
    return total


def recount_log_bytes(conn: sqlite3.Connection) -> int:
    """Count the log's size afresh (after a rewrite or a compaction)."""
    total = int(conn.execute(f"SELECT COALESCE(SUM({_COST}), 0) FROM events").fetchone()[0])
    set_meta(conn, "log_bytes", str(total))
    return total


def costs_newest_first(conn: sqlite3.Connection, since: int) -> Iterator[tuple[int, int]]:
    """(seq, cost) of the events after `since`, newest first."""
    for seq, cost in conn.execute(
            f"SELECT seq, {_COST} FROM events WHERE seq > ? ORDER BY seq DESC", (since,)):
        yield int(seq), int(cost)


def load_base(conn: sqlite3.Connection) -> tuple[int, float, int, str, str] | None:
    """The stored base (seq, t, folded, state, open) of a compacted log; None when none."""
    row = conn.execute("SELECT seq, t, folded, state, open FROM base WHERE id = 1").fetchone()
    return None if row is None else (int(row[0]), float(row[1]), int(row[2]), str(row[3]),
                                     str(row[4]))


def base_seq(conn: sqlite3.Connection) -> int:
    """The last event folded into the base (0: none; replay reads the events after it)."""
    row = conn.execute("SELECT seq FROM base WHERE id = 1").fetchone()
    return 0 if row is None else int(row[0])


def iter_events(conn: sqlite3.Connection, since: int = 0) -> Generator[Event, None, None]:
    """The events after `since`; closing the iterator (or a damaged row) ends its statement
    (an unfinished one kept the connection's checkpoint at close "table is locked")."""
    cur = conn.execute(f"SELECT {_EVENT_COLS} FROM events WHERE seq > ? ORDER BY seq", (since,))
    try:
        for row in cur:
            yield event_of(row)
    finally:
        cur.close()




def start_data(conn: sqlite3.Connection, session: str) -> dict[str, Any]:
    """The payload of a session's start event ({} when it has none)."""
    row = conn.execute("SELECT data FROM events WHERE session=? AND kind='start' "
                       "ORDER BY seq LIMIT 1", (session,)).fetchone()
    return {} if row is None else dict(json.loads(row[0]))


def event_counts(conn: sqlite3.Connection) -> dict[str, int]:
    rows = conn.execute("SELECT kind, COUNT(*) FROM events GROUP BY kind ORDER BY kind")
    return {str(k): int(n) for k, n in rows}


def load_state(conn: sqlite3.Connection) -> LearnedState:
    """The derived state as stored (open sessions' events are re-read from the log)."""
    st = LearnedState()
    for row in conn.execute(f"SELECT id, {', '.join(_NOTE_COLS)}, terms FROM note ORDER BY id"):
        st.notes[int(row[0])] = note_of(_NOTE_COLS, row[1:-1], row[-1])
    for t, n, last in conn.execute("SELECT term, n, last FROM qterm ORDER BY term"):
        word = str(t).startswith(WORD)  # a query word's stem (expansion.py), not a phrase
        key = str(t)[len(WORD):] if word else str(t)
        (st.word_df if word else st.query_df)[key] = int(n)
        (st.word_last if word else st.query_last)[key] = int(last)
    for a, b, count, last_t in conn.execute("SELECT a, b, count, last_t FROM pair ORDER BY a, b"):
        st.pairs[(int(a), int(b))] = Pair(int(count), float(last_t))
    for note, session in conn.execute("SELECT note, session FROM note_session"):
        st.note_sessions.add((int(note), str(session)))
    for sid, started, last_t, ended, recovered, end_seq in conn.execute(
        "SELECT id, started, last_t, ended, recovered, end_seq FROM session ORDER BY id"
    ):
        st.sessions[str(sid)] = SessionState(
            float(started), float(last_t), None if ended is None else float(ended),
            bool(recovered), int(end_seq))
    for source, n, total in conn.execute("SELECT source, n, total FROM reward ORDER BY source"):
        st.rewards[str(source)] = (int(n), float(total))
    st.gone = {int(r[0]) for r in conn.execute("SELECT note FROM gone")}
    st.searches = int(get_meta(conn, "searches") or 0)
    st.last_seq = int(get_meta(conn, "last_seq") or 0)
    forgotten, *kept = json.loads(get_meta(conn, "query_log") or "[0, 0, 0]")
    st.terms_forgotten, st.terms_kept = int(forgotten), (int(kept[0]), int(kept[1]))
    ended, recovered = json.loads(get_meta(conn, "sessions_forgotten") or "[0, 0]")
    st.sessions_forgotten = (int(ended), int(recovered))
    base = conn.execute("SELECT seq, open FROM base WHERE id = 1").fetchone()
    since, kept = (0, {}) if base is None else (int(base[0]), load_open(str(base[1])))
    for sid in sorted(s for s, info in st.sessions.items() if info.ended is None):
        st.open_events[sid] = kept.get(sid, []) + [
            event_of(r)
            for r in conn.execute(
                f"SELECT {_EVENT_COLS} FROM events WHERE session=? "
                "AND kind NOT IN ('start', 'end') AND seq > ? AND seq <= ? ORDER BY seq",
                (sid, since, st.last_seq),
            )
        ]
    return st


def write_rows(conn: sqlite3.Connection, st: LearnedState, touched: Touched) -> None:
    """Upsert (or delete, when the key is gone from the state) every touched row."""
    for note in sorted(touched.notes):
        ns = st.notes.get(note)
        if ns is None:
            conn.execute("DELETE FROM note WHERE id=?", (note,))
        else:
            terms = json.dumps({"s": ns.skip_terms, "u": ns.use_terms, "w": ns.use_words,
                                "a": ns.use_queries}, sort_keys=True)
            conn.execute(
                f"INSERT OR REPLACE INTO note(id, {', '.join(_NOTE_COLS)}, terms) "
                f"VALUES (?{', ?' * len(_NOTE_COLS)}, ?)",
                (note, *(getattr(ns, c) for c in _NOTE_COLS), terms),
            )
    for a, b in sorted(touched.pairs):
        pair = st.pairs.get((a, b))
        if pair is None:
            conn.execute("DELETE FROM pair WHERE a=? AND b=?", (a, b))
        else:
            conn.execute(
                "INSERT OR REPLACE INTO pair(a, b, count, last_t) VALUES (?, ?, ?, ?)",
                (a, b, pair.count, pair.last_t),
            )
    for note, session in sorted(touched.note_sessions):
        if (note, session) in st.note_sessions:
            conn.execute("INSERT OR IGNORE INTO note_session VALUES (?, ?)", (note, session))
        else:
            conn.execute("DELETE FROM note_session WHERE note=? AND session=?", (note, session))
    for sid in sorted(touched.sessions):
        info = st.sessions.get(sid)
        if info is None:  # forgotten (ended.py)
            conn.execute("DELETE FROM session WHERE id=?", (sid,))
        else:
            conn.execute(
                "INSERT OR REPLACE INTO session(id, started, last_t, ended, recovered, end_seq) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (sid, info.started, info.last_t, info.ended, int(info.recovered), info.end_seq),
            )
    for source in sorted(touched.sources):
        n, total = st.rewards[source]
        conn.execute("INSERT OR REPLACE INTO reward VALUES (?, ?, ?)", (source, n, total))
    for note in sorted(touched.gone):
        if note in st.gone:
            conn.execute("INSERT OR IGNORE INTO gone VALUES (?)", (note,))
        else:
            conn.execute("DELETE FROM gone WHERE note=?", (note,))
    rows = [(t, st.query_df, st.query_last, t) for t in sorted(touched.terms)]
    for key, df, last, term in rows + [(w, st.word_df, st.word_last, WORD + w)
                                       for w in sorted(touched.words)]:
        if key in df:
            conn.execute("INSERT OR REPLACE INTO qterm(term, n, last) VALUES (?, ?, ?)",
                         (term, df[key], last.get(key, 0)))
        else:  # forgotten (query_log.py)
            conn.execute("DELETE FROM qterm WHERE term=?", (term,))
    set_meta(conn, "searches", str(st.searches))
    set_meta(conn, "query_log", json.dumps([st.terms_forgotten, *st.terms_kept]))
    set_meta(conn, "sessions_forgotten", json.dumps(list(st.sessions_forgotten)))
    set_meta(conn, "last_seq", str(st.last_seq))


def replace_state(conn: sqlite3.Connection, st: LearnedState) -> None:
    """Delete every derived row and write `st` in full (inside the caller's transaction)."""
    for table in ("note", "pair", "note_session", "session", "reward", "gone", "qterm"):
        conn.execute(f"DELETE FROM {table}")
    touched = Touched(notes=set(st.notes), pairs=set(st.pairs),
                      note_sessions=set(st.note_sessions), sessions=set(st.sessions),
                      sources=set(st.rewards), gone=set(st.gone), terms=set(st.query_df),
                      words=set(st.word_df))
    write_rows(conn, st, touched)


def repair(conn: sqlite3.Connection, fold: Callable[[], LearnedState]) -> None:
    """Derived rows that do not decode (ROW_DAMAGE) rewritten from the log (`fold`: its
    replay): in the caller's write transaction when one is open, else in one of its own."""
    if conn.in_transaction:
        replace_state(conn, fold())
    else:
        rebuild(conn, fold, None)


def rebuild(conn: sqlite3.Connection, fold: Callable[[], LearnedState],
            stamp: str | None, done: Callable[[], object] = lambda: None) -> None:
    """Every derived row rewritten from the log (`fold`: its replay, base and events), in
    one write transaction, with `stamp` recorded; with a `stamp` the transaction first reads
    the stored one, and writes nothing when it is that already: another process rebuilt the
    ledger meanwhile (all the processes that open an upgraded ledger at once see the old
    stamp, and each would fold the whole log again, holding the write lock as long, while
    the next ones wait)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if stamp is None or get_meta(conn, "stamp") != stamp:
            replace_state(conn, fold())
            if stamp is not None:
                set_meta(conn, "stamp", stamp)
        done()  # the fault seam's two operations of a transaction (storage/faults.py)
        conn.execute("COMMIT")
        done()
    except BaseException:
        if conn.in_transaction:  # SQLITE_FULL rolls back by itself
            conn.execute("ROLLBACK")
        raise
