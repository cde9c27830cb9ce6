"""vault.retrieval.learned_stages: with `weights.passed`, a named note surely passed over is
demoted and holds nothing back (the topic-free lift of another note may pass it); a named
note not passed over still holds that lift below it."""

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
