"""Set operations on integer arrays by a sort and a binary search, not numpy's set routines.

numpy 2's `np.unique` hashes (4-20x slower than a sort on the small arrays here:
retrieval/signals/unit_codes.py), and `np.isin` and `np.union1d` call it; its first call in a
process also imports `numpy.ma` (~8 ms of CPU, 3 modules): every new process that caught up
from a saved base (derived.from_base: the dense overlay's `replacing`, the postings' `replace`)
paid it for one membership test of a few rows (docs/measurements/session37/NOTES-PERF37.md).
Both functions here give exactly numpy's answer for integer arrays
(tests/vault/test_int_arrays.py)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]


def distinct(a: npt.NDArray[np.integer]) -> I64:
    """Sorted distinct values as int64, of an array of any shape flattened as np.unique does:
    a sort and a mask (numpy 2's np.unique hashes, and cost ~20 ms on the 10^5 positions of a
    query's neighbourhood at 10^5 notes)."""
    x = np.sort(np.ravel(a).astype(np.int64))
    if x.size:
        x = x[np.concatenate(([True], x[1:] != x[:-1]))]
    return x


def member(values: npt.NDArray[np.integer], pool: npt.ArrayLike) -> Bools:
    """`np.isin(values, pool)` for integers (values below 2^63): whether each of `values`
    (any shape; the answer has its shape) is one of `pool`, by one sort of the pool and a
    binary search per value."""
    v = np.asarray(values).astype(np.int64)
    s = distinct(np.asarray(pool, dtype=np.int64).ravel())
    if not s.size:
        return np.zeros(v.shape, dtype=np.bool_)
    at = np.minimum(np.searchsorted(s, v), s.size - 1)
    out: Bools = s[at] == v
    return out
