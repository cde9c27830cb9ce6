"""`rmh replay`'s digest (harness/commands/learn.py `state_digest`): equal learned states give
equal digests, whatever order their dicts were filled in and whatever the process's string
hashing (the repr of a set of session names follows PYTHONHASHSEED)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from harness.commands.learn import state_digest
from vault import LearnedState, NoteState, Pair

ROOT = Path(__file__).resolve().parents[3]


def _state(seed: int, order: int) -> LearnedState:
    """The same state for every `order`: each one adds the entries in another order."""
    rng = random.Random(seed)
    ids = rng.sample(range(1, 50), rng.randint(2, 8))
    sessions = [f"s{rng.randint(0, 999)}-{i}" for i in range(rng.randint(2, 6))]
    notes = {i: NoteState(q=rng.random(), use_terms={w: rng.randint(1, 5) for w in
                                                     rng.sample(["kiwi", "fig", "pear"], 2)})
             for i in ids}
    pairs = {(a, b): Pair(count=rng.randint(1, 4), last_t=rng.random())
             for a in ids for b in ids if a < b}
    links = {(i, s) for i in ids for s in sessions if rng.random() < 0.5}
    shuffle = random.Random(order)

    def shuffled(d: dict[object, object]) -> dict[object, object]:
        keys = list(d)
        shuffle.shuffle(keys)
        return {k: d[k] for k in keys}

    return LearnedState(notes=shuffled(notes), pairs=shuffled(pairs),  # type: ignore[arg-type]
                        note_sessions=set(sorted(links, key=lambda _: shuffle.random())),
                        gone={100 + i for i in ids}, searches=len(ids))


@pytest.mark.parametrize("seed", range(5))
def test_equal_states_filled_in_other_orders_have_one_digest(seed: int) -> None:
    states = [_state(seed, order) for order in range(4)]
    assert all(s == states[0] for s in states)
    assert len({state_digest(s) for s in states}) == 1


def test_the_digest_does_not_follow_the_process_string_hashing() -> None:
    code = ("from tests.harness.commands.test_replay_digest import _state\n"
            "from harness.commands.learn import state_digest\n"
            "print(state_digest(_state(7, 0)))")
    got = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=ROOT,
                          env={**os.environ, "PYTHONHASHSEED": str(hs), "PYTHONPATH": str(ROOT)}
                          ).stdout for hs in (1, 2, 3)}
    assert len(got) == 1, got


def test_a_changed_number_changes_the_digest() -> None:
    state = _state(3, 0)
    other = _state(3, 0)
    first = min(other.notes)
    other.notes[first].q = float.fromhex(float.hex(other.notes[first].q)) + 2.0 ** -40
    assert state != other
    assert state_digest(state) != state_digest(other)
