"""Warmth: validated, clipped, and skipped when zero."""

from __future__ import annotations

import numpy as np
import pytest

from vault.retrieval.signals.warmth import warmth_scores


def test_zero_or_absent_is_skipped() -> None:
    assert warmth_scores(None, 3) is None
    assert warmth_scores(np.zeros(3), 3) is None


def test_clipped_to_unit_interval() -> None:
    w = warmth_scores([0.5, 2.0, -1.0, float("nan")], 4)
    assert w is not None
    assert w.tolist() == [0.5, 1.0, 0.0, 0.0]


def test_misaligned_raises() -> None:
    with pytest.raises(ValueError):
        warmth_scores([0.1, 0.2], 3)
