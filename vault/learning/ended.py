"""Ended sessions' rows and deleted notes' tombstones, kept bounded (learning v14).

Before v14 the state held one `SessionState` per session ever started and one tombstone
(`LearnedState.gone`) per note id ever deleted: every process that opens the ledger loaded
them all (session 30, NOTES-LROWS.md: 50,000 sessions with a delete each left ~100,000 rows and
~4 MB that a new process read before its first search). Both rules run inside the event that
crosses them (`apply`, state.py), so a replay makes the same cuts (`replay == live`) and a
kill -9 leaves the event and its cut or neither (one SQLite transaction, ledger.py).

Ended sessions. A session's row is what refuses its id once it ended (the server's and the
CLI's `session_error`; `Ledger._fresh` drops a second start or end), and what makes a late
event of it count in no session. Rows kept: every open session, and the `session_capacity`
(LearningParams) most recently ended ones; past 1.25 x that many ended, the oldest-ended (the
seq of their end event, then the id) are forgotten down to the capacity, as the co-use pairs
and the query log are (the slack amortises the cut). A forgotten id reads as never seen:
a client that starts it again starts a new session (the server's own ids are random 64-bit,
`s-` + 16 hex digits, so only a client that names its ids can meet this). The counts of the
forgotten ones (`sessions_forgotten`: ended, of them recovered) keep `rmh doctor`'s totals.

Tombstones. `gone` says "this note was deleted: an open session's end must not reward it
back to life" (`_end`). A session's end rewards only notes its own searches showed
(rewards.py: `best`), and an event naming the id after the delete makes it a live note again
(`_note`), so a tombstone can matter only for a note an open session had been shown before
the delete. v14 keeps exactly those: a delete or prune tombstones the notes the open
sessions' searches showed, and a session's end drops the tombstones no still-open session's
search showed. `gone` thus holds at most the notes the open sessions were shown.
Pure and deterministic: sorted, the event's seq, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from .rewards import Event

__all__ = ["forget_ended", "shown_by_open"]


def shown_by_open(open_events: Mapping[str, Sequence[Event]]) -> set[int]:
    """The notes the open sessions' searches showed: the only ones a later end can reward."""
    return {note for evs in open_events.values() for ev in evs if ev.kind == "search"
            for note, _, _ in ev.shown()}


def forget_ended(ended: Iterable[tuple[int, str]], count: int, capacity: int) -> list[str]:
    """The ids to forget when `count` sessions have ended (`ended`: their (end seq, id)):
    none up to 1.25 x `capacity`, else the oldest-ended down to `capacity`, sorted."""
    if count <= capacity + capacity // 4:
        return []
    return sorted(sid for _, sid in sorted(ended)[: count - capacity])
