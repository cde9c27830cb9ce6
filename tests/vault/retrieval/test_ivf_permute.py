"""IvfStore's row reorder (in place in memory, into a new file on disk) equals the gather
`rows[order]` it replaces."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from vault.retrieval.signals.ivf import (
    Codes,
    IvfParams,
    IvfStore,
    MemoryCodes,
    permute_rows,
    quantize,
)
from vault.storage.row_file import RowFile


@pytest.mark.parametrize(("n", "block"), [(0, 4), (1, 4), (10, 3), (257, 7), (1000, 1000),
                                          (1000, 64), (5000, 1)])
def test_permute_rows_equals_the_gather(n: int, block: int) -> None:
    rng = np.random.default_rng(n + block)
    rows = rng.integers(-127, 128, (n, 6)).astype(np.int8)
    for order in (np.argsort(rng.integers(0, 9, n), kind="stable"), rng.permutation(n),
                  np.arange(n)[::-1].copy()):
        got = rows.copy()
        permute_rows(got, order.astype(np.int64), block)
        np.testing.assert_array_equal(got, rows[order])


@pytest.mark.parametrize("on_disk", [False, True])
def test_train_reorders_the_given_codes_as_a_gather_would(on_disk: bool, tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    vecs = rng.standard_normal((3000, 16)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    codes, scale = quantize(vecs)
    note = np.arange(3000, dtype=np.int32)
    kept = codes.copy()
    held: Codes = MemoryCodes(codes)
    if on_disk:
        held = RowFile(tmp_path, 3000, 16)
        held.put(0, codes)
    store = IvfStore.train(held, scale, note, None, IvfParams())
    np.testing.assert_array_equal(store.codes.span(0, 3000), kept[store.note])
    np.testing.assert_array_equal(store.scale, scale[store.note])
    assert isinstance(store.codes, RowFile) == on_disk
    assert store.disk_bytes == (3000 * 16 if on_disk else 0)
    assert os.listdir(tmp_path) == []  # the files have no name
