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
    assert out.signals == {
        # read then a note created (1/log2 2); re-found: 0.5/2; read after shown 1.0
        1: pytest.approx({"create": 1.0, "read": 1.0, "recall": 0.25}),
        3: {"cite": 1.0},  # linked from a later write
    }
    assert out.passed == {2: 0.63}  # rank 1 < 5, passed over in a list the agent used
    # note 4 (rank 6) is beyond unused_top_n: no evidence either way


def test_no_evidence_when_the_agent_used_nothing() -> None:
    out = session_rewards([ev(1, "search", shown=SHOWN)], lambda n: 0, P)
    assert out.signals == {} and out.passed == {} and out.used == frozenset()


def test_update_of_retrieved_note_and_unretrieved_notes_earn_nothing() -> None:
    events = [ev(1, "search", shown=SHOWN), ev(2, "write", 2, created=False, linked=[77]),
              ev(3, "read", 55)]
    out = session_rewards(events, lambda n: 0, P)
    assert out.signals[2] == {"update": 0.5}
    assert 77 not in out.signals and 55 not in out.signals  # never retrieved


def test_answer_counts_as_use_only_for_retrieved_notes() -> None:
    out = session_rewards([ev(1, "search", shown=SHOWN)], lambda n: 0, P, answered=[3, 42])
    assert out.signals == {3: {"answer": 1.0}} and out.used == {3}
    # v4: the answer alone engages no list: its reader misses notes an answer drew on, so
    # notes 1 and 2, absent from it, are not evidence of a skip
    assert out.passed == {}


def test_an_answer_beside_a_read_list_skips_only_what_is_used_nowhere() -> None:
    other = [[5, 0, 1.0], [6, 1, 0.63]]
    events = [ev(1, "search", shown=SHOWN), ev(2, "search", shown=other), ev(3, "read", 2)]
    out = session_rewards(events, lambda n: 0, P, answered=[3, 5])
    assert out.used == {2, 3, 5}
    assert out.passed == {1: 1.0}  # the read list: note 1 skipped, 3 used by the answer
    # the second list was only answered from: note 6 is no evidence either way


def test_fold_applies_evidence_once_at_end() -> None:
    state = LearnedState()
    for e in [ev(1, "start"), ev(2, "search", shown=SHOWN, spread=[[1, 0.05]]),
              ev(3, "write", 9, created=False, linked=[1])]:
        apply(state, e, P)
    assert state.notes[1].q == 0.0  # nothing before the end
    apply(state, ev(4, "end"), P)
    assert (state.notes[1].used, state.notes[1].skipped) == (1.0, 0.0)
    assert state.notes[1].q == pytest.approx(1 / 3)  # m = 1.5 / 3: (0.5 - 0.25) / 0.75
    f2 = 0.63 * 0.75 / (1 - 0.63 * 0.25)  # the PBM E-step at rank 1
    assert state.notes[2].skipped == pytest.approx(f2)
    assert state.notes[2].q == pytest.approx(0.25 * (0.5 / (2 + f2) - 0.25) / 0.25)
    snapshot = repr(state)
    apply(state, ev(5, "end"), P)  # a second end changes nothing
    assert repr(state) == snapshot.replace("last_seq=4", "last_seq=5")
    assert state.rewards["cite"] == (1, 1.0) and state.rewards["skipped"][0] == 2  # notes 2 and 3
