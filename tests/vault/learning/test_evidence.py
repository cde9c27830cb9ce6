"""The Beta-PBM posterior of use (vault/learning/evidence.py): the docstring's worked values,
and its promises as invariants over generated evidence."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vault.learning.evidence import (
    multiplier,
    passed_score,
    posterior_mean,
    score,
    skip_weight,
    use_weight,
)
from vault.learning.formulas import LearningParams
from vault.learning.usage import examination_probability

P = LearningParams()
weight = st.floats(0.0, 1e4, allow_nan=False)


@pytest.mark.parametrize(("used", "skipped", "q", "factor"), [
    (0.0, 0.0, 0.0, 1.0),  # no evidence: exactly neutral
    (1.0, 0.0, 1 / 3, 1.0 + 0.2 / 3),  # one session read: m = 1.5 / 3
    (2.0, 0.0, 0.5, 1.1),  # read and cited once: m = 2.5 / 4
    (3.0, 0.0, 0.6, 1.12),  # read in three sessions: m = 3.5 / 5
    (6.0, 0.0, 0.75, 1.15),  # read and cited in three sessions: m = 6.5 / 8
    (0.0, 1.0, -0.25 / 3, 1.0 - 0.05 / 3),  # one miss at rank 0: m = 0.5 / 3
    (0.0, 10.0, -0.25 * (1 - 0.5 / 12 / 0.25), 1.0 - 0.05 * (1 - 0.5 / 12 / 0.25)),
    (1.0, 3.0, 0.0, 1.0),  # a hub used in 1 of 4 sessions: m = 1.5 / 6 = mu0
])
def test_worked_values(used: float, skipped: float, q: float, factor: float) -> None:
    assert score(used, skipped, P) == pytest.approx(q)
    assert multiplier(score(used, skipped, P), 0.2) == pytest.approx(factor)


def test_no_evidence_is_exactly_neutral() -> None:
    assert score(0.0, 0.0, P) == 0.0 and posterior_mean(0.0, 0.0, P) == P.use_mean
    assert multiplier(0.0, 0.2) == 1.0


def test_skip_weight_is_the_pbm_e_step() -> None:
    # rank 0 is examined for sure: a miss there counts 1 whatever the note's use rate
    assert skip_weight(1.0, 5.0, 1.0, P) == pytest.approx(1.0)
    # rank 2 (e = 0.5), no evidence (t = 0.25): 0.5 * 0.75 / (1 - 0.125) = 3 / 7
    assert skip_weight(examination_probability(2), 0.0, 0.0, P) == pytest.approx(3 / 7)
    # a note often used (t high) loses less for the same miss
    assert skip_weight(0.5, 10.0, 0.0, P) < skip_weight(0.5, 0.0, 0.0, P)
    # lower ranks cost less
    costs = [skip_weight(examination_probability(r), 0.0, 0.0, P) for r in range(5)]
    assert costs == sorted(costs, reverse=True)


@given(weight, weight)
def test_score_is_bounded(used: float, skipped: float) -> None:
    q = score(used, skipped, P)
    assert -P.neg_scale <= q <= 1.0
    assert 1.0 - 0.2 * P.neg_scale <= multiplier(q, 0.2) <= 1.2


@given(weight, weight, st.floats(0.01, 100.0))
def test_more_use_never_lowers_and_more_misses_never_raise(used: float, skipped: float,
                                                           more: float) -> None:
    assert score(used + more, skipped, P) >= score(used, skipped, P)
    assert score(used, skipped + more, P) <= score(used, skipped, P)


@given(weight, weight)
def test_used_at_the_prior_rate_never_sinks(used: float, skipped: float) -> None:
    """A note used in at least a share mu0 of its examined sessions is never below neutral."""
    rate = P.use_mean
    if used >= rate * (used + skipped) and used + skipped > 0:
        assert score(used, skipped, P) >= 0.0


@given(st.floats(0.0, 1.0), weight, weight)
def test_skip_weight_is_a_probability(e: float, used: float, skipped: float) -> None:
    f = skip_weight(e, used, skipped, P)
    assert 0.0 <= f <= e + 1e-12


@given(st.floats(-10.0, 10.0, allow_nan=False))
def test_use_weight_is_capped(signals: float) -> None:
    assert 0.0 <= use_weight(signals, P) <= P.use_cap


def test_passed_score_acts_only_on_confident_pass_overs() -> None:
    p = LearningParams()
    assert passed_score(0.0, 0.0, p) == 0.0  # no evidence
    assert passed_score(0.0, 4.0, p) == 0.0  # four misses: the upper end is above mu0 still
    assert score(0.0, 4.0, p) < 0.0  # ...though the mean is below it
    assert passed_score(0.0, 10.0, p) == pytest.approx(-0.117, abs=5e-4)
    assert passed_score(0.0, 20.0, p) == pytest.approx(-0.176, abs=5e-4)
    assert passed_score(1.0, 10.0, p) == 0.0  # used once: not surely passed over
    assert passed_score(0.0, 1e9, p) == pytest.approx(-p.neg_scale, abs=1e-3)


@given(st.floats(0.0, 50.0), st.floats(0.0, 500.0), st.floats(0.0, 50.0))
def test_passed_score_is_bounded_below_the_mean_score_and_monotone(
        used: float, skipped: float, more: float) -> None:
    p = LearningParams()
    got = passed_score(used, skipped, p)
    assert -p.neg_scale <= got <= 0.0
    assert got >= min(0.0, score(used, skipped, p)) - 1e-12  # never beyond the mean's score
    assert passed_score(used, skipped + more, p) <= got + 1e-12  # more misses: never less sure
    assert passed_score(used + more, skipped, p) >= got - 1e-12  # more use: never more
