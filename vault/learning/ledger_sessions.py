"""The sessions of a ledger: the part of `Ledger` (ledger.py) that starts, ends and recovers
them.

A mixin, as ledger_audit.py's: `Ledger` provides the connection, its state loading and
`_append` (one committed transaction of events: the attributes declared below).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from . import ledger_sql as sql
from .formulas import LearningParams
from .state import Event, LearnedState

Batch = list[tuple[float, str, str | None, int | None, dict[str, Any]]]


class LedgerSessions:
    """Session start, end and recovery of the ledger `Ledger` is."""

    _conn: sqlite3.Connection
    _state: LearnedState
    params: LearningParams

    # provided by `Ledger`: its state reload and its one transaction of events
    _sync_state: Callable[..., None]
    _append: Callable[[Batch], list[str]]


    def start_session(self, session_id: str, now: float,
                      alive: Callable[[str], bool | None] | None = None,
                      owner: Mapping[str, Any] | None = None) -> list[str]:
        """Begin a session (recording its `owner` process, liveness.py) after recovering the
        dead open sessions: `alive(id) is False`, or idle for `stale_session_s` when there is
        no test or it answers None. Returns the recovered ids; a known session is kept."""
        stale = self._stale_sessions(now, keep=session_id, alive=alive)
        batch: list[tuple[float, str, str | None, int | None, dict[str, Any]]] = [
            (now, "end", s, None, {"recovered": True}) for s in stale]
        if session_id not in self._state.sessions:
            batch.append((now, "start", session_id, None, dict(owner or {})))
        return self._append(batch) if batch else []

    def end_session(self, session_id: str, now: float, answered: Sequence[int] = ()) -> bool:
        """Apply the session's evidence (`answered`: the notes the agent's answer used,
        answer.py) in one transaction; False when unknown or already ended."""
        self._sync_state()
        info = self._state.sessions.get(session_id)
        if info is None or info.ended is not None:
            return False
        data: dict[str, Any] = {"recovered": False}
        if answered:
            data["answered"] = sorted({int(n) for n in answered})
        return session_id in self._append([(now, "end", session_id, None, data)])

    def recover(self, now: float, alive: Callable[[str], bool | None] | None = None) -> list[str]:
        """Close every dead open session (what start_session does first)."""
        stale = self._stale_sessions(now, alive=alive)
        return self._append([(now, "end", s, None, {"recovered": True}) for s in stale]) \
            if stale else []

    def has_session(self, session_id: str) -> bool:
        """Whether a session of this id was ever started (ended or not)."""
        self._sync_state()
        return session_id in self._state.sessions

    def session_ended(self, session_id: str) -> bool:
        """Whether a session of this id was started and has ended (its id is spent)."""
        self._sync_state()
        info = self._state.sessions.get(session_id)
        return info is not None and info.ended is not None

    def open_sessions(self) -> list[str]:
        """The ids of the sessions started and not ended, sorted."""
        self._sync_state()
        return sorted(s for s, info in self._state.sessions.items() if info.ended is None)

    def session_owner(self, session_id: str) -> dict[str, Any]:
        """What the session's start event recorded about its process ({} if nothing)."""
        return sql.start_data(self._conn, session_id)

    def session_events(self, session_id: str) -> list[Event]:
        """The events of an open session so far (what its end will fold); [] when not open."""
        self._sync_state()
        return list(self._state.open_events.get(session_id, []))

    def _stale_sessions(self, now: float, keep: str | None = None,
                        alive: Callable[[str], bool | None] | None = None) -> list[str]:
        """Open sessions (other than `keep`) that are dead, sorted (see `start_session`)."""
        idle = now - self.params.stale_session_s
        verdicts = {s: None if alive is None else alive(s) for s in self.open_sessions()}
        return [s for s, v in verdicts.items() if s != keep and (
            v is False or (v is None and self._state.sessions[s].last_t <= idle))]
