"""The query log's df tables (`query_df`, `word_df`) stay bounded however many distinct queries
are sent (LEARNING_VERSION 13, vault/learning/query_log.py): the rarest, least recent keys no
note's bag holds are forgotten past 1.25 x the capacity, at the same events live and in
replay, through compaction and a kill -9 at any SQL statement."""

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
from vault.learning.expansion import query_words
from vault.learning.formulas import LearningParams
from vault.learning.ledger import fold
from vault.learning.query_log import forget_rare
from vault.learning.topic import query_terms

CAP = 6
PARAMS = LearningParams(query_log_capacity=CAP)
WORDS = [f"{a}{b}x" for a in "bdfgklmnprstvz" for b in "aeiou"]


def question(rng: random.Random) -> str:
    return "what about " + " ".join(rng.sample(WORDS, rng.randint(3, 6)))


def _qterm_rows(path: Path) -> dict[str, tuple[int, int]]:
    conn = sqlite3.connect(path)
    try:
        return {str(t): (int(n), int(last)) for t, n, last in
                conn.execute("SELECT term, n, last FROM qterm")}
    finally:
        conn.close()


def _drive(led: Ledger, clock: Clock, seed: int, sessions: int) -> None:
    rng = random.Random(seed)
    for s in range(sessions):
        sid = f"s{s}"
        led.start_session(sid, clock.t)
        for _ in range(rng.randint(1, 3)):
            clock.t += 5.0
            ids = rng.sample(range(30), 5)
            led.on_search(sid, question(rng), shown(*ids))
            if rng.random() < 0.6:
                led.on_read(sid, ids[0])
        clock.t += 5.0
        led.end_session(sid, clock.t)


def _held(led: Ledger) -> tuple[set[str], set[str]]:
    """The keys the rule keeps whatever their count: the notes' bags', and the open sessions'
    queries' (their end counts them into bags)."""
    notes = led.state.notes.values()
    asked = [str(e.data.get("query", "")) for evs in led.state.open_events.values()
             for e in evs if e.kind == "search"]
    return ({t for ns in notes for bag in (ns.use_terms, ns.skip_terms) for t in bag}
            | {t for q in asked for t in query_terms(q)},
            {w for ns in notes for w in ns.use_words} | {w for q in asked for w in query_words(q)})


def _bounded(led: Ledger) -> None:
    """Each table within a quarter of the capacity past what its last cut kept (the capacity,
    or more when more keys were held then)."""
    st = led.state
    for df, floor in ((st.query_df, st.terms_kept[0]), (st.word_df, st.terms_kept[1])):
        assert len(df) <= max(CAP, floor) + CAP // 4


def test_queries_outside_sessions_hold_nothing_and_stay_within_the_capacity(
        tmp_path: Path) -> None:
    """200 distinct queries logged outside any session (no bag, nothing held): each table
    stays within 1.25 x the capacity, where it held every key ever logged before v13."""
    path, clock, rng = tmp_path / LEDGER_FILE, Clock(), random.Random(3)
    led = Ledger.open(path, clock=clock, params=PARAMS, limits=NO_LIMITS)
    peak = 0
    for _ in range(200):
        clock.t += 1.0
        led.on_search(None, question(rng), shown(1, 2, 3))
        peak = max(peak, len(led.state.query_df), len(led.state.word_df))
    assert peak <= CAP + CAP // 4 and len(_qterm_rows(path)) <= 2 * (CAP + CAP // 4)
    assert led.state.terms_forgotten > 200 and led.replay() == led.state
    led.close()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_tables_stay_bounded_and_replay_equals_live(tmp_path: Path, seed: int) -> None:
    path, clock = tmp_path / LEDGER_FILE, Clock()
    led = Ledger.open(path, clock=clock, params=PARAMS, limits=NO_LIMITS)
    _drive(led, clock, seed, sessions=40)
    st = led.state
    phrases, words = _held(led)
    assert st.terms_forgotten > 0 and st.searches > 40
    _bounded(led)
    assert phrases <= set(st.query_df) and words <= set(st.word_df)  # what is held stays
    assert set(st.query_last) == set(st.query_df) and set(st.word_last) == set(st.word_df)
    rows = _qterm_rows(path)
    assert len(rows) == len(st.query_df) + len(st.word_df)  # forgotten keys leave the file
    assert led.replay() == st == fold(led.events(), PARAMS)
    led.close()
    reopened = Ledger.open(path, clock=clock, params=PARAMS, limits=NO_LIMITS)
    assert reopened.state == st and reopened.rebuild() == st
    reopened.close()


def test_the_frequent_and_the_recent_are_kept() -> None:
    df = {"old rare": 1, "new rare": 1, "frequent": 9, "held": 1, "mid": 2, "x": 1}
    last = {"old rare": 1, "new rare": 50, "frequent": 2, "held": 0, "mid": 3, "x": 10}
    gone, kept = forget_rare(df, last, iter(["held"]), capacity=4)
    assert gone == ["old rare", "x"]  # count, then recency; "held" stays whatever its count
    assert sorted(df) == ["frequent", "held", "mid", "new rare"] and sorted(last) == sorted(df)
    assert kept == 4 and forget_rare(df, last, [], capacity=4) == ([], 0)  # within the bound
    df.update({"a": 1, "b": 1})  # all held: the cut keeps more, and the next comes later
    assert forget_rare(df, last, list(df), capacity=4) == ([], 6)
    df["c"] = 1
    assert forget_rare(df, last, list(df), capacity=4, floor=6) == ([], 6)


@pytest.mark.parametrize("seed", [4, 5])
def test_compaction_cuts_nothing_replay_does_not(tmp_path: Path, seed: int) -> None:
    """A compacted log (base + events after it) and the whole log give one state, bounds and
    forgotten counts included: the base carries the recency the cut reads."""
    whole = Ledger.open(tmp_path / "a.sqlite", clock=Clock(), params=PARAMS, limits=NO_LIMITS)
    cut = Ledger.open(tmp_path / "b.sqlite", clock=Clock(), params=PARAMS,
                      limits=LedgerLimits(session_bytes=0, log_bytes=4_000))
    for led in (whole, cut):
        _drive(led, Clock(), seed, sessions=30)
    assert cut._conn.execute("SELECT COUNT(*) FROM base").fetchone()[0] == 1
    assert cut.state == whole.state and cut.replay() == cut.state
    assert cut.state.terms_forgotten > 0
    whole.close()
    cut.close()


def test_a_new_process_sees_the_bound_in_the_doctor_report(tmp_path: Path) -> None:
    path, clock = tmp_path / LEDGER_FILE, Clock()
    led = Ledger.open(path, clock=clock, params=PARAMS, limits=NO_LIMITS)
    _drive(led, clock, 9, sessions=20)
    report = led.health(range(30), clock.t)["query_log"]
    assert report == {"phrases": len(led.state.query_df), "words": len(led.state.word_df),
                      "capacity": CAP, "forgotten": led.state.terms_forgotten}
    assert report["forgotten"] > 0
    led.close()


CHILD = """
import os, signal, sys
from vault import Ledger
from vault.learning.compact import NO_LIMITS
from vault.learning.expansion import query_words
from vault.learning.formulas import LearningParams
from tests.vault.learning.test_ledger_core import Clock, shown
from tests.vault.learning.test_query_log import _drive
path, kind, kill_at = sys.argv[1], sys.argv[2], int(sys.argv[3])
clock = Clock()
led = Ledger.open(path, clock=clock, params=LearningParams(query_log_capacity=6),
                  limits=NO_LIMITS)
n = [0]
def trace(statement):
    n[0] += kind == "any" or statement.startswith("DELETE FROM qterm")
    if n[0] == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)
led._conn.set_trace_callback(trace)
_drive(led, clock, 7, sessions=12)
"""


@pytest.mark.parametrize(("kind", "kill_at"), [("any", n) for n in range(40, 1900, 60)]
                         + [("cut", n) for n in (1, 2, 3, 6, 10, 15)])
def test_a_kill_at_any_statement_leaves_the_tables_bounded(
        tmp_path: Path, kind: str, kill_at: int) -> None:
    """SIGKILL at the `kill_at`-th SQL statement of a writer (inside an event's transaction,
    between its rows, at its COMMIT; "cut": at the `kill_at`-th row a cut deletes, midway
    through the transaction that cuts): the next opener finds the bound held, the rows equal
    to the state, and the state equal to the replay of what was committed."""
    path = tmp_path / LEDGER_FILE
    root = Path(__file__).resolve().parents[3]
    proc = subprocess.run([sys.executable, "-c", CHILD, str(path), kind, str(kill_at)], cwd=root,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr  # the workload runs past kill_at
    led = Ledger.open(path, clock=Clock(), params=PARAMS, limits=NO_LIMITS)
    st = led.state
    _bounded(led)
    assert len(_qterm_rows(path)) == len(st.query_df) + len(st.word_df)
    assert led.replay() == st == fold(led.events(), PARAMS)
    led.close()
