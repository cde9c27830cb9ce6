"""Session evidence: what one finished session's events say about each retrieved note.

A pure function of the session's events (in log order), the end event's payload and how many
earlier sessions used each note. Only notes that were retrieved in the session can earn
anything. What counts as use, whatever surface the call came through (JSON-RPC, MCP, REPL,
CLI with a session), each a signal with its weight (formulas.py; summed per session and capped
by evidence.py):
- read: a `read` event of the note after a search showed it;
- cite: a `write` event whose resolved links name it;
- update: a `write` event of the note itself (any write path of the facade logs one);
- create: a `write` event creating a note after the note was read;
- answer: the end event's `answered` ids: notes whose distinctive terms the agent's answer
  (given to session.end) uses (vault/learning/answer.py decides, at the session's end);
- recall: a used note that earlier sessions used too (re-found in a later session).
A note shown at rank < unused_top_n in a list the agent engaged with (it read, cited,
rewrote or built on another hit of that same search) and used nowhere in the session was
passed over: `passed[note]` is the largest examination probability it was shown with, which
evidence.py turns into the examined-and-not-used weight. Only those acts engage a list: the
answer is read by answer.py, which misses notes the answer did draw on (on the knowledge
workload's training sessions it recovered 71 of the 100 evidence notes whose first sentence
the answer quoted: a note whose only distinctive term there is a year, or whose name other
retrieved notes share), so a note absent from the answer is not evidence that it was passed
over, and an answer that uses a note does not make its list's other hits skipped (v4; in v3
it did, and the evidence notes the answer reader missed sank: exposure/Q Pearson -0.004).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .formulas import LearningParams, create_weight, recall_weight

SOURCES = ("answer", "cite", "create", "read", "recall", "skipped", "update")


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
    """One session's evidence: use signals[note][source] (each > 0), the notes passed over
    (note -> largest examination probability shown with), and the notes used."""

    signals: Mapping[int, Mapping[str, float]]
    passed: Mapping[int, float]
    used: frozenset[int]


def session_rewards(
    events: Sequence[Event],
    times_used: Callable[[int], int],
    params: LearningParams,
    answered: Sequence[int] = (),
) -> Outcome:
    """Per note, the session's use signals and pass-overs (module docstring).

    `times_used(note)` is the number of earlier ended sessions in which the note was used
    after retrieval (for the recall signal 0.5 / times); `answered` the notes the agent's
    answer used (the end event's payload).
    """
    best: dict[int, int] = {}  # note -> best rank
    searches: list[list[tuple[int, int, float]]] = []
    read: set[int] = set()
    cited: set[int] = set()
    updated: set[int] = set()
    created_from: dict[int, int] = {}  # note -> rank credited
    for ev in events:
        if ev.kind == "search":
            shown = ev.shown()
            searches.append(shown)
            for note, rank, _ in shown:
                if note not in best or rank < best[note]:
                    best[note] = rank
        elif ev.kind == "read" and ev.note is not None and ev.note in best:
            read.add(ev.note)
        elif ev.kind == "write" and ev.note is not None:
            for target in ev.data.get("linked", []):
                if target in best and target != ev.note:
                    cited.add(int(target))
            if ev.data.get("created"):
                for note in sorted(read):
                    if note != ev.note and note not in created_from:
                        created_from[note] = best[note]
            elif ev.note in best:
                updated.add(ev.note)
    answer = {int(n) for n in answered if int(n) in best}
    acted = read | cited | updated | set(created_from)  # what engages a list (docstring)
    used = acted | answer
    out: dict[int, dict[str, float]] = {}

    def add(note: int, source: str, value: float) -> None:
        if value > 0.0:
            out.setdefault(note, {})[source] = value

    for note in sorted(used):
        if note in cited:
            add(note, "cite", params.weight_cite)
        if note in updated:
            add(note, "update", params.weight_update)
        if note in created_from:
            add(note, "create", create_weight(created_from[note], params))
        if note in read:
            add(note, "read", params.weight_read)
        if note in answer:
            add(note, "answer", params.weight_answer)
        add(note, "recall", recall_weight(times_used(note), params))
    passed: dict[int, float] = {}  # note -> strongest examination evidence (max propensity)
    for shown in searches:
        if not any(note in acted for note, _, _ in shown):
            continue
        for note, rank, p in shown:
            if rank < params.unused_top_n and note not in used:
                passed[note] = max(passed.get(note, 0.0), p)
    return Outcome(out, dict(sorted(passed.items())), frozenset(used))
