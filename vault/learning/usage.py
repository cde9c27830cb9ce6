"""The seam between the Vault facade and learning: what the facade reports, what it reads back.

The facade calls a `UsageRecorder` after each search, read and write so learning can log events
(keyed by stable note ids); it asks a `UsageState` for per-note warmth (activation) and a
bounded Q prior when it ranks. `NullUsage` is the recorder used when learning is off: it records
nothing and returns zeros, so ranking is exactly the learning-free ranking.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from .edges import WeightedEdges


class UsageRecorder(Protocol):
    """Receives usage facts from the facade. Each call must be durable before it returns."""

    def on_search(
        self, session: str | None, query: str, shown: Sequence[tuple[int, int, float]]
    ) -> None:
        """`shown` is (note id, rank from 0, probability of being shown at that rank)."""

    def on_read(self, session: str | None, note_id: int) -> None: ...

    def on_write(
        self, session: str | None, note_id: int, created: bool, linked_ids: Sequence[int]
    ) -> None:
        """`linked_ids`: the resolved wiki-link targets of the new text (for citations)."""

    def on_delete(self, note_id: int) -> None: ...

    def warmth(self, ids: Sequence[int]) -> npt.NDArray[np.float64]:
        """Current activation boost per note id, in [0, 1] (0 when nothing learned)."""
        ...

    def prior(self, ids: Sequence[int]) -> npt.NDArray[np.float64]:
        """Bounded Q prior per note id, added after fusion (0 when nothing learned)."""
        ...

    def cooccurrence(self, ids: Sequence[int]) -> WeightedEdges:
        """Learned co-occurrence edges between positions in `ids` (weights in [0, 1])."""
        ...

    def archived(self, ids: Sequence[int]) -> npt.NDArray[np.bool_]:
        """Notes taken out of default ranking by a (reversible) forgetting rule."""
        ...

    def close(self) -> None:
        """Release the recorder's resources (called by `Vault.close`)."""
        ...


class NullUsage:
    """Learning switched off: records nothing, warms nothing, archives nothing."""

    def on_search(
        self, session: str | None, query: str, shown: Sequence[tuple[int, int, float]]
    ) -> None:
        return None

    def on_read(self, session: str | None, note_id: int) -> None:
        return None

    def on_write(
        self, session: str | None, note_id: int, created: bool, linked_ids: Sequence[int]
    ) -> None:
        return None

    def on_delete(self, note_id: int) -> None:
        return None

    def warmth(self, ids: Sequence[int]) -> npt.NDArray[np.float64]:
        return np.zeros(len(ids), dtype=np.float64)

    def prior(self, ids: Sequence[int]) -> npt.NDArray[np.float64]:
        return np.zeros(len(ids), dtype=np.float64)

    def cooccurrence(self, ids: Sequence[int]) -> WeightedEdges:
        return WeightedEdges.empty()

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
