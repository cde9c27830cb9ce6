"""Erasure in the event log: rewrite the append-only log without the erased payloads.

The log is append-only for every writer but this one (its triggers refuse UPDATE and DELETE).
Erasure (`rmh forget`) is the one sanctioned rewrite: inside one transaction the triggers are
dropped, the log is rewritten, the triggers are made again, a `redact` event is appended (it
records counts only, never what was erased), and every derived row is rebuilt from the
rewritten log, so the learned state stays exactly a replay of the log that remains.

What a rewrite removes, for erased note ids E and erased strings S (case-insensitive, whole
words: storage/mentions.py):
- every event about a note in E (`note` in E: reads, writes, deletes, archives of it);
- from the others, every mention of a note in E: the `shown` rows of a search, the `linked`
  ids of a write, the `spread` boosts, the `notes` of a prune;
- a search's `query` that names a string of S (it becomes "", the ranks stay), or that the log
  cut at QUERY_CHARS and that ends in the beginning of a string of S (its cut end may be the
  start of an erased line: "... the launch code is un");
- a session id that names a string of S is replaced by a digest-free placeholder
  ("redacted-<seq of its first event>"), so sessions stay distinct.
Events keep their `seq` and time: an audit of what remains still lines up with the seqs it
cited. A compacted log's base (compact.py) is erased as snapshot.py `redact_state` says, in the
same transaction, and the derived rows are rebuilt from it and the rewritten events.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..storage.mentions import ending_in_part, mentioning
from . import ledger_sql as sql
from .compact import base_state, store_base
from .formulas import LearningParams
from .replay import fold
from .snapshot import needle_words, redact_state
from .state import Event, LearnedState

QUERY_CHARS = 500  # how much of a query text the log keeps (learning/ledger.py)



@dataclass(frozen=True)
class Redaction:
    """What a rewrite did to the log."""

    dropped: int  # events removed (about an erased note)
    rewritten: int  # events kept with a payload changed

    def to_json(self) -> dict[str, int]:
        return {"events_dropped": self.dropped, "events_rewritten": self.rewritten}




def _without(rows: Any, ids: frozenset[int]) -> Any:
    """A list of ids or of [id, ...] rows, less those whose id is erased."""
    if not isinstance(rows, list):
        return rows
    out = []
    for row in rows:
        head = row[0] if isinstance(row, list) and row else row
        if isinstance(head, int) and head in ids:
            continue
        out.append(row)
    return out


def redact_event(ev: Event, ids: frozenset[int], names: Callable[[str], bool],
                 sessions: dict[str, str],
                 cut: Callable[[str], bool] = lambda _: False) -> Event | None:
    """The event as the rewritten log keeps it, or None when it goes; `cut`: whether a query
    the log cut short ends in the beginning of an erased string (mentions.ending_in_part)."""
    if ev.note is not None and ev.note in ids:
        return None
    data = dict(ev.data)
    for key in ("shown", "linked", "spread", "notes", "answered"):
        if key in data:
            data[key] = _without(data[key], ids)
    query = data.get("query")
    if isinstance(query, str) and (names(query) or (len(query) >= QUERY_CHARS and cut(query))):
        data["query"] = ""
    session = ev.session
    if session is not None and names(session):
        session = sessions.setdefault(session, f"redacted-{ev.seq}")
    return Event(ev.seq, ev.t, ev.kind, session, ev.note, data)


def rewrite_log(conn: sqlite3.Connection, events: Iterable[Event], ids: Iterable[int],
                needles: Sequence[str], now: float,
                sessions: dict[str, str] | None = None) -> Redaction:
    """Rewrite the `events` table of `conn` (inside the caller's transaction) and append the
    `redact` event; the caller rebuilds the derived rows afterwards. `sessions`: the renamed
    session ids so far (the base's, `redact_base`), extended here."""
    erased = frozenset(int(i) for i in ids)
    names = mentioning(needles)  # whole words (storage/mentions.py), built once
    cut = ending_in_part(needles)
    sessions = {} if sessions is None else sessions
    kept: list[Event] = []
    dropped = rewritten = 0
    for ev in events:
        new = redact_event(ev, erased, names, sessions, cut)
        if new is None:
            dropped += 1
            continue
        if new != ev:
            rewritten += 1
        kept.append(new)
    sql.drop_guards(conn)
    conn.execute("DELETE FROM events")
    conn.executemany(
        "INSERT INTO events(seq, t, kind, session, note, data) VALUES (?, ?, ?, ?, ?, ?)",
        [(ev.seq, ev.t, ev.kind, ev.session, ev.note,
          json.dumps(ev.data, sort_keys=True, separators=(",", ":"))) for ev in kept])
    sql.restore_guards(conn)
    done = Redaction(dropped, rewritten)
    conn.execute("INSERT INTO events(t, kind, session, note, data) VALUES (?, 'redact', NULL, "
                 "NULL, ?)", (float(now), json.dumps(done.to_json(), sort_keys=True,
                                                      separators=(",", ":"))))
    return done


def redact_base(conn: sqlite3.Connection, ids: Iterable[int], needles: Sequence[str],
                sessions: dict[str, str]) -> tuple[int, LearnedState | None]:
    """Erase in the base of a compacted log (snapshot.py `redact_state`; inside the caller's
    transaction), filling `sessions` with its renamed ids; (its seq, the erased base), (0,
    None) when the log has none."""
    seq, t, folded, base = base_state(conn)
    if base is None:
        return 0, None
    erased = frozenset(int(i) for i in ids)
    names, cut = mentioning(needles), ending_in_part(needles)
    redact_state(base, erased, names, lambda q: names(q) or cut(q), needle_words(needles),
                 lambda ev: redact_event(ev, erased, names, sessions, cut), sessions)
    store_base(conn, seq, t, folded, base)
    return seq, base


def redact_ledger(conn: sqlite3.Connection, ids: Sequence[int], needles: Sequence[str],
                  now: float, params: LearningParams,
                  done: Callable[[], object] = lambda: None) -> Redaction:
    """The whole erasure of one ledger file: the rewrite and the rebuild of every derived row
    from what remains in one transaction, then VACUUM and a truncated WAL so no freed page or
    old frame keeps the erased text. The caller reloads its in-memory state afterwards.
    `done`: called before COMMIT, after it, and after the VACUUM (the fault seam,
    storage/faults.py: a kill between them leaves the erasure's intent, which the next open
    makes again, rewrite and VACUUM both)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        sessions: dict[str, str] = {}
        since, base = redact_base(conn, ids, needles, sessions)
        redaction = rewrite_log(conn, list(sql.iter_events(conn)), ids, needles, now, sessions)
        sql.recount_log_bytes(conn)
        sql.replace_state(conn, fold(sql.iter_events(conn, since=since), params, base))
        done()
        conn.execute("COMMIT")
        done()  # a kill here: the rows are rewritten, freed pages still hold the text
    except BaseException:
        if conn.in_transaction:  # SQLite rolls back by itself on SQLITE_FULL: a ROLLBACK
            conn.execute("ROLLBACK")  # then raised "no transaction", hiding the full disk
        raise
    sql.vacuum(conn)
    done()
    return redaction
