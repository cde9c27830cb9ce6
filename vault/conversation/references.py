"""Unclear references filled by counting, never by guessing.

NDM (seed 000, step 5): "The whole rule is a count: one candidate fills it in and records the
evidence; two or more keep the question open until someone says which; zero records it as
unknown."

An unclear reference is a personal pronoun ("she", "he", "her", "him": candidates are named,
non-speaker entities) or a thing word ("it", "that place", "this place", "that one": candidates
are "thing" entities). Candidates are counted in the last `WINDOW` = 3 events before the turn.
The evidence of a resolution is every (tick, key) where the chosen entity appears in the window.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .entities import Entity

WINDOW = 3
_PERSON = ("she", "he", "her", "him")
_THING = ("that place", "this place", "that one", "it")
_PATTERN = re.compile(r"\b(" + "|".join(_THING[:3] + _PERSON + _THING[3:]) + r")\b", re.I)
_KIND = {**{w: "person" for w in _PERSON}, **{w: "thing" for w in _THING}}


@dataclass(frozen=True)
class Reference:
    """One unclear expression and what the count decided.

    status: "resolved" (exactly one candidate: `entity` is its key), "open" (two or more:
    `candidates` lists them), "unknown" (none).
    """

    expr: str
    kind: str
    status: str
    entity: str | None
    candidates: tuple[str, ...]
    evidence: tuple[tuple[int, str], ...]

    def to_json(self) -> dict[str, object]:
        return {
            "expr": self.expr,
            "kind": self.kind,
            "status": self.status,
            "entity": self.entity,
            "candidates": list(self.candidates),
            "evidence": [{"tick": t, "entity": k} for t, k in self.evidence],
        }


def _wanted(kind: str, entity: Entity) -> bool:
    return entity.kind == ("name" if kind == "person" else "thing")


def unclear(text: str) -> tuple[tuple[str, str], ...]:
    """The distinct unclear expressions of `text` as (expr casefolded, kind), in text order."""
    seen: dict[str, str] = {}
    for m in _PATTERN.finditer(text):
        expr = " ".join(m.group(1).casefold().split())
        seen.setdefault(expr, _KIND[expr])
    return tuple(seen.items())


def resolve_references(
    text: str, history: Sequence[tuple[int, Sequence[Entity]]], window: int = WINDOW
) -> tuple[Reference, ...]:
    """Count candidates for each unclear expression of `text` in the last `window` events.

    `history` holds the events before this turn as (tick, entities), oldest first.
    """
    recent = list(history)[-window:] if window > 0 else []
    out: list[Reference] = []
    for expr, kind in unclear(text):
        candidates: dict[str, list[int]] = {}
        for tick, entities in recent:
            for e in entities:
                if _wanted(kind, e):
                    candidates.setdefault(e.key, []).append(tick)
        keys = tuple(sorted(candidates))
        if len(keys) == 1:
            key = keys[0]
            evidence = tuple((t, key) for t in sorted(set(candidates[key])))
            out.append(Reference(expr, kind, "resolved", key, keys, evidence))
        else:
            out.append(Reference(expr, kind, "open" if keys else "unknown", None, keys, ()))
    return tuple(out)
