"""The conjunctive build's block-wise helpers equal the whole-array numpy they replace, and a
build in many small blocks equals one in a single block."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from vault.retrieval.signals import unit_codes
from vault.retrieval.signals.conjunctive import ConjunctiveIndex
from vault.retrieval.signals.unit_codes import _joined, distinct


def test_distinct_equals_unique_with_counts() -> None:
    rng = np.random.default_rng(2)
    low = rng.integers(0, 50, 400)
    high = rng.integers(2**32 - 60, 2**32, 400)  # the top bucket
    spread = rng.integers(0, 2**32, 300)
    for flat in (np.zeros(0), low, np.concatenate([high, low, spread, low])):
        codes = flat.astype(np.uint32)
        got, counts = distinct(codes)
        want, want_counts = np.unique(codes, return_counts=True)
        assert got.dtype == np.uint32 and counts.dtype == np.int64
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(counts, want_counts)


def test_joined_equals_concatenate_and_empties_the_parts() -> None:
    parts = [np.arange(s, s + k, dtype=np.uint32) for s, k in ((0, 3), (9, 0), (20, 5))]
    want = np.concatenate(parts)
    got = _joined(parts)
    np.testing.assert_array_equal(got, want)
    assert parts == []


def test_a_build_in_small_blocks_equals_one_in_a_single_block(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(5)
    words = [f"w{i}" for i in range(60)] + ["the", "of", "auth"]
    texts = [" ".join(rng.choice(words) for _ in range(rng.randrange(0, 30)))
             for _ in range(300)]
    whole = ConjunctiveIndex.from_texts(texts)
    monkeypatch.setattr(unit_codes, "BLOCK", 7)
    monkeypatch.setattr(unit_codes, "ENTRY_BLOCK", 11)
    monkeypatch.setattr("vault.retrieval.signals.conjunctive.ENTRY_BLOCK", 13)
    small = ConjunctiveIndex.from_texts(texts)
    for name in ("vocab", "df", "m", "s1", "s2"):
        a, b = getattr(whole, name), getattr(small, name)
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    for name in ("ptr", "rows", "stale"):
        np.testing.assert_array_equal(getattr(whole.postings, name),
                                      getattr(small.postings, name))


@pytest.mark.parametrize("dtype", [np.uint32, np.uint64, np.int64, np.int32])
def test_sorted_distinct_is_unique(dtype: type[np.integer[Any]]) -> None:
    """np.unique's values and dtype: empty, one value, all equal, the dtype's extremes, 2-D
    (flattened, as np.unique does)."""
    rng = np.random.default_rng(5)
    info = np.iinfo(dtype)
    cases = [np.zeros(0, dtype), np.array([7], dtype), np.full(9, 3, dtype),
             np.array([info.max, info.min, info.max, 0], dtype),
             rng.integers(0, 4, (3, 5)).astype(dtype),
             *(rng.integers(0, hi, n).astype(dtype) for n in (2, 50, 999) for hi in (2, 1 << 30))]
    for x in cases:
        got, want = unit_codes.sorted_distinct(x), np.unique(x)
        assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)
