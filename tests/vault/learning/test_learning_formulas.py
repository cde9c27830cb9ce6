"""Learning formulas: hand-computed golden cases and hypothesis invariants."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from vault.learning import formulas as learning
from vault.learning.activation import spread
from vault.learning.formulas import (
    SECONDS_PER_DAY,
    LearningParams,
    accumulate,
    create_weight,
    decay_rate,
    decayed,
    edge_weight,
    half_life_days,
    npmi,
    recall_weight,
)
from vault.storage.linkgraph import hops_from, undirected

P = LearningParams()
unit = st.floats(0.0, 1.0, allow_nan=False)
signed = st.floats(-1.0, 1.0, allow_nan=False)


# -- golden cases (worked by hand) --------------------------------------------------------------

def test_use_weight_table_golden() -> None:
    assert create_weight(0, P) == pytest.approx(1.0)  # 1.0 / log2(2)
    assert create_weight(2, P) == pytest.approx(0.5)  # 1.0 / log2(4)
    assert recall_weight(1, P) == pytest.approx(0.5)
    assert recall_weight(4, P) == pytest.approx(0.125)
    assert recall_weight(0, P) == 0.0


def test_npmi_and_edge_weight_golden() -> None:
    # N = 10 searches, n_a = n_b = 2, n_ab = 2: p_ab = 0.2, pmi = ln(0.2 / 0.04) = ln 5
    assert npmi(2, 2, 2, 10) == pytest.approx(math.log(5) / -math.log(0.2))  # = 1.0
    assert npmi(1, 5, 5, 10) == pytest.approx(math.log(0.1 / 0.25) / -math.log(0.1))
    assert npmi(10, 10, 10, 10) == 1.0
    # w = npmi * (2/100)^0.75 * 1 * exp(-3 / (30 (1 + 0.2 ln 3)))
    expected = 1.0 * 0.02**0.75 * math.exp(-3.0 / (30.0 * (1.0 + 0.2 * math.log(3.0))))
    assert edge_weight(2, 2, 2, 10, 3.0, P) == pytest.approx(expected)
    assert edge_weight(1, 5, 5, 10, 0.0, P) == 0.0  # negative NPMI -> 0
    assert edge_weight(500, 500, 500, 500, 0.0, P) == 1.0  # saturates at 1


def test_decay_golden_half_lives() -> None:
    for accesses, sessions, half_life in ((0, 0, 6.93), (1, 1, 9.33), (5, 3, 12.30),
                                          (20, 10, 16.14)):
        rate = decay_rate(accesses, sessions, P)
        assert math.log(2) / rate == pytest.approx(half_life, abs=0.01)
        assert half_life_days(accesses, sessions, P) == pytest.approx(half_life, abs=0.01)
        assert decayed(0.8, half_life * SECONDS_PER_DAY, accesses, sessions, P) == pytest.approx(
            0.4, abs=1e-3)


def test_damping_acts_under_the_cap() -> None:
    # issue 13 item 4: a rank-0 hit (u = 1) on 1 - 2 - 3 - 4 gives 0.05, 0.03, 0.018 (the old
    # u * 0.6^k gave 0.05 at every hop: damping inert for any u >= 0.14)
    adj = undirected([(1, 2), (2, 3), (3, 4)])
    assert dict(spread([(1, 1.0)], adj, P)) == pytest.approx({1: 0.05, 2: 0.03, 3: 0.018})
    assert dict(spread([(1, 0.5)], adj, P)) == pytest.approx({1: 0.025, 2: 0.015, 3: 0.009})


def test_spread_golden_chain() -> None:
    # 1 - 2 - 3 - 4, seed 1 with utility 0.05: hop0 0.05, hop1 0.03, hop2 0.018, hop3 none
    adj = undirected([(1, 2), (2, 3), (3, 4)])
    params = LearningParams(activation_cap=1.0)
    got = dict(spread([(1, 0.05)], adj, params))
    assert got == pytest.approx({1: 0.05, 2: 0.03, 3: 0.018})
    # two seeds reach 2: probabilistic OR 1 - (1 - 0.03)(1 - 0.05)
    got = dict(spread([(1, 0.05), (2, 0.05)], adj, params))
    assert got[2] == pytest.approx(1 - (1 - 0.03) * (1 - 0.05))
    assert hops_from(1, adj, 2) == {1: 0, 2: 1, 3: 2}
    star = undirected([(0, k) for k in range(1, 6)] + [(9, 0)])
    assert hops_from(9, star, 2, max_degree=3) == {9: 0, 0: 1}  # the hub 0 is not crossed
    assert len(hops_from(9, star, 2)) == 7


def test_accumulate_golden() -> None:
    assert accumulate(0.5, 0.05) == pytest.approx(0.525)  # 1 - 0.5 * 0.95


# -- invariants ---------------------------------------------------------------------------------

@given(unit, st.floats(0.0, 1e8), st.floats(0.0, 1e8), st.integers(0, 10_000),
       st.integers(0, 1000))
def test_decay_monotone_and_identity_at_zero(a0: float, t1: float, t2: float, acc: int,
                                             ses: int) -> None:
    assert decayed(a0, 0.0, acc, ses, P) == a0
    lo, hi = sorted((t1, t2))
    assert 0.0 <= decayed(a0, hi, acc, ses, P) <= decayed(a0, lo, acc, ses, P) <= a0


@given(st.integers(0, 1000), st.integers(0, 1000))
def test_more_use_decays_slower(acc: int, ses: int) -> None:
    assert decay_rate(acc + 1, ses, P) <= decay_rate(acc, ses, P)
    assert decay_rate(acc, ses + 1, P) <= decay_rate(acc, ses, P)


@given(st.integers(0, 500), st.integers(0, 500), st.integers(0, 500), st.integers(0, 1000),
       st.floats(-10.0, 1e4), unit)
def test_edge_weight_in_unit_interval(n_ij: int, n_i: int, n_j: int, n: int, days: float,
                                      trust: float) -> None:
    n_i, n_j = max(n_i, n_ij), max(n_j, n_ij)
    n = max(n, n_i + n_j - n_ij)
    w = edge_weight(n_ij, n_i, n_j, n, days, LearningParams(cooc_trust=trust))
    assert 0.0 <= w <= 1.0


@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), max_size=80),
       st.lists(st.tuples(st.integers(0, 30), unit), min_size=1, max_size=20))
def test_activation_cap_holds_per_query(edges: list[tuple[int, int]],
                                        seeds: list[tuple[int, float]]) -> None:
    out = spread(seeds, undirected(edges), P)
    assert all(0.0 < b <= P.activation_cap for _, b in out)
    assert [n for n, _ in out] == sorted({n for n, _ in out})


@given(unit, st.lists(unit, max_size=40))
def test_accumulation_bounded_and_monotone(a: float, boosts: list[float]) -> None:
    for b in boosts:
        nxt = accumulate(a, b)
        assert a - 1e-15 <= nxt <= 1.0
        a = nxt


def test_params_are_validated() -> None:
    with pytest.raises(ValueError, match="cooc_trust"):
        LearningParams(cooc_trust=1.5)
    with pytest.raises(ValueError, match="use_mean"):
        LearningParams(use_mean=1.0)
    with pytest.raises(ValueError, match="neg_scale"):
        LearningParams(neg_scale=-0.1)


@given(
    st.lists(
        st.tuples(
            st.integers(0, 500), st.integers(0, 800), st.integers(0, 800),
            st.floats(-5.0, 400.0, allow_nan=False),
        ),
        min_size=1, max_size=30,
    ),
    st.integers(0, 1000),
)
def test_edge_weights_vectorised_equals_the_scalar_formula(
    rows: list[tuple[int, int, int, float]], n: int
) -> None:
    params = LearningParams()
    got = learning.edge_weights(
        np.array([r[0] for r in rows], dtype=np.float64),
        np.array([r[1] for r in rows], dtype=np.float64),
        np.array([r[2] for r in rows], dtype=np.float64),
        n,
        np.array([r[3] for r in rows], dtype=np.float64),
        params,
    )
    want = [learning.edge_weight(a, b, c, n, d, params) for a, b, c, d in rows]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
