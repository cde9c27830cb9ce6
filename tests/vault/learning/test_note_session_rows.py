"""The (note, session) rows that dedupe a note's session count are held for open sessions only:
an ended session's go with it, so the derived state no longer grows by one row per note per
session ever (LEARNING_VERSION 12), and live, replayed and reopened states stay equal."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from tests.vault.learning.test_ledger_core import Clock, shown, workload
from vault import LEDGER_FILE, Ledger
from vault.learning.ledger import fold
from vault.learning.snapshot import dump_state, load_state
from vault.learning.state import SessionState


def _rows(path: Path) -> set[tuple[int, str]]:
    conn = sqlite3.connect(path)
    try:
        return {(int(n), str(s)) for n, s in conn.execute("SELECT note, session FROM note_session")}
    finally:
        conn.close()


@pytest.mark.parametrize("seed", [11, 12, 13, 14])
def test_rows_are_the_open_sessions_alone(tmp_path: Path, seed: int) -> None:
    path, clock = tmp_path / LEDGER_FILE, Clock()
    led = Ledger.open(path, clock=clock)
    workload(led, clock, seed, sessions=16)  # ends about 80 % of its sessions
    open_sessions = {s for s, info in led.state.sessions.items() if info.ended is None}
    rows = _rows(path)
    assert {s for _, s in rows} <= open_sessions
    assert rows == led.state.note_sessions
    assert led.replay() == led.state == fold(led.events(), led.params)
    led.close()
    reopened = Ledger.open(path, clock=clock)
    assert reopened.state.note_sessions == rows
    reopened.close()


def test_many_ended_sessions_leave_no_rows(tmp_path: Path) -> None:
    path, clock = tmp_path / LEDGER_FILE, Clock()
    rng = random.Random(7)
    led = Ledger.open(path, clock=clock)
    for s in range(60):
        sid = f"s{s}"
        led.start_session(sid, clock.t)
        ids = rng.sample(range(200), 20)
        led.on_search(sid, "q", shown(*ids))
        led.on_read(sid, ids[0])
        clock.t += 60.0
        led.end_session(sid, clock.t)
    assert _rows(path) == set()
    # every note still counts the sessions it was activated in, once each
    counted = sum(ns.sessions for ns in led.state.notes.values())
    assert counted > 60 and led.replay() == led.state
    led.close()


def test_an_event_after_its_session_ended_counts_no_session(tmp_path: Path) -> None:
    path, clock = tmp_path / LEDGER_FILE, Clock()
    led = Ledger.open(path, clock=clock)
    led.start_session("s", clock.t)
    led.on_read("s", 1)
    led.on_read("s", 1)  # the same session twice: one session
    assert led.state.notes[1].sessions == 1
    clock.t += 10.0
    led.end_session("s", clock.t)
    led.on_read("s", 1)  # late: the session is over
    led.on_read("s", 2)
    assert led.state.notes[1].sessions == 1 and led.state.notes[2].sessions == 0
    assert led.state.notes[1].accesses == 3  # still an access
    assert led.replay() == led.state
    led.close()


def test_a_base_dumped_with_ended_sessions_rows_loads_without_them(tmp_path: Path) -> None:
    path, clock = tmp_path / LEDGER_FILE, Clock()
    led = Ledger.open(path, clock=clock)
    workload(led, clock, 3, sessions=8)
    st = led.state
    led.close()
    ended = sorted(s for s, info in st.sessions.items() if info.ended is not None)
    assert ended
    old = load_state(*dump_state(st))
    old.note_sessions |= {(1, s) for s in ended}  # what a version 11 base held
    old.sessions["orphan"] = SessionState(started=1.0, last_t=1.0)
    old.note_sessions.add((2, "orphan"))
    loaded = load_state(*dump_state(old))
    assert loaded.note_sessions == st.note_sessions | {(2, "orphan")}
