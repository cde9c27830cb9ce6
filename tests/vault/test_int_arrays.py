"""vault/int_arrays.py: `member` is np.isin and `distinct` np.unique for integer arrays, value for
value; and a search process that catches up from a saved base never imports numpy.ma (numpy's
set routines import it on their first call: ~8 ms of every such process)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import numpy as np
import numpy.typing as npt
import pytest

from vault.int_arrays import distinct, member
from vault.shift import composed

from .cold_process import imported, linked_vault

DTYPES = (np.int64, np.int32, np.uint32, np.int16, np.uint8)


@pytest.mark.parametrize("seed", range(40))
def test_member_and_distinct_are_numpys(seed: int) -> None:
    rng = np.random.default_rng(seed)
    dtype = DTYPES[seed % len(DTYPES)]
    hi = int(min(np.iinfo(dtype).max, [3, 50, 10**6][seed % 3]))
    lo = 0 if np.iinfo(dtype).min == 0 else -hi
    shape = [(int(rng.integers(0, 40)),), (int(rng.integers(0, 6)), 3), (0,)][seed % 3]
    values = cast(npt.NDArray[np.integer[Any]], rng.integers(lo, hi + 1, size=shape).astype(dtype))
    pool = rng.integers(lo, hi + 1, size=int(rng.integers(0, 30))).astype(
        DTYPES[(seed // 5) % len(DTYPES)] if seed % 4 else np.int64)
    got = member(values, pool)
    assert got.dtype == np.bool_ and got.shape == values.shape
    assert np.array_equal(got, np.isin(values, pool))
    assert np.array_equal(member(values, pool.tolist()), np.isin(values, pool))
    u = distinct(values.ravel())
    assert u.dtype == np.int64 and np.array_equal(u, np.unique(values.astype(np.int64)))


@pytest.mark.parametrize("seed", range(20))
def test_composed_removals_are_the_union_numpy_gave(seed: int) -> None:
    rng = np.random.default_rng(seed)
    gone = sorted({int(x) for x in rng.integers(0, 60, size=int(rng.integers(0, 12)))})
    later = sorted({int(x) for x in rng.integers(0, 40, size=int(rng.integers(0, 12)))})
    g, r = np.asarray(gone, dtype=np.int64), np.asarray(later, dtype=np.int64)
    at = r + np.searchsorted(g - np.arange(g.shape[0], dtype=np.int64), r, side="right")
    want = tuple(int(x) for x in np.union1d(g, at)) if later else tuple(gone)
    assert composed(gone, later) == want


def numpy_ma_loaded(vault: Path, env: dict[str, str], query: str) -> bool:
    """Whether one `rmh search QUERY` process (dense on: the real MiniLM) imported numpy.ma."""
    found, out = imported(vault, env, ["numpy.ma"], "search", query, "--json")
    assert '"hits"' in out
    return found == ["numpy.ma"]


def test_a_process_catching_up_imports_no_numpy_ma(tmp_path: Path) -> None:
    env = linked_vault(tmp_path, 30)
    assert not numpy_ma_loaded(tmp_path, env, "billing")
    # a note added (the last position) and the first edited: each later process loads the
    # base's stores and brings them up to date (derived.from_base: the dense overlay's
    # replacing); before, its np.isin of positions 30 apart sorted by np.unique, which
    # imported numpy.ma in every such process (a narrower range takes numpy's table instead)
    (tmp_path / "N30.md").write_text("Note 30 about the cache. [[N00]]\n", encoding="utf-8")
    with open(tmp_path / "N00.md", "a", encoding="utf-8") as fh:
        fh.write("Now also about the cache.\n")
    for _ in range(2):
        assert not numpy_ma_loaded(tmp_path, env, "cache")


@pytest.mark.parametrize("shape", [(), (2, 3), (3, 1, 2), (0, 4)])
def test_distinct_flattens_as_np_unique(shape: tuple[int, ...]) -> None:
    """np.unique flattens; `distinct` sorted the last axis and compared rows (a 2-D array:
    ValueError; a 0-d one: AxisError), against the module's "exactly numpy's answer" (REV37)."""
    a = (np.arange(int(np.prod(shape)), dtype=np.int32) % 4 - 1).reshape(shape)
    u = distinct(a)
    assert u.dtype == np.int64 and np.array_equal(u, np.unique(a))
