"""What the ask loop (harness/ask.py) carries between searches: its knobs, the vault
operations it needs, the queries it runs and the notes gathered with their values.

A note's value is its best route's value (`offer`: the question's relative score, or a
sub-query's or a link's discounted one) plus the feedback evidence added to it (`add`,
CombSUM); the best route is its receipt. The answer set is the search's head in its order,
then the most valuable of the rest (harness/ask.py docstring for the formulas).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from .ask_evidence import Group, covered, note_terms

MAX_PASSES = 3
QUERIES_PER_PASS = 4
MAX_SUBQUESTIONS = 3
NAMES_PER_NOTE = 3
SPREAD_FROM = 3
MAX_LINKED = 12
FLOOR = 0.3
DECAY = 0.9
RESOLVE_TOP = 3
UNCOVERED_WEIGHT = 0.5
POOL = 3
FEEDBACK_FROM = 3
FEEDBACK_TERMS = 3
FEEDBACK_WEIGHT = 0.5
KEEP_PER = 5  # the search's first budget // KEEP_PER hits lead the answer set, in its order


@dataclass(frozen=True)
class LoopParams:
    """The loop's knobs (defaults: the module constants); the benchmarks ablate with them."""

    max_passes: int = MAX_PASSES
    floor: float = FLOOR
    decay: float = DECAY
    resolve_top: int = RESOLVE_TOP
    links: bool = True  # value the link neighbours of relevant notes
    bridges: bool = True  # sub-queries from bridge entities
    uncovered: bool = True  # the sub-query of the groups no note covers
    feedback: bool = True  # pass 1's relevance-feedback round
    pool: int = POOL  # pass 1 searches the question pool * k deep
    keep_first: int | None = None  # search's head kept first (None: budget // KEEP_PER)


class Searchable(Protocol):
    """The vault operations the loop needs, JSON in and out (as harness.tools.VaultCalls)."""

    def search(self, query: Any, k: Any = 10) -> dict[str, Any]: ...

    def read(self, note: Any) -> dict[str, Any]: ...

    def neighbors(self, note: Any, hops: Any = 1) -> list[str]: ...

    def document_frequency(self, tokens: Any) -> list[int]: ...


@dataclass(frozen=True)
class Found:
    """One note of the answer set: its value, the pass and the query that found it."""

    note: str
    value: float
    pass_no: int
    query: str

    def to_json(self) -> dict[str, Any]:
        return {"note": self.note, "value": self.value, "pass": self.pass_no,
                "query": self.query}


@dataclass(frozen=True)
class Query:
    text: str
    origin: str  # question | feedback | bridge | uncovered | model
    parent: str | None
    gap: tuple[Group, ...]
    weight: float
    entity: str = ""  # the bridge entity (origin "bridge")


class Gathered:
    """Notes read so far, their terms and best values (module docstring)."""

    def __init__(self, library: Searchable, groups: list[Group], params: LoopParams) -> None:
        self.library = library
        self.p = params
        self.groups = groups
        self.records: dict[str, Mapping[str, Any]] = {}
        self.terms: dict[str, frozenset[str]] = {}
        self.best: dict[str, Found] = {}  # value = base (best route) + extra (feedback)
        self.base: dict[str, float] = {}
        self.extra: dict[str, float] = {}
        self.spread: set[str] = set()
        self.direct: list[str] = []  # pass-1 hits, search order

    def read(self, note: str) -> frozenset[str]:
        if note not in self.records:
            self.records[note] = self.library.read(note)
            self.terms[note] = note_terms(self.records[note])
        return self.terms[note]

    def offer(self, note: str, value: float, pass_no: int, query: str) -> bool:
        """A route's value: the best route counts (its pass and query are the receipt);
        True when the note rose to value >= FLOOR by it."""
        if self.base.get(note, -1.0) >= value:
            return False
        self.base[note] = value
        return self._set(note, pass_no, query)

    def add(self, note: str, amount: float, pass_no: int, query: str) -> bool:
        """Feedback evidence adds to the note's value (CombSUM); the receipt stays the best
        route's (or this query's, for a note only feedback found)."""
        if amount <= 0:
            return False
        self.extra[note] = self.extra.get(note, 0.0) + amount
        old = self.best.get(note)
        return self._set(note, old.pass_no if old else pass_no, old.query if old else query)

    def _set(self, note: str, pass_no: int, query: str) -> bool:
        old = self.best.get(note)
        value = self.base.get(note, 0.0) + self.extra.get(note, 0.0)
        self.best[note] = Found(note, value, pass_no, query)
        floor = self.p.floor
        return value >= floor and (old is None or old.value < floor or value > old.value)

    def gap(self, note: str) -> tuple[Group, ...]:
        have = self.read(note)
        return tuple(g for g in self.groups if not g.terms <= have)

    def answer_set(self, budget: int) -> list[Found]:
        """The search's head (its first `keep` hits, in its order), then the most valuable
        of the rest that reach the floor (or are pass-1 hits), up to `budget` (module doc)."""
        keep = self.p.keep_first if self.p.keep_first is not None else max(1, budget // KEEP_PER)
        fixed = set(self.direct)
        first = [self.best[n] for n in self.direct[:min(keep, budget)]]
        chosen = {f.note for f in first}
        rest = [f for f in self.ranked() if f.note not in chosen
                and (f.note in fixed or f.value >= self.p.floor)]
        return first + rest[: max(0, budget - len(first))]

    def ranked(self) -> list[Found]:
        order = {n: i for i, n in enumerate(self.best)}
        return sorted(self.best.values(), key=lambda f: (-f.value, order[f.note]))

    def missing(self) -> list[Group]:
        have: frozenset[str] = frozenset().union(
            *(self.terms[f.note] for f in self.best.values() if f.value >= self.p.floor))
        return [g for g in self.groups if not g.terms <= have]

    def resolved(self) -> bool:
        have: frozenset[str] = frozenset().union(
            *(self.terms[f.note] for f in self.ranked()[: self.p.resolve_top]
              if f.value >= self.p.floor))
        return len(covered(self.groups, have)) == len(self.groups)
