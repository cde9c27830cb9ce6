"""Session rewards: what one finished session's events say about each retrieved note.

A pure function of the session's events (in log order) and how many earlier sessions used each
note. Only notes that were retrieved in the session can earn anything; a note earns a positive
reward for what the agent did with it after retrieving it (cite, update, create-from, read,
recall) and a small negative reward when it was shown near the top and passed over while the
agent used another hit of the same search. The reward table and its reasons are in
vault/learning/formulas.py.
Every positive source is > 0 and `unused` < 0, so (with the signed Q update) use never lowers
Q and neglect never raises it.

What counts as use, whatever surface the call came through (JSON-RPC, MCP, REPL, CLI with a
session): a `read` event of the note; a `write` event whose resolved links name it (cite); a
`write` event of the note itself (update: any write path of the facade, replace or edit, logs
one); a `write` event creating a note after the note was read (create).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .formulas import (
    LearningParams,
    create_reward,
    recall_reward,
    unused_reward,
)

SOURCES = ("cite", "update", "create", "read", "recall", "unused")


@dataclass(frozen=True)
class Event:
    """One row of the append-only log. `data` holds only JSON values (lists, not tuples)."""

    seq: int
    t: float
    kind: str
    session: str | None
    note: int | None
    data: Mapping[str, Any]

    def shown(self) -> list[tuple[int, int, float]]:
        """A search's hits as (note, rank, propensity); empty for other kinds."""
        return [(int(i), int(r), float(p)) for i, r, p in self.data.get("shown", [])]


@dataclass(frozen=True)
class Outcome:
    """What one session earned: rewards[note][source], and the notes used after retrieval."""

    rewards: Mapping[int, Mapping[str, float]]
    used: frozenset[int]


def session_rewards(
    events: Sequence[Event],
    times_used: Callable[[int], int],
    params: LearningParams,
) -> Outcome:
    """Per note, per source, the reward this session earned (sources in `SOURCES`).

    `times_used(note)` is the number of earlier ended sessions in which the note was used
    after retrieval (for the re-recall reward 0.4 / times).
    """
    best: dict[int, tuple[int, float]] = {}  # note -> (best rank, its propensity)
    searches: list[list[tuple[int, int, float]]] = []
    read: set[int] = set()
    cited: set[int] = set()
    updated: set[int] = set()
    created_from: dict[int, int] = {}  # note -> rank credited
    for ev in events:
        if ev.kind == "search":
            shown = ev.shown()
            searches.append(shown)
            for note, rank, p in shown:
                if note not in best or rank < best[note][0]:
                    best[note] = (rank, p)
        elif ev.kind == "read" and ev.note is not None and ev.note in best:
            read.add(ev.note)
        elif ev.kind == "write" and ev.note is not None:
            for target in ev.data.get("linked", []):
                if target in best and target != ev.note:
                    cited.add(int(target))
            if ev.data.get("created"):
                for note in sorted(read):
                    if note != ev.note and note not in created_from:
                        created_from[note] = best[note][0]
            elif ev.note in best:
                updated.add(ev.note)
    used = read | cited | updated | set(created_from)
    out: dict[int, dict[str, float]] = {}

    def add(note: int, source: str, value: float) -> None:
        if value != 0.0:
            out.setdefault(note, {})[source] = value

    for note in sorted(used):
        if note in cited:
            add(note, "cite", params.reward_cite)
        if note in updated:
            add(note, "update", params.reward_update)
        if note in created_from:
            add(note, "create", create_reward(created_from[note], params))
        if note in read:
            add(note, "read", params.reward_read)
        add(note, "recall", recall_reward(times_used(note), params))
    passed: dict[int, float] = {}  # note -> strongest rejection evidence (max propensity)
    for shown in searches:
        if not any(note in used for note, _, _ in shown):
            continue
        for note, rank, p in shown:
            if rank < params.unused_top_n and note not in used:
                passed[note] = max(passed.get(note, 0.0), p)
    for note in sorted(passed):
        add(note, "unused", unused_reward(passed[note], params))
    return Outcome(out, frozenset(used))
