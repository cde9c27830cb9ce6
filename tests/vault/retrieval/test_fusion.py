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
