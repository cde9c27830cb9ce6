"""Compaction under attack: a kill -9 part way through leaves the ledger as it was, and an
erasure after compaction leaves no trace of the erased notes or strings in the base."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vault import LEDGER_FILE, Ledger, LedgerLimits
from vault.learning import ledger_sql as sql
from vault.learning.compact import NO_LIMITS, base_state
from vault.storage.linkgraph import undirected

from .test_compact import Clock, shown

REPO = Path(__file__).resolve().parents[3]


def fill(led: Ledger, clock: Clock, sessions: int = 30) -> None:
    graph = undirected([(7, 8), (8, 9), (1, 7)])
    for k in range(sessions):
        sid = f"zanzibar trip {k}" if k % 3 == 0 else f"s{k}"
        led.start_session(sid, clock.t, alive=lambda _: True)  # an open one stays open
        clock.t += 3600.0
        led.on_search(sid, "Zanzibar launch code", shown([7, 1, 2, 8]), graph)
        led.on_search(sid, "billing owner monday", shown([3, 4, 7]), graph)
        led.on_read(sid, 7, graph)
        led.on_write(sid, 20 + k % 5, True, [7, 3], graph)
        led.end_session(sid, clock.t, answered=[7, 3])


KILL = """
import os, sys
from pathlib import Path
from vault import Ledger
from vault.learning import compact, ledger_sql
from vault.learning.compact import NO_LIMITS

def die(*args, **kwargs):
    os.kill(os.getpid(), 9)

setattr(ledger_sql, sys.argv[2], die)
led = Ledger.open(Path(sys.argv[1]), clock=lambda: 2e6, limits=NO_LIMITS)
compact.compact(led._conn, led.params, 1_000)
"""


@pytest.mark.parametrize("step", ["delete_events", "recount_log_bytes"])
def test_a_kill_during_compaction_leaves_the_ledger_as_it_was(tmp_path: Path, step: str) -> None:
    """SIGKILL after the base is written (before the events go / before the commit): the next
    open finds every event, no base, and the same state; a later compaction then succeeds."""
    path, clock = tmp_path / LEDGER_FILE, Clock()
    led = Ledger.open(path, clock=clock, limits=NO_LIMITS)
    fill(led, clock, sessions=12)
    events, state = list(led.events()), led.state
    led.close()
    run = subprocess.run([sys.executable, "-c", KILL, str(path), step], cwd=REPO,
                         env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True)
    assert run.returncode == -9, run.stderr.decode()
    again = Ledger.open(path, clock=clock, limits=NO_LIMITS)
    assert list(again.events()) == events and base_state(again._conn)[0] == 0
    assert again.state == state == again.replay()
    again.close()
    done = Ledger.open(path, clock=clock, limits=LedgerLimits(0, 1_000))
    assert done.compact() is not None and done.state == state == done.replay()
    assert base_state(done._conn)[0] > 0
    done.close()


def test_erasure_after_compaction_leaves_no_trace_in_the_base(tmp_path: Path) -> None:
    path, clock = tmp_path / LEDGER_FILE, Clock()
    led = Ledger.open(path, clock=clock, limits=LedgerLimits(session_bytes=0, log_bytes=6_000))
    fill(led, clock)
    led.start_session("zanzibar open", clock.t)  # open across the cut: its events in the base
    led.on_search("zanzibar open", "Zanzibar launch code", shown([7, 1, 2]))
    led.on_read("zanzibar open", 7)
    fill(led, clock, sessions=9)
    cut = base_state(led._conn)
    assert cut[0] > 0 and cut[3] is not None and "zanzibar open" in cut[3].open_events
    led.redact([7], ["Zanzibar"])
    assert led.replay() == led.state
    _, _, _, base = base_state(led._conn)
    assert base is not None and 7 not in base.notes and 7 not in base.gone
    assert not any(7 in pair for pair in base.pairs)
    assert not any(n == 7 for n, _ in base.note_sessions)
    keys = [*base.query_df, *base.word_df, *base.sessions,
            *(k for ns in base.notes.values()
              for k in (*ns.use_terms, *ns.skip_terms, *ns.use_words, *ns.use_queries))]
    assert keys and not any("zanzibar" in k.casefold() for k in keys)
    opened = [e for evs in base.open_events.values() for e in evs]
    assert opened and not any(7 in [n for n, _, _ in e.shown()] or e.note == 7 for e in opened)
    assert "zanzibar" not in json.dumps([e.data for e in opened]).casefold()
    assert not any(n == 7 for pair in led.state.pairs for n in pair)
    assert led.session_events(sorted(s for s in led.open_sessions())[0]) == opened
    led.close()
    for file in tmp_path.iterdir():  # the file, its WAL: no byte of the erased string
        assert b"zanzibar" not in file.read_bytes().lower(), file.name
    again = Ledger.open(path, clock=clock, limits=NO_LIMITS)
    assert again.state == again.replay() == again.rebuild()
    assert sql.log_bytes(again._conn) <= 6_000
    again.close()
