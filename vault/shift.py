"""Positions after rows were removed: the map from an old corpus's positions to a new one's.

A removal drops rows from a corpus whose columns are aligned by position, so every later row
moves down by the number of removed rows before it. With `R` the removed old positions in
ascending order and n the old length, the map is

    forward(p) = p - |{r in R : r < p}|      for p not in R (a removed p has no image)
    back(q)    = q + |{k : R[k] - k <= q}|   the old position of new position q

(`back` inverts `forward` on the kept rows: the k-th removed row has R[k] - k kept rows
before it, so a new position q lies after exactly the removed rows with R[k] - k <= q.) Both
are one `searchsorted` over the removed positions: O(log |R|) a position, vectorised.

`then(later)` composes two removals into one from the first's old positions, so a structure
built for an old corpus (kept in its own coordinates, with the removal beside it) follows
any number of later removals with one map (storage/corpus.py `Since`, retrieval/derived.py).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import pairwise

import numpy as np
import numpy.typing as npt

from .int_arrays import distinct

I64 = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Shift:
    """The removal of the rows at `removed` (ascending, distinct, each < `n`) from `n` rows."""

    removed: tuple[int, ...]
    n: int

    def __post_init__(self) -> None:
        r = self.removed
        if any(b <= a for a, b in pairwise(r)) or (r and (r[0] < 0 or r[-1] >= self.n)):
            raise ValueError(f"removed positions must ascend within [0, {self.n}): {r[:8]}")

    @staticmethod
    def none(n: int) -> Shift:
        """No row removed from `n`."""
        return Shift((), n)

    def check(self, n: int, given: int, what: str) -> None:
        """ValueError unless this is a removal from `n` rows with `given` removed items (the
        old contents a structure of `n` `what` is handed for them)."""
        if self.n != n or given != len(self.removed):
            raise ValueError(f"a removal from {self.n} {what} of {n}, "
                             f"{given} given for {len(self.removed)}")

    @property
    def kept(self) -> int:
        """Rows left: the new length."""
        return self.n - len(self.removed)

    def __bool__(self) -> bool:
        return bool(self.removed)

    @cached_property
    def _r(self) -> I64:
        return np.asarray(self.removed, dtype=np.int64)

    @cached_property
    def _d(self) -> I64:
        return self._r - np.arange(self._r.shape[0], dtype=np.int64)

    @cached_property
    def keep(self) -> npt.NDArray[np.bool_]:
        """(n,) True at every old position that is kept."""
        out = np.ones(self.n, dtype=np.bool_)
        out[self._r] = False
        return out

    def forward(self, old: npt.ArrayLike) -> I64:
        """The new position of each old position; -1 for a removed one."""
        p = np.asarray(old, dtype=np.int64)
        if not self.removed:
            return p.copy()
        k = np.searchsorted(self._r, p, side="left")
        hit = (k < self._r.shape[0]) & (self._r[np.minimum(k, self._r.shape[0] - 1)] == p)
        return np.where(hit, -1, p - k).astype(np.int64)

    def back(self, new: npt.ArrayLike) -> I64:
        """The old position of each new position (each in [0, kept))."""
        q = np.asarray(new, dtype=np.int64)
        if not self.removed:
            return q.copy()
        return (q + np.searchsorted(self._d, q, side="right")).astype(np.int64)

    def back_one(self, q: int) -> int:
        """`back` of one position."""
        return int(self.back(np.asarray([q]))[0])

    def forward_kept(self, old: Sequence[int]) -> list[int]:
        """The new positions of the kept ones among `old`, in the same order."""
        out = self.forward(np.asarray(old, dtype=np.int64))
        return [int(x) for x in out if x >= 0]

    def then(self, later: Shift) -> Shift:
        """This removal followed by `later` (a removal from this one's `kept` rows), as one
        removal from this one's `n` rows."""
        if later.n != self.kept:
            raise ValueError(f"a later removal is from {self.kept} rows, not {later.n}")
        if not later.removed:
            return self
        if not self.removed:
            return later
        return Shift(composed(self.removed, later.removed), self.n)

    def then_grown(self, later: Shift) -> Shift:
        """This removal followed by `later`, a removal from this one's kept rows and the
        `later.n - kept` rows appended after them since: one removal from this one's `n`
        rows and those appended (the k-th appended row is old position n + k). A structure
        kept in its base's coordinates extended by its appends (retrieval/signals/postings.py,
        retrieval/names.py) follows any history of appends and removals with it."""
        grow = later.n - self.kept
        if grow < 0:
            raise ValueError(f"a later removal is from at least {self.kept} rows, not {later.n}")
        return Shift(self.removed, self.n + grow).then(later)


def composed(gone: Sequence[int], later: Sequence[int]) -> tuple[int, ...]:
    """The removal of `gone` (ascending old positions) followed by that of `later` (ascending
    positions after it), as old positions: gone ∪ back(later), back(q) = q + |{k : gone[k] - k
    <= q}| (module docstring). `Shift.then`; a table that does not know its length keeps
    its removals as `gone` alone (notes/name_index.py)."""
    if not later:
        return tuple(gone)
    g = np.asarray(gone, dtype=np.int64)
    r = np.asarray(later, dtype=np.int64)
    at = r + np.searchsorted(g - np.arange(g.shape[0], dtype=np.int64), r, side="right")
    return tuple(int(x) for x in distinct(np.concatenate((g, at))))


def forward_list(positions: Iterable[int], gone: Sequence[int],
                 keep_gone: bool = False) -> list[int]:
    """`Shift.forward_kept` in plain Python (a bisect per position, no array built): for the
    few positions of one lookup (notes/name_index.py), where numpy's call cost dominates.
    With `keep_gone`, a removed position stays in the list as -1 (`Shift.forward`)."""
    out = []
    for p in positions:
        k = bisect_left(gone, p)
        if k == len(gone) or gone[k] != p:
            out.append(p - k)
        elif keep_gone:
            out.append(-1)
    return out
