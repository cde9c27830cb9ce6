"""A numpy mirror of the learned co-occurrence pairs, kept in step with the keys each event
touched, so that ranking can weigh every pair on every query in one vectorised pass.

Every search adds pairs; a vault in daily use holds tens of thousands. Weighing them with a
Python loop per query made search latency grow with the vault's history (BENCHMARKS.md, soak).
Here only the pairs an event touched are copied into the arrays; the weights themselves are
one `learning.edge_weights` call. The result equals weighing `state.pairs` from scratch
(tested), in (a, b) order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
import numpy.typing as npt

from .learned_state import LearnedState
from .learning import SECONDS_PER_DAY, LearningParams, edge_weights


class PairTable:
    """Arrays a, b, count, last_t with one slot per pair ever seen (dead slots count 0)."""

    def __init__(self) -> None:
        self._slot: dict[tuple[int, int], int] = {}
        self._a = np.zeros(0, dtype=np.int64)
        self._b = np.zeros(0, dtype=np.int64)
        self._count = np.zeros(0, dtype=np.float64)
        self._last = np.zeros(0, dtype=np.float64)
        self._dirty: set[tuple[int, int]] = set()
        self._stale = True

    def invalidate(self) -> None:
        """The state was replaced wholesale (reload, rebuild): copy everything next time."""
        self._stale = True
        self._dirty.clear()

    def mark(self, pairs: Iterable[tuple[int, int]]) -> None:
        """Pairs an event created, changed or removed."""
        if not self._stale:
            self._dirty.update(pairs)

    def _refresh(self, state: LearnedState) -> None:
        if self._stale:
            keys = sorted(state.pairs)
            self._slot = {k: i for i, k in enumerate(keys)}
            self._a = np.array([k[0] for k in keys], dtype=np.int64)
            self._b = np.array([k[1] for k in keys], dtype=np.int64)
            self._count = np.array([state.pairs[k].count for k in keys], dtype=np.float64)
            self._last = np.array([state.pairs[k].last_t for k in keys], dtype=np.float64)
            self._stale = False
            self._dirty.clear()
            return
        new = sorted(k for k in self._dirty if k not in self._slot and k in state.pairs)
        if new:
            base = len(self._a)
            self._slot.update({k: base + i for i, k in enumerate(new)})
            self._a = np.concatenate([self._a, np.array([k[0] for k in new], dtype=np.int64)])
            self._b = np.concatenate([self._b, np.array([k[1] for k in new], dtype=np.int64)])
            self._count = np.concatenate([self._count, np.zeros(len(new))])
            self._last = np.concatenate([self._last, np.zeros(len(new))])
        for key in self._dirty:
            slot = self._slot.get(key)
            if slot is None:
                continue
            pair = state.pairs.get(key)
            self._count[slot] = 0.0 if pair is None else float(pair.count)
            self._last[slot] = 0.0 if pair is None else pair.last_t
        self._dirty.clear()

    def edges(
        self,
        state: LearnedState,
        now: float,
        params: LearningParams,
        is_hub: Callable[[int], bool],
    ) -> list[tuple[int, int, float]]:
        """Every pair (a < b, weight >= params.cooc_min_weight) between live, non-hub notes."""
        self._refresh(state)
        if not len(self._a):
            return []
        ids = np.array(sorted(state.notes), dtype=np.int64)
        seen = np.array([state.notes[int(i)].seen for i in ids], dtype=np.float64)
        usable = np.array([not is_hub(int(i)) for i in ids], dtype=np.bool_)
        ia, ib = np.searchsorted(ids, self._a), np.searchsorted(ids, self._b)
        ia_c, ib_c = np.minimum(ia, len(ids) - 1), np.minimum(ib, len(ids) - 1)
        present = (ia < len(ids)) & (ib < len(ids)) if len(ids) else np.zeros(0, np.bool_)
        present &= (ids[ia_c] == self._a) & (ids[ib_c] == self._b)
        days: npt.NDArray[np.float64] = (now - self._last) / SECONDS_PER_DAY
        w = edge_weights(self._count, seen[ia_c], seen[ib_c], state.searches, days, params)
        keep = present & usable[ia_c] & usable[ib_c] & (self._count > 0)
        keep &= w >= params.cooc_min_weight
        idx = np.nonzero(keep)[0]
        idx = idx[np.lexsort((self._b[idx], self._a[idx]))]
        return [
            (int(a), int(b), float(x))
            for a, b, x in zip(
                self._a[idx].tolist(), self._b[idx].tolist(), w[idx].tolist(), strict=True
            )
        ]
