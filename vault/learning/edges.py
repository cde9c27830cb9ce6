"""Weighted undirected edges as three parallel numpy arrays, `a < b`, sorted by (a, b).

Learned co-occurrence reaches ranking on every query and a vault in daily use holds tens of
thousands of such edges, so they travel as arrays end to end (ledger -> positions -> sparse
adjacency): no Python loop per edge on the query path (BENCHMARKS.md, soak).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..int_arrays import member

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


@dataclass(frozen=True)
class WeightedEdges:
    """Edges (a[k], b[k]) with weight w[k]; a < b, no duplicates, in ascending (a, b) order."""

    a: I64
    b: I64
    w: F64

    def __post_init__(self) -> None:
        if not (self.a.shape == self.b.shape == self.w.shape) or self.a.ndim != 1:
            raise ValueError("edge arrays must be one-dimensional and of equal length")

    @classmethod
    def empty(cls) -> WeightedEdges:
        return cls(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64))

    @classmethod
    def build(cls, a: npt.ArrayLike, b: npt.ArrayLike, w: npt.ArrayLike) -> WeightedEdges:
        """Normalise arbitrary endpoint pairs: orient a < b, drop self-loops, sort by (a, b).

        Duplicate pairs are an error (their weights would have no single meaning)."""
        a0 = np.asarray(a, dtype=np.int64).ravel()
        b0 = np.asarray(b, dtype=np.int64).ravel()
        w0 = np.asarray(w, dtype=np.float64).ravel()
        lo, hi = np.minimum(a0, b0), np.maximum(a0, b0)
        keep = lo != hi
        lo, hi, w0 = lo[keep], hi[keep], w0[keep]
        order = np.lexsort((hi, lo))
        lo, hi, w0 = lo[order], hi[order], w0[order]
        if len(lo) > 1 and bool(np.any((lo[1:] == lo[:-1]) & (hi[1:] == hi[:-1]))):
            raise ValueError("duplicate edge")
        return cls(lo, hi, w0)

    @classmethod
    def of(cls, triples: Iterable[tuple[int, int, float]]) -> WeightedEdges:
        """From (a, b, weight) triples (tests, small callers)."""
        rows = list(triples)
        if not rows:
            return cls.empty()
        a, b, w = zip(*rows, strict=True)
        return cls.build(a, b, w)

    def __len__(self) -> int:
        return int(self.a.shape[0])

    def triples(self) -> list[tuple[int, int, float]]:
        """The edges as Python (a, b, weight) tuples, in (a, b) order."""
        return list(zip(self.a.tolist(), self.b.tolist(), self.w.tolist(), strict=True))

    def to_positions(
        self, ids: Sequence[int] | npt.NDArray[np.int64], excluded: Iterable[int] = ()
    ) -> WeightedEdges:
        """Re-key from note ids to positions in `ids` (any order); edges touching an id not in
        `ids`, or in `excluded`, are dropped."""
        if not len(self):
            return self
        keys = np.asarray(ids, dtype=np.int64).ravel()
        if not keys.size:
            return WeightedEdges.empty()
        order = np.argsort(keys, kind="stable")
        sorted_keys = keys[order]
        drop = np.asarray(sorted(set(excluded)), dtype=np.int64)

        def locate(x: I64) -> tuple[I64, npt.NDArray[np.bool_]]:
            at = np.minimum(np.searchsorted(sorted_keys, x), len(sorted_keys) - 1)
            ok = (sorted_keys[at] == x) & ~member(x, drop)
            return order[at].astype(np.int64), ok

        pa, oka = locate(self.a)
        pb, okb = locate(self.b)
        keep = oka & okb
        return WeightedEdges.build(pa[keep], pb[keep], self.w[keep])
