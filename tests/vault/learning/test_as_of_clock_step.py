"""`as_of` after the clock stepped back: the state as of a time is the log up to its first
event past that time, so events logged later with older times (an NTP step, a pinned time
earlier than the ledger's last event) never rewrite an answer already given. Before, `as_of`
kept every event with t <= as_of wherever it was logged (LROWS_clock.py.txt: a prior moved
from [-0.044, 0.333, 0] to [-0.076, 0.333, 0.333] for the same as_of)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.vault.learning.test_ledger_core import Clock, shown
from vault import LEDGER_FILE, Ledger
from vault.learning.compact import NO_LIMITS
from vault.learning.ledger import fold

DAY = 86_400.0


def _session(led: Ledger, sid: str, t: float, note: int, other: int) -> None:
    led.start_session(sid, t)
    led.on_search(sid, "billing", shown(note, other))
    led.on_read(sid, note)
    led.end_session(sid, t + 1.0)


@pytest.mark.parametrize("step", [60.0, DAY, 30 * DAY])
def test_an_answer_as_of_a_past_time_is_not_rewritten_by_a_clock_stepped_back(
        tmp_path: Path, step: float) -> None:
    clock = Clock(1_800_000_000.0)
    led = Ledger.open(tmp_path / LEDGER_FILE, clock=clock, limits=NO_LIMITS)
    t0 = clock.t
    _session(led, "a", t0, 1, 2)
    _session(led, "b", t0 + 100.0, 2, 1)  # the log passes as_of here
    as_of = t0 + 50.0
    asked = led.learned([1, 2, 3], as_of=as_of, query="billing").prior.tolist()
    expected = fold(list(led.events())[:4], led.params)
    assert led.state_as_of(as_of) == expected  # "a" whole, nothing of "b"
    clock.t = t0 + 100.0 - step  # stepped back: the next events are older than as_of
    _session(led, "c", clock.t, 3, 1)
    assert led.learned([1, 2, 3], as_of=as_of, query="billing").prior.tolist() == asked
    assert led.state_as_of(as_of) == expected
    led.close()
