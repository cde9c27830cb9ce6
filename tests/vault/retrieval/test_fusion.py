"""Score-weighted RRF against a dict comprehension; total order with id tie-breaks."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from vault.retrieval.fusion import fuse, order, positive_ranks, ranks, top


def dict_rrf(signals: dict[str, list[float]], weights: dict[str, float], k: int,
             normalize: bool) -> list[float]:
    n = len(next(iter(signals.values())))
    out = []
    for d in range(n):
        total = 0.0
        for name, raw in signals.items():
            rank = sorted(range(n), key=lambda i: (-raw[i], i)).index(d)
            top = max(raw)
            v = raw[d] if raw[d] > 0 else 0.0
            if normalize and top > 0:
                v = v / top
            total += weights.get(name, 1.0) * v / (k + rank + 1)
        out.append(total)
    return out


def test_hand_case() -> None:
    f = fuse({"a": np.array([2.0, 1.0, 0.0])}, {"a": 0.5}, k=60, normalize="none")
    assert np.allclose(f.fused, [0.5 * 2 / 61, 0.5 * 1 / 62, 0.0])
    assert f.ranks["a"].tolist() == [0, 1, -1]  # only positive scores are ranked


scores = st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.5, -1.0]), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(a=scores, b=scores, wa=st.floats(0, 3), normalize=st.booleans())
def test_matches_dict_comprehension(a: list[float], b: list[float], wa: float,
                                    normalize: bool) -> None:
    n = min(len(a), len(b))
    sig = {"a": a[:n], "b": b[:n]}
    f = fuse({k: np.array(v) for k, v in sig.items()}, {"a": wa}, k=60,
             normalize="max" if normalize else "none")
    assert np.allclose(f.fused, dict_rrf(sig, {"a": wa}, 60, normalize), atol=1e-15)


@settings(max_examples=60, deadline=None)
@given(a=scores)
def test_order_is_total_with_position_tie_break(a: list[float]) -> None:
    o = order(np.array(a)).tolist()
    assert sorted(o) == list(range(len(a)))
    assert o == sorted(range(len(a)), key=lambda i: (-a[i], i))
    r = ranks(np.array(a))
    assert [r[i] for i in o] == list(range(len(a)))


def test_nan_sorts_last() -> None:
    assert order(np.array([np.nan, 1.0, 0.0])).tolist() == [1, 2, 0]


@settings(max_examples=200, deadline=None)
@given(a=scores, m=st.integers(0, 14), masked=st.lists(st.booleans(), min_size=12, max_size=12))
def test_top_and_positive_ranks_agree_with_the_full_order(a: list[float], m: int,
                                                         masked: list[bool]) -> None:
    x = np.array(a)
    keep = np.array(masked[: len(a)])
    full = [i for i in order(x).tolist() if x[i] > 0 and keep[i]]
    assert top(x, m, keep).tolist() == full[:m]
    r = positive_ranks(x)
    rr = ranks(x)
    assert all(r[i] == rr[i] for i in range(len(a)) if x[i] > 0)
    assert all(r[i] == -1 for i in range(len(a)) if x[i] <= 0)


def test_depth_ranks_only_each_signals_head() -> None:
    raw = {"a": np.array([0.1, 0.9, 0.5, 0.0, 0.7]), "b": np.array([0.3, 0.0, 0.2, 0.4, 0.1])}
    full = fuse(raw, {}, k=60)
    cut = fuse(raw, {}, k=60, depth=2)
    for name in raw:
        head = order(raw[name])[:2]
        assert np.array_equal(cut.contributions[name][head], full.contributions[name][head])
        rest = np.setdiff1d(np.arange(5), head)
        assert not cut.contributions[name][rest].any()
        assert (cut.ranks[name][rest] == -1).all()


def _reference_top(x: np.ndarray, m: int, keep: np.ndarray | None = None) -> list[int]:
    ok = x > 0 if keep is None else (x > 0) & keep
    return [i for i in np.argsort(-x, kind="stable").tolist() if ok[i]][:m]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**16), m=st.sampled_from([1, 5, 10, 100]),
       levels=st.integers(1, 50), zeros=st.floats(0.0, 0.99))
def test_top_of_many_scores_cut_at_a_sampled_floor_is_exact(seed: int, m: int, levels: int,
                                                            zeros: float) -> None:
    # n far above 32 m * 8, so top() first cuts at a sampled floor; few levels make ties
    rng = np.random.default_rng(seed)
    n = 40_000
    x = rng.integers(0, levels, n).astype(np.float64) / levels
    x[rng.random(n) < zeros] = 0.0
    keep = rng.random(n) < 0.8
    assert top(x, m).tolist() == _reference_top(x, m)
    assert top(x, m, keep).tolist() == _reference_top(x, m, keep)


def test_top_drops_a_floor_too_few_scores_reach() -> None:
    # the strided sample sees only the large values: the floor it gives is reached by fewer
    # than m scores, so top() falls back to every positive score
    n, m = 100_000, 100
    x = np.full(n, 0.001)
    stride = n // (32 * m)
    x[::stride] = 1.0 + np.arange(x[::stride].size)  # distinct large values at the samples
    assert top(x, m).tolist() == _reference_top(x, m)


def test_fusion_support_holds_every_positive_fused_score() -> None:
    rng = np.random.default_rng(4)
    raw = {s: np.where(rng.random(5000) < 0.3, rng.random(5000), 0.0) for s in "abc"}
    for depth in (0, 50):
        f = fuse(raw, {}, k=60, depth=depth)
        assert f.support is not None
        assert np.array_equal(f.support, np.flatnonzero(f.fused > 0))


def range_rrf(signals: dict[str, list[float]], k: int, depth: int, ranged: set[str]
              ) -> list[float]:
    """fused(d) with the signals in `ranged` over their range above the best score they do
    not rank, the others over their maximum (fusion.py, normalize="range")."""
    n = len(next(iter(signals.values())))
    out = [0.0] * n
    for name, raw in signals.items():
        listed = [i for i in sorted(range(n), key=lambda i: (-raw[i], i)) if raw[i] > 0][:depth]
        top = max(raw[i] for i in listed) if listed else 0.0
        cut = max([0.0] + [raw[i] for i in range(n) if i not in listed]) if name in ranged else 0.0
        for rank, d in enumerate(listed):
            v = (raw[d] - cut) / (top - cut) if top > cut else 1.0
            out[d] += v / (k + rank + 1)
    return out


positive = st.lists(st.sampled_from([0.0, 0.2, 0.5, 0.7, 1.0, 2.0, 3.5]), min_size=1,
                    max_size=12)


@settings(max_examples=80, deadline=None)
@given(a=positive, b=positive, depth=st.integers(1, 8), both=st.booleans())
def test_range_counts_a_signal_above_the_best_score_it_does_not_rank(
        a: list[float], b: list[float], depth: int, both: bool) -> None:
    n = min(len(a), len(b))
    sig = {"a": a[:n], "b": b[:n]}
    ranged = {"a", "b"} if both else {"a"}
    f = fuse({k: np.array(v) for k, v in sig.items()}, {}, k=60, normalize="range",
             depth=depth, ranged=ranged)
    assert np.allclose(f.fused, range_rrf(sig, 60, depth, ranged), atol=1e-15)


@settings(max_examples=60, deadline=None)
@given(a=st.lists(st.floats(0.01, 1.0), min_size=6, max_size=12), shift=st.floats(0.01, 5.0),
       depth=st.integers(1, 5))
def test_range_fusion_does_not_depend_on_where_a_signal_s_scores_sit(
        a: list[float], shift: float, depth: int) -> None:
    """A cosine that crowds below its maximum and the same ranking spread out fuse alike; by
    the maximum, the crowded copy's first notes stand out less (NOTES-QUAL7.md)."""
    raw = np.array(a)
    other = np.linspace(1.0, 0.1, raw.shape[0])
    f = fuse({"a": raw, "b": other}, {}, k=60, normalize="range", depth=depth)
    g = fuse({"a": raw + shift, "b": other}, {}, k=60, normalize="range", depth=depth)
    assert np.allclose(f.fused, g.fused, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(a=scores, b=scores, extra=st.integers(0, 4))
def test_range_is_the_maximum_s_where_a_signal_ranks_every_note_it_scores(
        a: list[float], b: list[float], extra: int) -> None:
    n = min(len(a), len(b))
    sig = {"a": np.array(a[:n]), "b": np.array(b[:n])}
    depth = max(int((sig["a"] > 0).sum()), int((sig["b"] > 0).sum())) + extra
    f = fuse(sig, {"a": 0.5}, k=60, normalize="range", depth=depth)
    g = fuse(sig, {"a": 0.5}, k=60, normalize="max", depth=depth)
    assert f.fused.tolist() == g.fused.tolist()
