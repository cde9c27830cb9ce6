"""Stability of extraction (NDM seed, step 7), as something a user can run and read.

"Compare the sets of colliding event pairs with the Jaccard index ... On a real conversation
the measured value was 0.22, which is how name drift was discovered and then fixed by
normalising names." Two extraction runs of one conversation are compared:

- ``supplied``: run A uses the entities the conversation file supplies per turn (turns without
  a list are extracted), run B extracts every turn automatically;
- ``normalisation``: run A uses the normalised rows (`entities.normalise`: determiners dropped,
  last word singularised, possessives owned), run B keys each row by its text as written,
  casefolded only (what the rows were before normalisation).

J(A, B) = |A ∩ B| / |A ∪ B| over the collision pairs (`incidence.jaccard`); each pair that only
one run finds is listed with the turns and the rows that made it collide in that run.
`conversation_from_corpus` rebuilds a conversation from its L0 turn notes (supplied entity
lists are not stored in notes, so ``supplied`` needs the source file).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from ..errors import ConversationFormatError
from ..storage.corpus import Corpus
from .entities import Entity, _fold
from .events import Event, build_events, incidence
from .formats import Conversation, Session, Turn
from .incidence import collision_pairs, jaccard

MODES: tuple[str, ...] = ("supplied", "normalisation")


@dataclass(frozen=True)
class PairDiff:
    """A collision pair found by one run only, with the rows it shares there."""

    run: str  # "A" | "B"
    i: int
    j: int
    turns: tuple[str, str]
    shared: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"run": self.run, "ticks": [self.i, self.j], "turns": list(self.turns),
                "shared": list(self.shared)}


@dataclass(frozen=True)
class Stability:
    """J of two runs' collision sets and the pairs that differ (A-only first, then B-only)."""

    conversation: str
    mode: str
    runs: tuple[str, str]
    pairs: tuple[int, int]  # collision pairs found by A and by B
    common: int
    jaccard: float
    differing: tuple[PairDiff, ...]

    def to_json(self) -> dict[str, Any]:
        return {"conversation": self.conversation, "mode": self.mode,
                "runs": {"A": self.runs[0], "B": self.runs[1]},
                "pairs": {"A": self.pairs[0], "B": self.pairs[1], "both": self.common},
                "jaccard": round(self.jaccard, 6),
                "differing": [d.to_json() for d in self.differing]}


def _unsupplied(conv: Conversation) -> Conversation:
    return replace(conv, sessions=tuple(
        replace(s, turns=tuple(replace(t, entities=None) for t in s.turns))
        for s in conv.sessions))


def _as_written(events: Sequence[Event]) -> tuple[Event, ...]:
    def raw(e: Entity) -> Entity:
        return e if e.kind in ("speaker", "date") else Entity(_fold(e.text), e.text, e.kind)
    return tuple(replace(ev, entities=tuple(raw(e) for e in ev.entities)) for ev in events)


def _shared(ev_a: Event, ev_b: Event) -> tuple[str, ...]:
    return tuple(sorted(set(ev_a.non_speaker_keys()) & set(ev_b.non_speaker_keys())))


def stability(conv: Conversation, mode: str = "supplied") -> Stability:
    """Compare two extraction runs of `conv` (module docstring)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if mode == "supplied":
        if not any(t.entities is not None for t in conv.turns()):
            raise ConversationFormatError(
                "no turn supplies entities: compare with mode 'normalisation' instead")
        a = build_events(conv)
        b = build_events(_unsupplied(conv))
        runs = ("supplied entities", "automatic extraction")
    else:
        a = build_events(conv)
        b = _as_written(a)
        runs = ("normalised rows", "rows as written (casefolded only)")
    pa, pb = collision_pairs(incidence(a)), collision_pairs(incidence(b))
    sa, sb = set(pa), set(pb)
    diffs = [PairDiff(run, i, j, (evs[i].turn_id, evs[j].turn_id), _shared(evs[i], evs[j]))
             for run, only, evs in (("A", sorted(sa - sb), a), ("B", sorted(sb - sa), b))
             for i, j in only]
    return Stability(conv.conversation_id, mode, runs, (len(sa), len(sb)), len(sa & sb),
                     jaccard(pa, pb), tuple(diffs))


def conversation_from_corpus(corpus: Corpus, cid: str) -> Conversation:
    """The conversation `cid` rebuilt from its L0 turn notes (tick order, sessions in order of
    their first turn); ConversationFormatError when the vault holds no such turns."""
    rows: list[tuple[int, str, Turn]] = []
    for i in range(len(corpus)):
        fm = corpus.frontmatter[i]
        if fm.get("tier") != "L0" or str(fm.get("conversation", "")) != cid:
            continue
        try:
            tick, when = int(fm["tick"]), datetime.fromisoformat(str(fm["date"]))
        except (KeyError, TypeError, ValueError):
            continue
        speaker = str(fm.get("speaker", ""))
        text = corpus.bodies[i].strip()
        text = text[len(speaker) + 2:] if text.startswith(f"{speaker}: ") else text
        rows.append((tick, str(fm.get("session", "")),
                     Turn(str(fm.get("turn", "")), speaker, text, when,
                          str(fm.get("role", "user")))))
    if not rows:
        raise ConversationFormatError(f"no turn notes of conversation {cid!r} in the vault")
    rows.sort(key=lambda r: r[0])
    sessions: dict[str, list[Turn]] = {}
    for _, sid, turn in rows:
        sessions.setdefault(sid, []).append(turn)
    return Conversation(cid, tuple(Session(sid, ts[0].when, tuple(ts))
                                   for sid, ts in sessions.items()))
