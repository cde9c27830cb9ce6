"""One note's learned story: its Q, the events that mention it, and each session's rewards.

`note_history(events, note, params)` folds the log (the definition of replay, so the Q it
reports is the stored Q) and keeps, for `note`: every event naming it (a search that showed it,
with its rank; a read or a write of it; a write linking it) and every session end that rewarded
it, with the rewards by source and Q before and after. Pure: no clock, no SQL.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict
from typing import Any

from .evidence import passed_score, posterior_mean
from .formulas import LearningParams
from .state import Event, LearnedState, apply


def _mention(ev: Event, note: int) -> dict[str, Any] | None:
    """How `ev` mentions `note` (None when it does not)."""
    base: dict[str, Any] = {"seq": ev.seq, "t": ev.t, "kind": ev.kind, "session": ev.session}
    if ev.kind == "search":
        for n, rank, p in ev.shown():
            if n == note:
                return {**base, "rank": rank, "p": p, "query": ev.data.get("query", "")}
        return None
    if ev.kind == "write" and note in ev.data.get("linked", []) and ev.note != note:
        return {**base, "kind": "linked_from", "from": ev.note}
    if ev.note == note and ev.kind in ("read", "write", "archive", "restore", "delete"):
        extra = {"created": bool(ev.data.get("created"))} if ev.kind == "write" else {}
        return {**base, **extra}
    return None


def note_history(
    events: Iterable[Event], note: int, params: LearningParams, limit: int = 200,
    start: LearnedState | None = None,
) -> dict[str, Any]:
    """The note's learned state and history (module docstring); the last `limit` events;
    `start`: a compacted log's base (compact.py), folded into in place."""
    state = LearnedState() if start is None else start
    mentions: list[dict[str, Any]] = []
    rewards: list[dict[str, Any]] = []
    for ev in events:
        before = state.notes[note].q if note in state.notes else 0.0
        touched = apply(state, ev, params)
        m = _mention(ev, note)
        if m is not None:
            mentions.append(m)
        if note in touched.rewarded:
            rewards.append({"seq": ev.seq, "t": ev.t, "session": ev.session,
                            "recovered": bool(ev.data.get("recovered")),
                            "rewards": touched.rewarded[note],
                            "reward": sum(touched.rewarded[note].values()),
                            "q_before": before, "q_after": state.notes[note].q})
    ns = state.notes.get(note)
    return {
        "id": note,
        "state": None if ns is None else asdict(ns),
        "q": 0.0 if ns is None else ns.q,
        "prior": 0.0 if ns is None else ns.q,
        "used": 0.0 if ns is None else ns.used,
        "skipped": 0.0 if ns is None else ns.skipped,
        "use_rate": posterior_mean(*((0.0, 0.0) if ns is None else (ns.used, ns.skipped)),
                                   params),
        "use_mean": params.use_mean,
        # what a demotion by `[search] weights.passed` reads (evidence.py `passed_score`)
        "passed": 0.0 if ns is None or ns.q >= 0 else passed_score(ns.used, ns.skipped, params),
        "events": mentions[-limit:],
        "events_total": len(mentions),
        "rewards": rewards[-limit:],
        "last_seq": state.last_seq,
    }
