"""Session rewards and the event fold: golden sessions worked by hand."""

from __future__ import annotations

from typing import Any

import pytest

from vault.learning.formulas import LearningParams
from vault.learning.rewards import Event, session_rewards
from vault.learning.state import LearnedState, apply

P = LearningParams()


def ev(seq: int, kind: str, note: int | None = None, **data: Any) -> Event:
    return Event(seq, float(seq), kind, "s", note, data)


SHOWN = [[1, 0, 1.0], [2, 1, 0.63], [3, 2, 0.5], [4, 6, 0.35]]


def test_golden_session() -> None:
    events = [
        ev(1, "search", shown=SHOWN),
        ev(2, "read", 1),
        ev(3, "write", 9, created=True, linked=[3]),
    ]
    out = session_rewards(events, lambda n: 2 if n == 1 else 0, P)
    assert out.used == {1, 3}
    assert out.rewards == {
        # read then a note created; 0.4/2; read after shown +0.2 (issue 13)
        1: pytest.approx({"create": 0.6, "read": 0.2, "recall": 0.2}),
        3: {"cite": 1.0},  # linked from a later write
        2: pytest.approx({"unused": -0.063}),  # rank 1 < 5, passed over: -0.1 * 0.63
    }  # note 4 (rank 6) is beyond unused_top_n: no reward either way


def test_no_negative_when_the_agent_used_nothing() -> None:
    out = session_rewards([ev(1, "search", shown=SHOWN)], lambda n: 0, P)
    assert out.rewards == {} and out.used == frozenset()


def test_update_of_retrieved_note_and_unretrieved_notes_earn_nothing() -> None:
    events = [ev(1, "search", shown=SHOWN), ev(2, "write", 2, created=False, linked=[77]),
              ev(3, "read", 55)]
    out = session_rewards(events, lambda n: 0, P)
    assert out.rewards[2] == {"update": 0.5}
    assert 77 not in out.rewards and 55 not in out.rewards  # never retrieved


def test_fold_applies_rewards_once_at_end() -> None:
    state = LearnedState()
    for e in [ev(1, "start"), ev(2, "search", shown=SHOWN, spread=[[1, 0.05]]),
              ev(3, "write", 9, created=False, linked=[1])]:
        apply(state, e, P)
    assert state.notes[1].q == 0.0  # nothing before the end (issue 13: Q starts at 0, not 0.5)
    apply(state, ev(4, "end"), P)
    assert state.notes[1].q == pytest.approx(0.1)  # 0.1 * 1.0 * (1 - 0)
    assert state.notes[2].q == pytest.approx(0.1 * 0.063 * (-1 - 0))
    snapshot = repr(state)
    apply(state, ev(5, "end"), P)  # a second end changes nothing
    assert repr(state) == snapshot.replace("last_seq=4", "last_seq=5")
    assert state.rewards == {"cite": (1, 1.0), "unused": pytest.approx((2, -0.113))}
