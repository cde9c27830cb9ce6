"""vault.retrieval.learned_stages: a named note surely passed over holds nothing back (the
learned lift of another note may pass it), and is demoted only with `weights.passed` (v20;
before, only a demoted one was freed); a named note not passed over still holds that lift
below it."""

from __future__ import annotations

import numpy as np
import pytest

from vault.retrieval.learned_stages import learned_stage


def _final(warm: list[float], free: list[float], passed: float) -> np.ndarray:
    w = np.array(warm, dtype=np.float64)
    stages: dict[str, str] = {}
    return learned_stage(w, None, np.array(free), 0.2, 0.0, w, w, w,
                         np.arange(len(warm), dtype=np.int64), np.array([True, False]),
                         stages, None, passed)


def test_a_named_note_passed_over_holds_nothing_back_only_when_demoted() -> None:
    # note 0 named, note 1 lifted x1.2 by its topic-free part (0.7 -> 0.84)
    held = _final([0.8, 0.7], [0.0, 1.0], 1.0)  # not passed over: the lift stays below it
    assert held[0] == pytest.approx(0.8) and held[1] < held[0]
    demoted = _final([1.0, 0.7], [-0.22, 1.0], 1.0)  # x0.78: 0.78, and 0.84 passes it
    assert demoted.tolist() == pytest.approx([0.78, 0.84])
    off = _final([1.0, 0.7], [-0.22, 1.0], 0.0)  # weights.passed 0: no demotion, it holds
    assert off[0] == pytest.approx(1.0) and off[1] == pytest.approx(0.84)
    barely = _final([0.8, 0.7], [-0.01, 1.0], 1.0)  # any demotion frees it: 0.84 > 0.792
    assert barely.tolist() == pytest.approx([0.792, 0.84])


def _held(named_prior: float, named_free: float, lift: float) -> np.ndarray:
    """Note 0 named (fused 1.0, its own evidence; protect ratio 1.5), note 1 (fused 0.6) lifted
    by a gated prior `lift` (x(1 + 0.2 lift)) and a learned factor that takes it past note 0
    only if note 0 does not hold it (the hold keeps it below a protector 1.5x its own)."""
    fused = np.array([1.0, 0.6])
    warm = np.array([1.0, 0.95])  # note 1 lent 0.35 by its context
    stages: dict[str, str] = {}
    return learned_stage(warm, np.array([named_prior, lift]), np.array([named_free, 0.0]),
                         0.2, 1.5, fused, fused, warm, np.arange(2, dtype=np.int64),
                         np.array([True, False]), stages, None, 0.0)


def test_a_named_note_surely_passed_over_holds_no_learned_lift_back_undemoted() -> None:
    # v20: the speaker's note LoCoMo's agents pass over in every session (passed_score < 0)
    # has gated prior -0.0 for a new question: before v20 it still held the used turn below
    never_used = _held(-0.0, -0.17, 1.0)  # 0.95 x 1.2 = 1.14 passes 1.0
    assert never_used[0] == pytest.approx(1.0)  # not demoted: weights.passed is 0
    assert never_used[1] == pytest.approx(1.14) and never_used[1] > never_used[0]
    used_sometimes = _held(0.0, 0.0, 1.0)  # not surely passed over: it holds as before
    assert used_sometimes[1] <= used_sometimes[0]
    nothing_learned = _held(0.0, 0.0, 0.0)
    assert nothing_learned.tolist() == pytest.approx([1.0, 0.95])
