"""Inverted lists in two parts: an immutable base and a small sorted delta (a log-structured
merge in the sense of O'Neil et al. 1996, "The Log-Structured Merge-Tree"; Lucene's segments).

The base is a CSC-like layout built once: for column (term or unit) c, `rows[ptr[c]:ptr[c+1]]`
are the documents (corpus positions) containing it, with `vals` beside them. A document
changed since the base was built is `stale` there; its current entries live in the delta,
three arrays sorted by (column, row). `column(c)` returns the current entries of one column,
base rows first and then delta rows, each part in ascending row order, so every score built
from it is the same whatever mix of base and delta holds the entries... as long as rows are
distinct, which they are: a stale base row is dropped, and a row is in the delta at most once.

Replacing a document's entries (`replace`) costs O(delta + its entries): the delta arrays are
re-sorted; nothing of the base is copied but the stale mask. Removing documents (`removed`)
does not rewrite the base either: its rows stay in the base's own coordinates (extended by
the rows appended since: vault/shift.py `then_grown`), the removed ones marked stale, and
`shift` maps them to current positions when a column is read (`Shift.forward`, monotone, so
rows stay ascending: computed once per state for every base row, O(n), then a gather per
read). The delta, small, is remapped at once; `replace` maps current positions back to the
base's (`Shift.back`) to mark them stale. Removed documents count toward compaction
(`removed_docs`). Compaction (a new base) is the owner's call (signals/bm25.py,
signals/conjunctive.py), when the delta outgrows `COMPACT_*`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from ...int_arrays import member
from ...shift import Shift

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
F32 = npt.NDArray[np.float32]
Vals = npt.NDArray[Any]  # float32, or uint8/uint16 for whole counts (from_csc)
Mask = npt.NDArray[np.bool_]

COMPACT_MIN = 2_000  # a delta of at most this many documents never forces compaction
COMPACT_FRACTION = 0.05  # ... nor one under this fraction of the corpus


def needs_compaction(delta_docs: int, n_docs: int) -> bool:
    """Whether a delta of `delta_docs` documents over `n_docs` should become a new base."""
    return delta_docs > max(COMPACT_MIN, int(COMPACT_FRACTION * n_docs))


@dataclass(frozen=True)
class Postings:
    """Base inverted lists + sorted delta entries (module docstring)."""

    ptr: I64  # (n_base_columns + 1,)
    rows: I32  # base rows, grouped by column, ascending within a column
    vals: Vals | None  # base values beside `rows` (None: all 1; float32 or small counts)
    stale: Mask  # (n_base_rows,): base rows superseded by the delta
    d_cols: I64  # delta entries sorted by (column, row)
    d_rows: I64
    d_vals: F32
    delta_docs: frozenset[int]  # rows whose entries are in the delta
    # base (and since appended) positions -> current ones, after removals (None: identity)
    shift: Shift | None = None

    @classmethod
    def build(cls, rows: npt.NDArray[np.integer], cols: npt.NDArray[np.integer], n_rows: int,
              n_cols: int) -> Postings:
        """Binary base lists (every value 1) from (row, column) entries given in ascending
        row order; (row, column) pairs must be unique."""
        per_row = np.bincount(rows, minlength=n_rows) if rows.size else np.zeros(n_rows, np.int64)
        return cls.from_row_counts(per_row, cols, n_cols)

    @classmethod
    def from_row_counts(cls, per_row: npt.NDArray[np.integer], cols: npt.NDArray[np.integer],
                        n_cols: int) -> Postings:
        """`build` from the entries' columns grouped by row (row r has the next `per_row[r]`)
        without the rows themselves: a counting-sort transpose (scipy's CSR to CSC, stable,
        so rows stay ascending within a column) with 4-byte indices, where an argsort of the
        columns needed an 8-byte permutation of every entry (1 GB at 10^6 notes)."""
        from scipy import sparse

        n_rows = int(per_row.shape[0])
        indptr = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(per_row, out=indptr[1:])
        idx = np.int32 if cols.size < 2**31 and n_cols < 2**31 else np.int64
        csr = sparse.csr_matrix((np.ones(cols.size, dtype=np.bool_), cols.astype(idx, copy=False),
                                 indptr.astype(idx)), shape=(n_rows, n_cols))
        csc = csr.tocsc()
        del csr
        return cls(csc.indptr.astype(np.int64), csc.indices.astype(np.int32, copy=False), None,
                   np.zeros(n_rows, dtype=np.bool_), np.zeros(0, np.int64),
                   np.zeros(0, np.int64), np.zeros(0, np.float32), frozenset())

    @classmethod
    def from_csc(cls, indptr: npt.NDArray[np.integer], indices: npt.NDArray[np.integer],
                 data: npt.NDArray[np.floating], n_rows: int) -> Postings:
        """Base lists from a canonical CSC matrix's arrays (rows sorted within columns).
        Values that are all whole numbers below 2^16 are kept as uint8 or uint16 (a term
        frequency is a count: exact in either, and 1-2 bytes a posting instead of 4)."""
        return cls(np.asarray(indptr, np.int64), np.asarray(indices, np.int32),
                   _narrow(np.asarray(data)), np.zeros(n_rows, dtype=np.bool_),
                   np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32),
                   frozenset())

    @property
    def n_base_columns(self) -> int:
        return int(self.ptr.shape[0]) - 1

    @property
    def removed_docs(self) -> int:
        """Documents removed since the base was built (appended ones included)."""
        return 0 if self.shift is None else len(self.shift.removed)

    @cached_property
    def _to(self) -> npt.NDArray[np.int32]:
        """The current position of each base row, -1 where it is stale (superseded or
        removed): `Shift.forward` once per state after a removal, O(n), so a read maps its
        rows with one gather, as cheap as the stale mask's."""
        t = (self.shift or Shift.none(0)).forward(np.arange(self.stale.shape[0]))
        t[self.stale] = -1
        return t.astype(np.int32)

    def _live(self, r: npt.NDArray[np.integer]
              ) -> tuple[npt.NDArray[np.integer], Mask | None]:
        """The live ones of base rows `r` at their current positions, and which they were
        (None: all, as they are)."""
        if self.shift:
            t = self._to[r]
            keep = t >= 0
            return t[keep], keep
        if self.any_stale:
            keep = ~self.stale[r]
            return r[keep], keep
        return r, None

    @cached_property
    def any_stale(self) -> bool:
        """Whether any base row is superseded (if not, a base column is read as it is)."""
        return bool(self.stale.any())

    def entries(self, c: int) -> tuple[npt.NDArray[np.integer], Vals]:
        """`column(c)` in the stored dtypes (int32 rows and the base's values when the column
        is all base: views, no copy when nothing is stale), for the scoring loops."""
        base = c < self.n_base_columns
        lo_d = hi_d = 0
        if self.d_cols.size:
            lo_d, hi_d = (int(x) for x in np.searchsorted(self.d_cols, [c, c + 1]))
        if base and hi_d == lo_d:
            lo, hi = int(self.ptr[c]), int(self.ptr[c + 1])
            r = self.rows[lo:hi]
            v = self.vals[lo:hi] if self.vals is not None else np.ones(hi - lo, np.float32)
            now, keep = self._live(r)
            return now, (v if keep is None else v[keep])
        rows, vals = self.column(c)
        return rows, vals.astype(np.float32)

    def column(self, c: int) -> tuple[I64, npt.NDArray[np.float64]]:
        """(rows, values) of column `c` now: live base rows, then delta rows."""
        parts_r: list[npt.NDArray[np.integer]] = []
        parts_v: list[npt.NDArray[np.floating]] = []
        if c < self.n_base_columns:
            lo, hi = int(self.ptr[c]), int(self.ptr[c + 1])
            now, keep = self._live(self.rows[lo:hi])
            parts_r.append(now)
            vals = self.vals[lo:hi] if self.vals is not None else np.ones(hi - lo, np.float32)
            parts_v.append(vals if keep is None else vals[keep])
        if self.d_cols.size:
            lo, hi = np.searchsorted(self.d_cols, [c, c + 1])
            parts_r.append(self.d_rows[lo:hi])
            parts_v.append(self.d_vals[lo:hi])
        if not parts_r:
            return np.zeros(0, np.int64), np.zeros(0, np.float64)
        return (np.concatenate(parts_r).astype(np.int64),
                np.concatenate(parts_v).astype(np.float64))

    def column_sizes(self, cols: I64) -> I64:
        """An upper bound of the entries of each column of `cols` (its base list, stale rows
        included, and its delta entries): what reading those columns at once allocates."""
        cols = np.asarray(cols, np.int64)
        base = cols < self.n_base_columns
        out = np.zeros(cols.size, np.int64)
        out[base] = self.ptr[cols[base] + 1] - self.ptr[cols[base]]
        if self.d_cols.size:
            out += (np.searchsorted(self.d_cols, cols, side="right")
                    - np.searchsorted(self.d_cols, cols, side="left"))
        return out

    def rows_of(self, cols: I64) -> tuple[I64, I64]:
        """The rows now of every column of `cols` (ascending, distinct) at once, each with the
        index into `cols` of its column: the rows of `column(c)` for each c, as one gather
        (a call per column cost 15 us: 34 s for a note of 2.3 million distinct units)."""
        cols = np.asarray(cols, np.int64)
        rows: list[npt.NDArray[np.integer]] = []
        which: list[I64] = []
        at_base = np.flatnonzero(cols < self.n_base_columns)
        lo = self.ptr[cols[at_base]]
        size = self.ptr[cols[at_base] + 1] - lo
        total = int(size.sum())
        if total:
            idx = np.arange(total, dtype=np.int64) + np.repeat(lo - (np.cumsum(size) - size),
                                                               size)
            now, keep = self._live(self.rows[idx])
            j = np.repeat(at_base, size)
            rows.append(now)
            which.append(j if keep is None else j[keep])
        if self.d_cols.size and cols.size:
            at = np.minimum(np.searchsorted(cols, self.d_cols), cols.size - 1)
            hit = cols[at] == self.d_cols
            rows.append(self.d_rows[hit])
            which.append(at[hit])
        if not rows:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return (np.concatenate(rows).astype(np.int64, copy=False),
                np.concatenate(which).astype(np.int64, copy=False))

    def add_by_column(self, cols: I64, adds: tuple[I64, ...], into: tuple[I64, ...],
                      alone: int, block: int) -> None:
        """For each column `cols[k]` (ascending, distinct), `adds[j][k]` added in place to
        `into[j][r]` of every row r now in it: integer arrays, so the sums are exact in any
        order. The base's rows are summed in the base's own coordinates, every entry as it is
        stored (no stale mask, no shift per entry), and the sums of the live base rows then
        moved to their current positions in one O(n) pass (`_to`); the delta's entries are
        added at their current rows. A base column of at least `alone` entries is added on
        its own (a scalar per row), the smaller ones in blocks of about `block` entries
        (one gather). Both halve the work of reading each column's live rows now (`column`,
        `rows_of`): the catch-up of 50 added notes and one removal at 10^6 notes moved 107 M
        entries (COLD39), ~1.7 s in memory (COLD40) (session 42, PERF44)."""
        cols = np.asarray(cols, np.int64)
        at_base = cols[cols < self.n_base_columns]
        if at_base.size:
            acc = tuple(np.zeros(self.stale.shape[0], np.int64) for _ in into)
            lo = self.ptr[at_base]
            sizes = self.ptr[at_base + 1] - lo
            for k in np.flatnonzero(sizes >= alone).tolist():
                rows = self.rows[int(lo[k]) : int(lo[k] + sizes[k])].astype(np.intp)
                for a, add in zip(acc, adds, strict=True):
                    np.add.at(a, rows, add[k])  # a scalar: ~3x `a[rows] += x` at 10^6
            few = np.flatnonzero(sizes < alone)
            ends = np.cumsum(sizes[few])
            i = 0
            while i < few.size:  # columns in blocks of about `block` entries, at least one
                start = int(ends[i - 1]) if i else 0
                hi = max(i + 1, int(np.searchsorted(ends, start + block, "right")))
                ks, size = few[i:hi], sizes[few[i:hi]]
                total = int(size.sum())
                idx = np.arange(total, dtype=np.int64) + np.repeat(
                    lo[ks] - (np.cumsum(size) - size), size)
                rows = self.rows[idx]
                for a, add in zip(acc, adds, strict=True):
                    np.add.at(a, rows, np.repeat(add[ks], size))
                i = hi
            to = self._to
            live = to >= 0
            for a, out in zip(acc, into, strict=True):
                out[to[live]] += a[live]
        if self.d_cols.size and cols.size:
            at = np.minimum(np.searchsorted(cols, self.d_cols), cols.size - 1)
            hit = cols[at] == self.d_cols
            rows = self.d_rows[hit]
            for add, out in zip(adds, into, strict=True):
                np.add.at(out, rows, add[at[hit]])

    def replace(self, docs: Mapping[int, tuple[I64, npt.NDArray[np.floating]]]) -> Postings:
        """A copy where each row in `docs` has exactly the given (columns, values) entries."""
        if not docs:
            return self
        changed = np.asarray(sorted(docs), dtype=np.int64)
        keep = ~member(self.d_rows, changed)
        new_c = [self.d_cols[keep]] + [np.asarray(docs[r][0], np.int64) for r in sorted(docs)]
        new_r = [self.d_rows[keep]] + [np.full(len(docs[r][0]), r, np.int64)
                                       for r in sorted(docs)]
        new_v = [self.d_vals[keep]] + [np.asarray(docs[r][1], np.float32) for r in sorted(docs)]
        cols, rows, vals = np.concatenate(new_c), np.concatenate(new_r), np.concatenate(new_v)
        order = np.lexsort((rows, cols))
        stale = self.stale
        at = changed if not self.shift else self.shift.back(changed)
        base_changed = at[at < stale.shape[0]]
        if base_changed.size and not stale[base_changed].all():
            stale = stale.copy()
            stale[base_changed] = True
        return Postings(self.ptr, self.rows, self.vals, stale, cols[order], rows[order],
                        vals[order], self.delta_docs | frozenset(int(r) for r in changed),
                        self.shift)

    def removed(self, shift: Shift) -> Postings:
        """A copy without the rows `shift` removes (`shift.n`: the rows now), every later row
        moved down (module docstring): O(n) bytes for the stale mask's copy, O(delta) for the
        delta, nothing of the base's lists."""
        if not shift.removed:
            return self
        both = (self.shift or Shift.none(int(self.stale.shape[0]))).then_grown(shift)
        gone = np.asarray(both.removed, dtype=np.int64)
        stale = self.stale.copy()
        stale[gone[gone < stale.shape[0]]] = True  # appended rows have no base list
        at = shift.forward(self.d_rows)  # monotone: the delta stays sorted by (column, row)
        live = at >= 0
        return Postings(self.ptr, self.rows, self.vals, stale, self.d_cols[live], at[live],
                        self.d_vals[live], frozenset(shift.forward_kept(sorted(self.delta_docs))),
                        both)


def _narrow(data: npt.NDArray[Any]) -> Vals:
    """`data` as uint8 or uint16 when every value is a whole number that fits, else float32."""
    if data.size == 0:
        return data.astype(np.float32)
    for kind in (np.uint8, np.uint16):
        top = float(np.iinfo(kind).max)
        if float(data.min()) >= 0 and float(data.max()) <= top and bool(
                (np.floor(data) == data).all()):
            return data.astype(kind)
    return data.astype(np.float32)
