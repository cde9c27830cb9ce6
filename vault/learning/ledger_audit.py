"""Replay and audit of a ledger: the part of `Ledger` (ledger.py) that reads the log whole.

A mixin: `Ledger` provides the connection, the lock, the parameters, its state loading and its
co-use edges (the attributes declared below; there is no instance of this class alone).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any

from . import ledger_sql as sql
from .compact import base_state, replay_log
from .edges import WeightedEdges
from .explain import note_history
from .formulas import LearningParams
from .health import health
from .redact import redact_ledger
from .state import Event, LearnedState


class LedgerAudit:
    """Replay, history, rebuild, erasure and health of the ledger `Ledger` is."""

    _conn: sqlite3.Connection
    _lock: AbstractContextManager[Any]
    _state: LearnedState
    params: LearningParams
    clock: Callable[[], float]

    # provided by `Ledger`: its state reload (`force`: whatever the file's data_version); by
    # `LedgerReads` (ledger_reads.py): the co-use edges at a time
    _sync_state: Callable[..., None]
    _counted: Callable[[], None]  # one operation made (storage/faults.py)
    _edges_at: Callable[[float], WeightedEdges]

    def events(self) -> Iterator[Event]:
        """Every event in log order."""
        return sql.iter_events(self._conn)

    def replay(self, until: int | None = None) -> LearnedState:
        """The state rebuilt from the log alone, its base and events (nothing is written);
        with `until`, from the events with seq <= until (the state right after that event;
        LedgerError when it is inside the base, compact.py)."""
        with self._lock:  # its read transaction is the connection's, as a write's is
            return replay_log(self._conn, self.params, until_seq=until)

    def note_history(self, note_id: int) -> dict[str, Any]:
        """One note's Q, prior, events and rewards, replayed from the log (learning/explain.py;
        of a compacted log, from its base on)."""
        with self._lock, sql.read_snapshot(self._conn):  # the base and its events, one state
            seq, _, _, start = base_state(self._conn)
            return note_history(sql.iter_events(self._conn, since=seq), note_id, self.params,
                                start=start)

    def state_as_of(self, t: float) -> LearnedState:
        """The state replayed from the events logged before the first one past time t
        (nothing is written): once the log passed t, later events (a clock stepped back)
        never change it."""
        with self._lock:
            return replay_log(self._conn, self.params, until_t=t)

    def rebuild(self, stamp: str | None = None) -> LearnedState:
        """Rewrite every derived row from the log (one transaction; with `stamp`, unless
        another process has rebuilt under it meanwhile: ledger_sql.rebuild); the new state."""
        sql.rebuild(self._conn, lambda: replay_log(self._conn, self.params), stamp,
                    self._counted)
        self._sync_state(force=True)
        return self._state

    def redact(self, ids: Sequence[int], needles: Sequence[str]) -> dict[str, int]:
        """Erasure: the log rewritten without the erased payloads and every derived row
        rebuilt from it, the file vacuumed (learning/redact.py)."""
        with self._lock:
            done = redact_ledger(self._conn, ids, needles, self.clock(), self.params,
                                 self._counted)
            self._sync_state(force=True)
        return done.to_json()

    def event_counts(self) -> dict[str, int]:
        return sql.event_counts(self._conn)

    def health(self, existing_ids: Iterable[int], now: float) -> dict[str, Any]:
        """The learning audit (vault/learning/health.py) against the index's live note ids."""
        self._sync_state()
        edges = self._edges_at(now).w.tolist()
        return health(self._state, self.event_counts(), edges, existing_ids,
                      self.params.query_log_capacity, self.params.session_capacity)
