"""`Csr`: the link graph's sparse matrix in numpy alone, so that a search never imports scipy.

A new process's first search used to pay ~0.1 s of CPU (a tenth of the whole cold search at
5,000 notes) for `import scipy.sparse` alone: scipy 1.17's vendored `array_api_compat` clones
numpy's namespace and with it numpy.f2py, numpy.testing and numpy.random (NOTES-B.md). What a
search does with the link matrix is a small subset of `scipy.sparse.csr_matrix`: read its
shape and `nnz`, gather whole rows (`m[rows]`), multiply it by a vector (PageRank's power
iteration). `Csr` does exactly those, with the same results bit for bit:

- a row gather copies the rows' `indices` and `data` in the order asked, repeats included,
  as scipy's `csr_row_index` does;
- `m @ x` sums each row's products `data[k] * x[indices[k]]` from 0.0 in storage order, as
  scipy's `csr_matvec` does, through `np.bincount` (one sequential pass in the same order);
- `adjacency_of` builds the canonical matrix scipy's `coo_matrix(...).tocsr()` followed by
  `sum_duplicates()` gives for distinct (row, column) pairs: columns ascending within each
  row, 32-bit indices while they fit (scipy's `get_index_dtype` rule), float64 data.

tests/vault/retrieval/test_csr.py compares each with scipy on generated matrices. The
incremental relink after an edit (`plus`: a few entries added to a canonical matrix) is numpy
too, so the first search after notes are added or relinked imports no scipy either (~0.1-0.15 s
of CPU). What a search does not do (adding two matrices: learned co-occurrence edges)
converts to scipy and back (`to_scipy`, `from_scipy`), importing scipy there only.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from scipy import sparse

F64 = npt.NDArray[np.float64]
Ints = npt.NDArray[np.integer[Any]]
INT32_MAX = np.iinfo(np.int32).max


def index_dtype(n: int, nnz: int) -> type[np.integer[Any]]:
    """scipy's choice for a matrix's `indptr` and `indices`: int32 while every index and the
    entry count fit in it, else int64."""
    return np.int32 if max(n, nnz) <= INT32_MAX else np.int64


@dataclass(frozen=True, eq=False)
class Csr:
    """A float64 matrix of `shape` in compressed sparse rows (scipy's layout and field names);
    treated as read-only: every operation returns new arrays."""

    indptr: Ints
    indices: Ints
    data: F64
    shape: tuple[int, int]

    @property
    def nnz(self) -> int:
        return int(self.indptr[-1]) if self.indptr.shape[0] else 0

    def tocsr(self) -> Csr:
        return self

    @cached_property
    def _rows(self) -> npt.NDArray[np.intp]:
        """The row of each stored entry (computed once per matrix, for `@`)."""
        counts = np.diff(self.indptr)
        return np.repeat(np.arange(self.shape[0], dtype=np.intp), counts)

    def __getitem__(self, rows: Ints | list[int]) -> Csr:
        """The rows `rows` (an index array or list, repeats allowed), in that order. A tuple
        (scipy's element access, m[i, j]) is refused: use `toarray`."""
        if isinstance(rows, tuple):
            raise TypeError("Csr gathers whole rows only (m[rows]); use toarray() for entries")
        r = np.asarray(rows, dtype=np.intp).ravel()
        if r.size and (int(r.min()) < -self.shape[0] or int(r.max()) >= self.shape[0]):
            raise IndexError(f"row index out of range for {self.shape[0]} rows")
        r = np.where(r < 0, r + self.shape[0], r)
        starts = self.indptr[r].astype(np.intp)
        lens = self.indptr[r + 1].astype(np.intp) - starts
        ptr = np.zeros(r.shape[0] + 1, dtype=np.intp)
        np.cumsum(lens, out=ptr[1:])
        total = int(ptr[-1])
        pos = np.arange(total, dtype=np.intp) - np.repeat(ptr[:-1] - starts, lens)
        dt = index_dtype(max(self.shape), total)
        return Csr(ptr.astype(dt), self.indices[pos], self.data[pos], (int(r.shape[0]),
                                                                        self.shape[1]))

    def __matmul__(self, x: npt.ArrayLike) -> F64:
        """m @ x for a vector x: out[i] = sum over row i's entries, in storage order from 0.0,
        of data[k] * x[indices[k]] (scipy's csr_matvec, bit for bit)."""
        v = np.asarray(x, dtype=np.float64)
        if v.shape != (self.shape[1],):
            raise ValueError(f"vector of shape {v.shape} for a matrix of shape {self.shape}")
        out: F64 = np.bincount(self._rows, weights=self.data * v[self.indices],
                               minlength=self.shape[0]).astype(np.float64, copy=False)
        return out

    def toarray(self) -> F64:
        out = np.zeros(self.shape, dtype=np.float64)
        np.add.at(out, (self._rows, self.indices), self.data)
        return out

    def __add__(self, other: Csr) -> Csr:
        """The sum, canonical (scipy's; outside a plain search, so scipy is imported here)."""
        total = (self.to_scipy() + other.to_scipy()).tocsr()
        total.sum_duplicates()
        return Csr.from_scipy(total)

    def plus(self, rows: Ints, cols: Ints, vals: F64, n: int) -> Csr:
        """This matrix grown to n x n plus `vals` at distinct (rows[k], cols[k]), canonical with
        zeros dropped: scipy's `(grown + change).tocsr()`, `eliminate_zeros()` (each sum is the
        same one float addition), in O(nnz + k log k) numpy. A matrix whose columns are not
        ascending within each row goes through scipy."""
        old_rows = self._rows.astype(np.int64)
        okey = old_rows * n + self.indices.astype(np.int64)  # (row, column) as one int64
        if okey.size > 1 and not bool((okey[1:] > okey[:-1]).all()):
            return self._plus_scipy(rows, cols, vals, n)
        ck = np.asarray(rows, dtype=np.int64) * n + np.asarray(cols, dtype=np.int64)
        order = np.argsort(ck, kind="stable")
        ck, cv = ck[order], np.asarray(vals, dtype=np.float64)[order]
        pos = np.searchsorted(okey, ck)
        hit = np.zeros(ck.shape[0], dtype=bool)
        if okey.size:
            hit = okey[np.minimum(pos, okey.size - 1)] == ck
        data = np.array(self.data, dtype=np.float64)  # a copy: the stored one may be mapped
        data[pos[hit]] += cv[hit]
        keys = np.insert(okey, pos[~hit], ck[~hit])
        data = np.insert(data, pos[~hit], cv[~hit])
        live = data != 0
        keys, data = keys[live], data[live]
        r = keys // n if n else keys
        dt = index_dtype(n, int(keys.shape[0]))
        indptr = np.zeros(n + 1, dtype=dt)
        np.cumsum(np.bincount(r, minlength=n), out=indptr[1:])
        return Csr(indptr, (keys - r * n).astype(dt), data, (n, n))

    def _plus_scipy(self, rows: Ints, cols: Ints, vals: F64, n: int) -> Csr:
        from scipy import sparse

        grown = self.to_scipy().copy()
        grown.resize((n, n))
        change = sparse.csr_matrix((np.asarray(vals, dtype=np.float64),
                                    (np.asarray(rows), np.asarray(cols))), shape=(n, n))
        out = (grown + change).tocsr()
        out.eliminate_zeros()
        out.sort_indices()
        return Csr.from_scipy(out)

    def to_scipy(self) -> sparse.csr_matrix:
        from scipy import sparse

        return sparse.csr_matrix((self.data, self.indices, self.indptr), shape=self.shape)

    @classmethod
    def from_scipy(cls, m: sparse.spmatrix) -> Csr:
        c = m.tocsr()
        return cls(np.asarray(c.indptr), np.asarray(c.indices),
                   np.asarray(c.data, dtype=np.float64), (int(c.shape[0]), int(c.shape[1])))


def adjacency_of(n: int, rows: Ints, cols: Ints) -> Csr:
    """The n x n matrix with 1.0 at each (rows[k], cols[k]); the pairs must be distinct (the
    caller's: `signals.graph.adjacency` passes each unordered link pair both ways)."""
    r = np.asarray(rows, dtype=np.int64)
    c = np.asarray(cols, dtype=np.int64)
    order = np.lexsort((c, r))
    dt = index_dtype(n, int(r.shape[0]))
    indptr = np.zeros(n + 1, dtype=dt)
    np.cumsum(np.bincount(r, minlength=n), out=indptr[1:])
    return Csr(indptr, c[order].astype(dt), np.ones(r.shape[0], dtype=np.float64), (n, n))
