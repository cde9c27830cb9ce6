"""A numpy mirror of the learned co-occurrence pairs, kept in step with the keys each event
touched, so that ranking can weigh every pair on every query in one vectorised pass.

Every search adds pairs; a vault in daily use holds tens of thousands. Weighing them with a
Python loop per query made search latency grow with the vault's history (BENCHMARKS.md, soak).
Here only the pairs and notes an event touched are copied into the arrays: per pair its
endpoints (as indices into the sorted note-id array), count and last time; per note its `seen`
count. The weights themselves are one `learning.edge_weights` call, so a query costs a few
numpy passes over the pairs and no Python per pair. The result equals weighing `state.pairs`
from scratch (tested), in (a, b) order.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from .edges import WeightedEdges
from .formulas import SECONDS_PER_DAY, LearningParams, edge_weights
from .state import LearnedState

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


class PairTable:
    """Per-slot arrays a, b, count, last_t (one slot per pair ever seen; dead slots count 0)
    and per-note arrays ids (ascending), seen; `ia`/`ib` index a slot's endpoints in `ids`
    (-1 when the note has no state row)."""

    def __init__(self) -> None:
        self._slot: dict[tuple[int, int], int] = {}
        self._a = np.zeros(0, dtype=np.int64)
        self._b = np.zeros(0, dtype=np.int64)
        self._count = np.zeros(0, dtype=np.float64)
        self._last = np.zeros(0, dtype=np.float64)
        self._ids = np.zeros(0, dtype=np.int64)
        self._seen = np.zeros(0, dtype=np.float64)
        self._ia = np.zeros(0, dtype=np.int64)
        self._ib = np.zeros(0, dtype=np.int64)
        self._dirty: set[tuple[int, int]] = set()
        self._dirty_notes: set[int] = set()
        self._stale = True

    def invalidate(self) -> None:
        """The state was replaced wholesale (reload, rebuild): copy everything next time."""
        self._stale = True
        self._dirty.clear()
        self._dirty_notes.clear()

    def mark(self, pairs: Iterable[tuple[int, int]], notes: Iterable[int] = ()) -> None:
        """Pairs and notes an event created, changed or removed."""
        if not self._stale:
            self._dirty.update(pairs)
            self._dirty_notes.update(notes)

    # -- keeping the arrays in step ----------------------------------------------------------

    def _locate(self, x: I64) -> I64:
        if not len(self._ids):
            return np.full(len(x), -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(self._ids, x), len(self._ids) - 1)
        return np.where(self._ids[at] == x, at, -1).astype(np.int64)

    def _reindex_notes(self, state: LearnedState) -> None:
        self._ids = np.array(sorted(state.notes), dtype=np.int64)
        self._seen = np.array([state.notes[int(i)].seen for i in self._ids], dtype=np.float64)
        self._ia, self._ib = self._locate(self._a), self._locate(self._b)

    def _refresh_notes(self, state: LearnedState) -> None:
        notes = sorted(self._dirty_notes)
        self._dirty_notes.clear()
        if not notes:
            return
        at = self._locate(np.array(notes, dtype=np.int64))
        if any((k < 0) == (n in state.notes) for k, n in zip(at.tolist(), notes, strict=True)):
            self._reindex_notes(state)  # a note row appeared or vanished
            return
        for k, n in zip(at.tolist(), notes, strict=True):
            if k >= 0:
                self._seen[k] = float(state.notes[n].seen)

    def _refresh(self, state: LearnedState) -> None:
        if len(self._a) > 2 * len(state.pairs) + 1024:
            self._stale = True  # mostly dead slots (forgotten pairs): compact
        if self._stale:
            keys = sorted(state.pairs)
            self._slot = {k: i for i, k in enumerate(keys)}
            self._a = np.array([k[0] for k in keys], dtype=np.int64)
            self._b = np.array([k[1] for k in keys], dtype=np.int64)
            self._count = np.array([state.pairs[k].count for k in keys], dtype=np.float64)
            self._last = np.array([state.pairs[k].last_t for k in keys], dtype=np.float64)
            self._reindex_notes(state)
            self._stale = False
            self._dirty.clear()
            self._dirty_notes.clear()
            return
        self._refresh_notes(state)
        new = sorted(k for k in self._dirty if k not in self._slot and k in state.pairs)
        if new:
            base = len(self._a)
            self._slot.update({k: base + i for i, k in enumerate(new)})
            na = np.array([k[0] for k in new], dtype=np.int64)
            nb = np.array([k[1] for k in new], dtype=np.int64)
            self._a, self._b = np.concatenate([self._a, na]), np.concatenate([self._b, nb])
            self._ia = np.concatenate([self._ia, self._locate(na)])
            self._ib = np.concatenate([self._ib, self._locate(nb)])
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

    # -- weighing ----------------------------------------------------------------------------

    def edges(self, state: LearnedState, now: float, params: LearningParams) -> WeightedEdges:
        """Every pair (a < b, weight >= params.cooc_min_weight) between live, non-hub notes.

        A hub is a note seen in more than `hub_share` of all searches once there have been
        `hub_min_searches` of them."""
        self._refresh(state)
        if not len(self._a) or not len(self._ids):
            return WeightedEdges.empty()
        n = state.searches
        hub = self._seen > params.hub_share * n
        if n < params.hub_min_searches:
            hub[:] = False
        present = (self._ia >= 0) & (self._ib >= 0) & (self._count > 0)
        ia, ib = np.maximum(self._ia, 0), np.maximum(self._ib, 0)
        days: F64 = (now - self._last) / SECONDS_PER_DAY
        w = edge_weights(self._count, self._seen[ia], self._seen[ib], n, days, params)
        keep = present & ~hub[ia] & ~hub[ib] & (w >= params.cooc_min_weight)
        idx = np.nonzero(keep)[0]
        idx = idx[np.lexsort((self._b[idx], self._a[idx]))]
        return WeightedEdges(self._a[idx], self._b[idx], w[idx].astype(np.float64))
