"""Ended sessions' rows and deleted notes' tombstones stay bounded however many sessions end
and notes are deleted (LEARNING_VERSION 14, vault/learning/ended.py): past 1.25 x the
capacity the oldest-ended sessions are forgotten; a tombstone is held only while an open
session was shown its note. The same cuts live, in replay, through compaction and a kill -9
at any SQL statement; what the tombstone is for (an open session's end does not reward a
deleted note back) still holds."""

from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.vault.learning.test_ledger_core import Clock, shown
from vault import LEDGER_FILE, Ledger, LedgerLimits
from vault.learning.compact import NO_LIMITS
from vault.learning.ended import shown_by_open
from vault.learning.formulas import LearningParams
from vault.learning.ledger import fold

CAP = 8
PARAMS = LearningParams(session_capacity=CAP)


def _drive(led: Ledger, clock: Clock, seed: int, sessions: int) -> None:
    """Sessions over a pool of live notes, some left open a while (interleaved), one note
    created in each and the oldest live note deleted after each (as `rmh rm` does)."""
    rng = random.Random(seed)
    live, nxt, opened = list(range(1, 21)), 21, []
    for s in range(sessions):
        sid = f"s{s}"
        clock.t += 5.0
        led.start_session(sid, clock.t)
        ids = rng.sample(live, 5)
        led.on_search(sid, f"question {rng.randint(0, 9)}", shown(*ids))
        led.on_read(sid, ids[0])
        led.on_write(sid, nxt, True, [ids[0]])
        live.append(nxt)
        nxt += 1
        opened.append(sid)
        if rng.random() < 0.7 or len(opened) > 3:
            clock.t += 5.0
            led.end_session(opened.pop(rng.randrange(len(opened))), clock.t)
        led.on_delete(live.pop(0))


def _rows(path: Path, table: str) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
    finally:
        conn.close()


def _bounded(led: Ledger, path: Path) -> None:
    st = led.state
    ended = [s for s in st.sessions.values() if s.ended is not None]
    assert len(ended) <= CAP + CAP // 4
    assert st.gone <= shown_by_open(st.open_events)  # only what an open session was shown
    assert _rows(path, "session") == len(st.sessions) and _rows(path, "gone") == len(st.gone)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_rows_stay_bounded_and_replay_equals_live(tmp_path: Path, seed: int) -> None:
    """60 sessions and 60 deletes: before v14 the file held 60 session rows and 60 tombstones."""
    path, clock = tmp_path / LEDGER_FILE, Clock()
    led = Ledger.open(path, clock=clock, params=PARAMS, limits=NO_LIMITS)
    _drive(led, clock, seed, sessions=60)
    _bounded(led, path)
    st = led.state
    assert st.sessions_forgotten[0] >= 60 - (CAP + CAP // 4) - len(st.open_events)
    assert led.replay() == st == fold(led.events(), PARAMS)
    led.close()
    reopened = Ledger.open(path, clock=clock, params=PARAMS, limits=NO_LIMITS)
    assert reopened.state == st and reopened.rebuild() == st
    reopened.close()


def test_tombstones_are_held_only_while_needed_with_the_default_capacity(tmp_path: Path) -> None:
    """Deletes with no open session leave no tombstone (before v14: one per id ever)."""
    path, clock = tmp_path / LEDGER_FILE, Clock()
    led = Ledger.open(path, clock=clock, limits=NO_LIMITS)
    for note in range(1, 41):
        led.on_search(None, "billing", shown(note, note + 100))
        led.on_delete(note)
    assert led.state.gone == set() and _rows(path, "gone") == 0
    led.close()


def test_a_note_deleted_under_open_sessions_is_not_rewarded_back(tmp_path: Path) -> None:
    """Note 7 shown to two open sessions and read in both, then deleted: neither end brings
    it back (what the tombstone is for), and the tombstone goes with the last of them."""
    path, clock = tmp_path / LEDGER_FILE, Clock()
    led = Ledger.open(path, clock=clock, params=PARAMS, limits=NO_LIMITS)
    for sid in ("a", "b"):
        led.start_session(sid, clock.t)
        led.on_search(sid, "billing", shown(7, 8))
        led.on_read(sid, 7)
    led.on_delete(7)
    assert led.state.gone == {7}
    clock.t += 5.0
    led.end_session("a", clock.t)
    assert led.state.gone == {7} and 7 not in led.state.notes  # b still open: kept
    led.end_session("b", clock.t)
    assert led.state.gone == set() and 7 not in led.state.notes and 8 in led.state.notes
    assert led.replay() == led.state
    led.close()


def test_the_newest_ended_ids_are_still_refused_and_a_forgotten_one_is_new(
        tmp_path: Path) -> None:
    path, clock = tmp_path / LEDGER_FILE, Clock()
    led = Ledger.open(path, clock=clock, params=PARAMS, limits=NO_LIMITS)
    for s in range(CAP + CAP // 4 + 1):
        clock.t += 1.0
        led.start_session(f"s{s}", clock.t)
        led.end_session(f"s{s}", clock.t)
    newest = [f"s{s}" for s in range(CAP + CAP // 4 + 1 - CAP, CAP + CAP // 4 + 1)]
    assert sorted(led.state.sessions) == sorted(newest)
    assert all(led.session_ended(s) for s in newest)
    assert not led.has_session("s0") and led.state.sessions_forgotten == (CAP // 4 + 1, 0)
    assert led.start_session("s0", clock.t) == [] and led.open_sessions() == ["s0"]
    report = led.health([], clock.t)
    assert report["rows"] == {"sessions": CAP + 1, "session_capacity": CAP,
                              "sessions_forgotten": CAP // 4 + 1, "tombstones": 0}
    assert report["sessions"] == {"open": 1, "ended": CAP + CAP // 4 + 1, "recovered": 0}
    led.close()


@pytest.mark.parametrize("seed", [4, 5])
def test_a_compacted_log_cuts_as_the_whole_log_does(tmp_path: Path, seed: int) -> None:
    whole = Ledger.open(tmp_path / "a.sqlite", clock=Clock(), params=PARAMS, limits=NO_LIMITS)
    cut = Ledger.open(tmp_path / "b.sqlite", clock=Clock(), params=PARAMS,
                      limits=LedgerLimits(session_bytes=0, log_bytes=6_000))
    for led in (whole, cut):
        _drive(led, Clock(), seed, sessions=40)
    assert cut._conn.execute("SELECT COUNT(*) FROM base").fetchone()[0] == 1
    assert cut.state == whole.state and cut.replay() == cut.state
    assert cut.state.sessions_forgotten[0] > 0
    whole.close()
    cut.close()


CHILD = """
import os, signal, sys
from vault import Ledger
from vault.learning.compact import NO_LIMITS
from vault.learning.formulas import LearningParams
from tests.vault.learning.test_ledger_core import Clock
from tests.vault.learning.test_ended_rows import _drive
path, kind, kill_at = sys.argv[1], sys.argv[2], int(sys.argv[3])
clock = Clock()
led = Ledger.open(path, clock=clock, params=LearningParams(session_capacity=8), limits=NO_LIMITS)
n = [0]
def trace(statement):
    n[0] += kind == "any" or statement.startswith(("DELETE FROM session", "DELETE FROM gone"))
    if n[0] == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)
led._conn.set_trace_callback(trace)
_drive(led, clock, 7, sessions=30)
"""


@pytest.mark.parametrize(("kind", "kill_at"), [("any", n) for n in range(50, 2000, 150)]
                         + [("cut", n) for n in (1, 2, 4, 9)])
def test_a_kill_at_any_statement_leaves_the_rows_bounded(
        tmp_path: Path, kind: str, kill_at: int) -> None:
    """SIGKILL at the `kill_at`-th SQL statement of a writer ("cut": at the `kill_at`-th row
    a session or tombstone cut deletes): the next opener finds the bound held, the rows equal
    to the state, and the state equal to the replay of what was committed."""
    path = tmp_path / LEDGER_FILE
    root = Path(__file__).resolve().parents[3]
    proc = subprocess.run([sys.executable, "-c", CHILD, str(path), kind, str(kill_at)], cwd=root,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr  # the workload runs past kill_at
    led = Ledger.open(path, clock=Clock(), params=PARAMS, limits=NO_LIMITS)
    _bounded(led, path)
    assert led.replay() == led.state == fold(led.events(), PARAMS)
    led.close()
