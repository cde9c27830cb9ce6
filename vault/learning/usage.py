"""The seam between the Vault facade and learning: what the facade reports, what it reads back.

The facade calls a `UsageRecorder` after each search, read and write so learning can log events
(keyed by stable note ids); it asks for the `Learned` vectors (warmth, Q prior, co-occurrence)
when it ranks. `NullUsage` is the recorder used when learning is off: it records
nothing and returns zeros, so ranking is exactly the learning-free ranking.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Protocol

import numpy as np
import numpy.typing as npt

from ..errors import LedgerError
from ..storage.linkgraph import Adjacency
from .edges import WeightedEdges
from .topic import NO_HELD, Held

NO_LINKS: Adjacency = MappingProxyType({})


# per used note with kept queries: (corpus position, q > 0, its queries newest first; asked.py)
Asked = tuple[tuple[int, float, tuple[str, ...]], ...]


@dataclass(frozen=True)
class Learned:
    """What one search reads of learning, aligned with the corpus ids it was asked for."""

    warmth: npt.NDArray[np.float64]  # activation boost per note, in [0, 1]
    prior: npt.NDArray[np.float64]  # bounded Q prior per note, added after fusion
    cooccurrence: WeightedEdges  # learned edges between positions, weights in [0, 1]
    seq: int = 0  # the last event of the log folded into this state (0: none)
    clock: float = 0.0  # the time the warmth and edges were evaluated at
    free: npt.NDArray[np.float64] | None = None  # q (1 - gate) c, or q < 0 (replay.free_of)
    expansion: npt.NDArray[np.float64] | None = None  # replay.expansion_of per note
    asked: Asked = ()  # the query-log neighbours' profiles (vectors.NoteVectors.asked)
    whole: npt.NDArray[np.bool_] | None = None  # score wholly about the query (replay.whole_of)

    @classmethod
    def none(cls, n: int, clock: float = 0.0) -> Learned:
        """Nothing learned about `n` notes: zeros (one read-only array for both) and no
        edges."""
        zeros = np.zeros(n, dtype=np.float64)
        zeros.flags.writeable = False
        return cls(zeros, zeros, WeightedEdges.empty(), clock=clock)


class UsageRecorder(Protocol):
    """Receives usage facts from the facade. Each call must be durable before it returns.

    The facade passes what learning needs with each fact — the link graph by note id
    (`graph`) for spreading activation — so learning never calls back into the facade."""

    def on_search(
        self,
        session: str | None,
        query: str,
        shown: Sequence[tuple[int, int, float]],
        graph: Adjacency = NO_LINKS,
    ) -> str | None:
        """`shown` is (note id, rank from 0, probability of being shown at that rank). Each
        `on_*` returns why the fact was not recorded (a session's budget spent: learning/
        compact.py), None when it was."""

    def on_read(self, session: str | None, note_id: int,
                graph: Adjacency = NO_LINKS) -> str | None:
        ...

    def on_write(
        self,
        session: str | None,
        note_id: int,
        created: bool,
        linked_ids: Sequence[int],
        graph: Adjacency = NO_LINKS,
    ) -> str | None:
        """`linked_ids`: the resolved wiki-link targets of the new text (for citations)."""

    def on_delete(self, note_id: int) -> None: ...

    def redact(self, ids: Sequence[int], needles: Sequence[str]) -> dict[str, int]:
        """Erasure (`Vault.forget`): remove every trace of the notes `ids` and of the strings
        `needles` from what the recorder keeps; returns counts for the report."""
        ...

    def learned(self, ids: Sequence[int], as_of: float | None = None,
                query: str | None = None, held: Held = NO_HELD) -> Learned:
        """Warmth, learned prior (for `query`: gated by what each note's evidence was about;
        `held`, the stems of its words some note holds with the notes holding each, topic.py
        `held_words`, v18-v19) and co-occurrence edges
        for the notes `ids` (in that order): live, or with `as_of` the state replayed from the
        events logged up to that time."""
        ...

    def now(self) -> float:
        """The recorder's clock now (Unix seconds; 0 when it has none): the time a query is
        asked at when the caller gives none (retrieval/when.py)."""
        ...

    def archived(self, ids: Sequence[int]) -> npt.NDArray[np.bool_]:
        """Notes taken out of default ranking by a (reversible) forgetting rule."""
        ...

    def close(self) -> None:
        """Release the recorder's resources (called by `Vault.close`)."""
        ...


class NullUsage:
    """Learning switched off: records nothing, warms nothing, archives nothing. Its `clock`
    (default none: 0) only dates the queries, for the time a query names (retrieval/when.py)."""

    def __init__(self, clock: Callable[[], float] | None = None) -> None:
        self.clock = clock

    def on_search(
        self,
        session: str | None,
        query: str,
        shown: Sequence[tuple[int, int, float]],
        graph: Adjacency = NO_LINKS,
    ) -> None:
        return None

    def on_read(self, session: str | None, note_id: int, graph: Adjacency = NO_LINKS) -> None:
        return None

    def on_write(
        self,
        session: str | None,
        note_id: int,
        created: bool,
        linked_ids: Sequence[int],
        graph: Adjacency = NO_LINKS,
    ) -> None:
        return None

    def on_delete(self, note_id: int) -> None:
        return None

    def redact(self, ids: Sequence[int], needles: Sequence[str]) -> dict[str, int]:
        return {}

    def learned(self, ids: Sequence[int], as_of: float | None = None,
                query: str | None = None, held: Held = NO_HELD) -> Learned:
        now = float(as_of) if as_of is not None else self.clock() if self.clock else 0.0
        return Learned.none(len(ids), now)

    def now(self) -> float:
        return self.clock() if self.clock else 0.0

    def archived(self, ids: Sequence[int]) -> npt.NDArray[np.bool_]:
        return np.zeros(len(ids), dtype=np.bool_)

    def close(self) -> None:
        return None


def examination_probability(rank: int) -> float:
    """Probability that a hit shown at `rank` (from 0) is examined: 1 / log2(rank + 2).

    The position-based click model's examination term with DCG's discount (Joachims et al.
    2017, "Unbiased Learning-to-Rank with Biased Feedback"); logged with every retrieved event
    so that learning can weight unused exposure by inverse propensity.
    """
    return 1.0 / math.log2(rank + 2)


def finite_clock(clock: Callable[[], float]) -> Callable[[], float]:
    """`clock` with every reading checked: finite Unix seconds, else LedgerError. (A NaN time
    would be logged as no time and fail the log's NOT NULL check as an untyped error.)"""

    def read() -> float:
        t = float(clock())
        if not math.isfinite(t):
            raise LedgerError(f"the learning clock read {t!r}; it must give finite Unix seconds")
        return t

    return read
