"""scope.hold_unlicensed (learning v24): no mover passes a holder ranked above it without
learning, held movers hold the notes below them at their held scores, and a non-holder (a
note with a negative learned score) may be passed."""

from __future__ import annotations

import numpy as np

from vault.retrieval.scope import hold_unlicensed


def order(scores: np.ndarray) -> list[int]:
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))


def test_a_chain_of_lifted_notes_keeps_the_learning_free_order() -> None:
    before = np.array([4.0, 3.0, 2.0, 1.0, 0.0])
    after = np.array([4.0, 5.0, 6.0, 7.0, 0.0])  # learning reversed the first four
    movers = np.array([False, True, True, True, False])
    held, moved = hold_unlicensed(before, after, movers, np.ones(5, dtype=np.bool_))
    assert order(held)[:4] == [0, 1, 2, 3] and moved == 3
    assert held[0] == 4.0 and held[4] == 0.0


def test_a_licensed_note_and_a_passed_over_holder() -> None:
    before = np.array([4.0, 3.0, 2.0])
    after = np.array([4.0, 5.0, 6.0])
    movers = np.array([False, False, True])  # note 1's lift is wholly about the query
    held, _ = hold_unlicensed(before, after, movers, np.ones(3, dtype=np.bool_))
    assert order(held) == [1, 0, 2]  # note 2 stays below both notes ranked above it
    holders = np.array([False, True, True])  # note 0's learned score is negative
    held, _ = hold_unlicensed(before, np.array([3.0, 3.5, 6.0]), movers, holders)
    assert order(held) == [1, 2, 0]  # passes note 0, held just below note 1
    assert held[2] == np.nextafter(3.5, 0.0)


def test_nothing_lifted_changes_nothing() -> None:
    before = np.array([3.0, 2.0, 1.0])
    after = before * 0.9
    held, moved = hold_unlicensed(before, after, np.ones(3, dtype=np.bool_),
                                  np.ones(3, dtype=np.bool_))
    assert held is after and moved == 0
