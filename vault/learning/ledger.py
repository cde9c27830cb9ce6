"""`VAULT/.rmh/learned.sqlite`: the append-only event log and the learned state derived from it.

The only module that runs SQL on learned.sqlite. It implements the facade's `UsageRecorder`:
every call appends one event and writes the rows that event changed (learning/state.py)
in ONE transaction, committed before the call returns. Durability: WAL journal with
synchronous=FULL, so each commit fsyncs the WAL (an acknowledged event survives kill -9 and
power loss); SQLite's default auto-checkpoint (1000 pages) bounds the WAL, and `close()`
checkpoints. Triggers make the events table append-only (erasure, redact.py, and retention,
compact.py, lift them inside their own transactions). Retention: `limits` bound what one
session may append and fold the oldest events into a stored base past a size, so replay is
`fold(events after the base, start = base)` (compact.py).

Time: the ledger reads no clock of its own. Protocol calls (which carry no time) and `now()`
ask the injected `clock()`; session start/end take `now` explicitly (the harness: time.time).
If the stored LEARNING_VERSION or LearningParams differ from the current ones, the derived
state is rebuilt from the events on open, so stored numbers always match `replay()`.
Writes and reloads are serialised by a lock; the readers (warmth, prior, ...) expect the
facade's single caller thread. Another process writing the same file is noticed through
`PRAGMA data_version` and the state is reloaded before the next call.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ..errors import DiskFull, LedgerError
from ..full_disk import is_disk_full
from ..storage.faults import operation_made
from ..storage.linkgraph import Adjacency
from ..untyped_errors import out_of_descriptors
from . import ledger_sql as sql
from .activation import spread
from .compact import NO_LIMITS, Compaction, LedgerLimits, SessionBudget, compact, replay_log
from .edges import WeightedEdges
from .formulas import LearningParams, stamp_of, utility
from .ledger_reads import LedgerReads
from .ledger_sessions import LedgerSessions
from .pair_table import PairTable
from .redact import QUERY_CHARS
from .replay import fold, learned_of
from .state import Event, LearnedState, apply
from .usage import NO_LINKS, finite_clock
from .vectors import NoteVectors

__all__ = ["LEDGER_FILE", "Ledger", "LedgerLimits", "fold", "learned_of"]

LEDGER_FILE = "learned.sqlite"


class Ledger(LedgerSessions, LedgerReads):
    """Event log + derived learned state for one vault (see module docstring)."""

    def __init__(self, conn: sqlite3.Connection, clock: Callable[[], float],
                 params: LearningParams, limits: LedgerLimits = NO_LIMITS,
                 fault_after: int | None = None) -> None:
        self._conn, self._closed, self.limits = conn, False, limits
        self.read_only = False  # over a read-only file (ReadOnlyUsage): `close` checkpoints not
        self.fault_after = fault_after  # storage/faults.py: each transaction is two operations
        self._budget = SessionBudget(limits.session_bytes)
        self._lock = threading.RLock()  # writes and reloads; reads assume one caller thread
        self.clock, self.params = finite_clock(clock), params
        self._edges: tuple[tuple[int, float], WeightedEdges] | None = None
        self._version, self._vectors = -1, NoteVectors()
        self._state, self._pairs = LearnedState(), PairTable()
        self._sync_state(force=True)

    @property
    def state(self) -> LearnedState:
        """The live learned state (reloaded first if another connection committed)."""
        self._sync_state()
        return self._state

    @classmethod
    def open(cls, path: Path, *, clock: Callable[[], float], params: LearningParams | None = None,
             limits: LedgerLimits | None = None, fault_after: int | None = None) -> Ledger:
        """Open (creating if needed) the ledger file; rebuilds derived state if params changed.
        `limits`: the log's bounds (compact.py; default LedgerLimits()); `fault_after`: the
        store's fault injection, counting this ledger's transactions (storage/faults.py)."""
        params = params or LearningParams()
        conn: sqlite3.Connection | None = None
        try:  # connecting fails too: the file is a folder, a FIFO
            conn = sql.connect(path, isolation_level=None, check_same_thread=False)
            sql.migrate(conn)
        except sqlite3.DatabaseError as exc:
            exhausted = out_of_descriptors(path)  # before the connection frees its own
            if conn is not None:
                conn.close()
            if exhausted is not None:  # ulimit -n: not a damaged ledger
                raise exhausted from exc
            if is_disk_full(exc):  # ulimit -f, whose EFBIG SQLite says as a "disk I/O error"
                raise DiskFull(path.name) from exc
            raise LedgerError(f"{path.name}: {exc}") from exc
        stamp = stamp_of(params)
        ledger = cls(conn, clock, params, LedgerLimits() if limits is None else limits,
                     fault_after)
        try:
            if sql.get_meta(conn, "stamp") != stamp:
                ledger.rebuild(stamp)
        except BaseException:
            ledger.close(checkpoint=False)  # a failed open leaves no connection behind
            raise
        return ledger

    def close(self, *, checkpoint: bool = True) -> None:
        """Checkpoint (unless opened read only) and close; closing twice is harmless."""
        if self._closed:
            return
        self._closed = True
        try:
            if checkpoint and not self.read_only:  # a checkpoint writes the file
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            self._conn.close()

    # -- state loading and writing -------------------------------------------------------------

    def _sync_state(self, force: bool = False) -> None:
        with self._lock:
            try:  # rows that do not decode: rewritten from the log first (damage.py)
                self._load(force)
            except sql.ROW_DAMAGE:
                sql.repair(self._conn, lambda: replay_log(self._conn, self.params))
                self._load(True)

    def _load(self, force: bool) -> None:
        with sql.read_snapshot(self._conn):  # every table of one state
            version = int(self._conn.execute("PRAGMA data_version").fetchone()[0])
            if force or version != self._version:
                self._state = sql.load_state(self._conn)
                self._version = version
                self._pairs.invalidate()

    def _append(
        self, events: Sequence[tuple[float, str, str | None, int | None, dict[str, Any]]]
    ) -> list[str]:
        """Append events and their derived rows in one committed transaction.

        The state is synced inside the write lock, so it is current when the events fold in;
        this connection's own COMMIT leaves `PRAGMA data_version` unchanged, so the version
        recorded there stays valid (asking again after COMMIT could hide another writer's).
        A session's `end` (or `start`) that another writer already logged, seen only here
        inside the lock, is dropped: a session ends once, whoever recovers it. Returns the
        sessions whose `end` this call logged.
        """
        ended: list[str] = []
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                self._sync_state()
                added = 0
                for when, kind, session, note, data in events:
                    if not self._fresh(kind, session):
                        continue
                    ended += [session] if kind == "end" and session is not None else []
                    t = float(when)
                    seq, size = sql.insert_event(conn, t, kind, session, note, data)
                    added += size
                    ev = Event(seq, t, kind, session, note, json.loads(json.dumps(data)))
                    touched = apply(self._state, ev, self.params)
                    self._pairs.mark(touched.pairs, touched.notes)
                    sql.write_rows(conn, self._state, touched)
                total = sql.add_log_bytes(conn, added)
                self._counted()  # a kill here: SQLite rolls it all back
                conn.execute("COMMIT")
                self._counted()
            except BaseException:
                if conn.in_transaction:  # SQLITE_FULL rolls back by itself
                    conn.execute("ROLLBACK")
                self._sync_state(force=True)
                raise
            if self.limits.log_bytes and total > self.limits.log_bytes:
                self.compact()
        return ended

    def _counted(self) -> None:
        """One file operation of this ledger made (storage/faults.py: killed at the N-th)."""
        operation_made(self.fault_after)

    def _fresh(self, kind: str, session: str | None) -> bool:
        """Whether a session event is news to the state: no second start, no second end."""
        info = None if session is None else self._state.sessions.get(session)
        if kind == "start":
            return info is None
        return kind != "end" or (info is not None and info.ended is None)

    def _record(self, session: str | None, kind: str, note: int | None,
                data: dict[str, Any]) -> str | None:
        """Append one usage event of `session` within its budget (compact.py); why not when
        it was not recorded."""
        size = sql.event_cost(sql.payload(data))
        with self._lock:
            self._sync_state()
            why = self._budget.refuse(session, self._state.open_events.get(session or "", []),
                                      size)
            if why is None:
                self._append([(self.clock(), kind, session, note, data)])
                self._budget.charge(session, size)
        return why

    def compact(self) -> Compaction | None:
        """Fold the oldest events into the base when the log is past `limits.log_bytes`
        (compact.py); what it did, None when nothing (or that bound is off)."""
        if not self.limits.log_bytes:
            return None
        with self._lock:
            try:
                return compact(self._conn, self.params, self.limits.log_bytes, self._counted)
            finally:
                self._sync_state(force=True)

    # -- UsageRecorder: facts in -----------------------------------------------------------------

    def _spread(self, seeds: list[tuple[int, float]], graph: Adjacency) -> list[list[float]]:
        return [[n, b] for n, b in spread(seeds, graph, self.params)]

    def on_search(self, session: str | None, query: str, shown: Sequence[tuple[int, int, float]],
                  graph: Adjacency = NO_LINKS) -> str | None:
        rows = [[int(i), int(r), float(p)] for i, r, p in shown]
        seeds = [
            (int(i), utility(int(r))) for i, r, _ in shown if int(r) < self.params.activation_top
        ]
        data = {"query": query[:QUERY_CHARS], "shown": rows, "spread": self._spread(seeds, graph)}
        return self._record(session, "search", None, data)

    def on_read(self, session: str | None, note_id: int,
                graph: Adjacency = NO_LINKS) -> str | None:
        return self._record(session, "read", note_id, {"spread": self._spread([(note_id, 1.0)],
                                                                              graph)})

    def on_write(self, session: str | None, note_id: int, created: bool,
                 linked_ids: Sequence[int], graph: Adjacency = NO_LINKS) -> str | None:
        data = {"created": bool(created), "linked": sorted({int(i) for i in linked_ids}),
                "spread": self._spread([(note_id, 1.0)], graph)}
        return self._record(session, "write", note_id, data)

    def on_delete(self, note_id: int) -> None:
        self._append([(self.clock(), "delete", None, note_id, {})])

    def archive(self, note_id: int, now: float, reason: str = "manual") -> None:
        """Take a note out of default ranking (reversible; its file is untouched)."""
        self.archive_all([(note_id, reason)], now)

    def archive_all(self, notes: Sequence[tuple[int, str]], now: float) -> list[int]:
        """`archive` each (note id, reason) not archived yet, in one transaction: all or none
        (a second call after a kill archives what the first did not). The ids archived."""
        with self._lock:
            self._sync_state()
            todo = [(n, why) for n, why in notes if (ns := self._state.notes.get(n)) is None
                    or ns.archived_at is None]
            if todo:
                self._append([(now, "archive", None, n, {"reason": why}) for n, why in todo])
        return [n for n, _ in todo]

    def restore(self, note_id: int, now: float) -> bool:
        """Bring an archived note back; False when it was not archived."""
        self._sync_state()
        ns = self._state.notes.get(note_id)
        if ns is None or ns.archived_at is None:
            return False
        self._append([(now, "restore", None, note_id, {})])
        return True

    def prune_missing(self, existing_ids: Iterable[int], now: float) -> list[int]:
        """Forget learned rows of notes no longer in the index; returns the ids pruned."""
        self._sync_state()
        alive = set(existing_ids)
        named = set(self._state.notes) | {n for pair in self._state.pairs for n in pair}
        missing = sorted(named - alive)
        if missing:
            self._append([(now, "prune", None, None, {"notes": missing})])
        return missing
