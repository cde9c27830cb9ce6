"""Retention of the learning log: how much one session may append, and compaction.

The log is append-only and every learned number is its replay, so without a bound it grows
with use (about 4 KB per `search(k=100)`: the event lists every hit shown) until the disk is
full. Two bounds, `LedgerLimits` (configured in rmh.toml's [learning]):

- `session_bytes`: what one session's events (searches, reads, writes) may add to the log. An
  event past it is not recorded: the call still answers, and says so (a search's result
  carries `learning: "not recorded: ..."`). Session start and end are always recorded (the
  end applies the evidence of what was recorded).
- `log_bytes`: past it, `compact` folds the oldest events into the stored base state and
  deletes them, keeping the newest events up to half of it. The definition of replay
  becomes `fold(events after the base, start = base)` (`replay_log`), so the stored learned
  state still equals a replay, and it is unchanged by compaction (the same events, folded
  in two steps: `apply` is a left fold). A session open at the cut keeps its start event (its
  serving process, liveness.py) and its events so far live on in the base (`open_events`,
  snapshot.py); they are bounded by `session_bytes`.

Sizes are counted as each event's payload bytes plus `EVENT_OVERHEAD` (ledger_sql.py), the
same in SQL and here. Compaction is one SQLite write transaction: a kill -9 part way leaves
the log as it was. What it gives up: a replay as of a time before the base (`as_of`, `rmh
replay --until`) and a note history from before it can no longer be rebuilt (a LedgerError
naming the argument and the horizon: a bad argument on every surface), and a change of
LearningParams rebuilds from the base rather than from the first event. Deterministic: no
clock is read; the cut depends on the log alone.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass

from ..errors import LedgerError
from . import ledger_sql as sql
from .damage import ROW_DAMAGE
from .formulas import LearningParams
from .replay import fold
from .snapshot import dump_state, load_state
from .state import Event, LearnedState, apply


@dataclass(frozen=True)
class LedgerLimits:
    """The log's bounds (module docstring); 0 turns a bound off."""

    session_bytes: int = 8 << 20
    log_bytes: int = 64 << 20

    def __post_init__(self) -> None:
        if self.session_bytes < 0 or self.log_bytes < 0:
            raise ValueError("LedgerLimits must be >= 0")


NO_LIMITS = LedgerLimits(0, 0)


class SessionBudget:
    """What each session has added to the log, against `session_bytes` (in memory; a session
    first seen here counts the events it has open in the log so far)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.spent: dict[str, int] = {}

    def refuse(self, session: str | None, opened: Sequence[Event], n: int) -> str | None:
        """Why an event of `n` bytes of `session` must not be recorded (None: it may)."""
        if session is None or not self.limit:
            return None
        if session not in self.spent:
            self.spent[session] = sum(sql.event_cost(sql.payload(e.data)) for e in opened)
        if self.spent[session] + n <= self.limit:
            return None
        return (f"this session's learning budget is spent ({self.limit} bytes of log: "
                "rmh.toml [learning] session_bytes)")

    def charge(self, session: str | None, n: int) -> None:
        if session is not None and session in self.spent:
            self.spent[session] += n


@dataclass(frozen=True)
class Compaction:
    """What one compaction did."""

    seq: int  # the last event now in the base
    folded: int  # events folded into the base this time
    bytes_before: int
    bytes_after: int


def base_state(conn: sqlite3.Connection) -> tuple[int, float, int, LearnedState | None]:
    """(seq, time, events folded, state) of the stored base: the last event folded into it,
    the latest time among them, how many; (0, -inf, 0, None) when the log was never cut."""
    try:
        base = sql.load_base(conn)
        if base is None:
            return 0, float("-inf"), 0, None
        return base[0], base[1], base[2], load_state(base[3], base[4])
    except ROW_DAMAGE as exc:  # the base is the log's beginning: nothing rebuilds it
        raise LedgerError(f"the learning log's base is damaged ({type(exc).__name__}: "
                          f"{exc}); the log cannot be replayed") from exc


def store_base(conn: sqlite3.Connection, seq: int, t: float, folded: int,
               st: LearnedState) -> None:
    """Write the base (inside the caller's transaction)."""
    state, opened = dump_state(st)
    conn.execute("INSERT OR REPLACE INTO base VALUES (1, ?, ?, ?, ?, ?)",
                 (seq, t, folded, state, opened))


def replay_log(conn: sqlite3.Connection, params: LearningParams, *, until_seq: int | None = None,
               until_t: float | None = None) -> LearnedState:
    """The state replayed from the base and the events after it (with `until_seq` /
    `until_t`: those before the first with a larger seq / time); LedgerError naming the
    argument (`param`: a bad argument, harness/errors.py) when the limit is before the base,
    whose events are gone."""
    with sql.read_snapshot(conn):  # the base and the events after it, of one state
        seq, t, _, start = base_state(conn)
        if (until_seq is not None and until_seq < seq) or (until_t is not None and until_t < t):
            raise LedgerError(f"before the learning log's base: it keeps its events from seq "
                              f"{seq + 1} (time {t!r}) on, the older ones folded into the base "
                              "(retention, rmh.toml [learning] log_bytes)",
                              "until" if until_seq is not None and until_seq < seq else "as_of")
        logged = sql.iter_events(conn, since=seq)
        with closing(logged):  # its statement ends even when an event is damaged (damage.py)
            events: Iterator[Event] = logged
            if until_seq is not None:
                events = (ev for ev in events if ev.seq <= until_seq)
            if until_t is not None:  # the log up to its first event past until_t: a
                # clock stepped back later logs events with older times after it, and a
                # filter on t took them in, rewriting the past (LROWS_clock.py.txt)
                events = itertools.takewhile(lambda ev: ev.t <= until_t, events)
            return fold(events, params, start)


def _cut(conn: sqlite3.Connection, since: int, keep: int) -> int | None:
    """The newest event to fold so that the events after it hold at most `keep` bytes."""
    kept = 0
    for seq, c in sql.costs_newest_first(conn, since):
        if kept + c > keep:
            return seq
        kept += c
    return None


def compact(conn: sqlite3.Connection, params: LearningParams, limit: int,
            done: Callable[[], object] = lambda: None) -> Compaction | None:
    """When the log holds more than `limit` bytes, fold its oldest events into the base so
    that at most limit // 2 remain (one transaction; module docstring); None when it holds
    no more than `limit`. The caller reloads its state (it is unchanged, but the log is).
    `done`: called with the rows written before COMMIT and after it (the fault seam's two
    operations of a transaction, storage/faults.py)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        before = sql.log_bytes(conn)
        cut = None if before <= limit else _cut(conn, sql.base_seq(conn), limit // 2)
        if cut is None:
            conn.execute("COMMIT")
            return None
        since, t, total, start = base_state(conn)
        st = start if start is not None else LearnedState()
        folded = 0
        for ev in sql.iter_events(conn, since=since):
            if ev.seq > cut:
                break
            apply(st, ev, params)
            t, folded = max(t, ev.t), folded + 1
        store_base(conn, cut, t, total + folded, st)
        sql.delete_events(conn, "seq <= ? AND NOT (kind = 'start' AND session IN "
                          "(SELECT value FROM json_each(?)))",
                          (cut, json.dumps(sorted(st.open_events))))
        after = sql.recount_log_bytes(conn)
        done()  # a kill here: SQLite rolls the fold back, the log is as it was
        conn.execute("COMMIT")
        done()
    except BaseException:
        if conn.in_transaction:  # SQLITE_FULL rolls back by itself
            conn.execute("ROLLBACK")
        raise
    return Compaction(cut, folded, before, after)
