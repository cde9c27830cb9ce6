"""A learned.sqlite row that does not decode (vault/learning/damage.py). A derived row is a
cache of the log: the next opener rewrites every derived row from the events and gets the
state the damage hid; a damaged event is a LedgerError naming its seq, never a raw
ValueError/TypeError/JSONDecodeError (before session 30, each case below made every process
that opened the ledger fail with a traceback: LROWS_damaged.py.txt)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.vault.learning.test_ledger_core import Clock, shown
from vault import LEDGER_FILE, Ledger, LedgerError
from vault.learning.compact import NO_LIMITS

DERIVED = [
    "UPDATE session SET started = 'yesterday'",
    "UPDATE session SET ended = 'x' WHERE ended IS NOT NULL",
    "UPDATE note SET terms = '{\"u\": ' WHERE id = 1",
    "UPDATE note SET terms = '[1, 2]' WHERE id = 1",
    "UPDATE note SET q = 'high' WHERE id = 1",
    "UPDATE note SET shown = x'00ff' WHERE id = 2",
    "UPDATE qterm SET n = 'many' WHERE term = (SELECT MIN(term) FROM qterm)",
    "UPDATE pair SET count = 'two'",
    "UPDATE reward SET n = 'x'",
    "UPDATE meta SET value = 'lots' WHERE key = 'searches'",
    "UPDATE meta SET value = '[1,' WHERE key = 'query_log'",
    "UPDATE meta SET value = 'x' WHERE key = 'last_seq'",
]
EVENTS = [
    ("UPDATE events SET data = '{\"shown\": [[' WHERE seq = 3", 3),
    ("UPDATE events SET t = 'noon' WHERE seq = 4", 4),
    ("UPDATE events SET data = '{\"shown\": 5}' WHERE seq = 2", 2),
    ("UPDATE events SET data = '[]' WHERE seq = 4", 4),
]


def _ledger(path: Path) -> Ledger:
    clock = Clock()
    led = Ledger.open(path, clock=clock, limits=NO_LIMITS)
    for sid in ("a", "b"):
        led.start_session(sid, clock.t)
        led.on_search(sid, "billing service", shown(1, 2, 3))
        led.on_read(sid, 1)
        clock.t += 5.0
        led.end_session(sid, clock.t)
    led.start_session("open", clock.t)
    led.on_search("open", "auth tokens", shown(2, 3))
    return led


def _damage(path: Path, statement: str) -> None:
    conn = sqlite3.connect(path)
    conn.executescript("DROP TRIGGER IF EXISTS events_no_update; " + statement + ";")
    conn.close()


@pytest.mark.parametrize("statement", DERIVED)
def test_a_damaged_derived_row_is_rewritten_from_the_log(tmp_path: Path, statement: str) -> None:
    path = tmp_path / LEDGER_FILE
    led = _ledger(path)
    before = led.state
    led.close()
    _damage(path, statement)
    led = Ledger.open(path, clock=Clock(), limits=NO_LIMITS)
    assert led.state == before and led.replay() == before
    led.on_search("open", "billing", shown(1))  # writes go on
    led.close()
    conn = sqlite3.connect(path)  # the rows are whole again: a plain load, no repair
    conn.execute("CREATE TRIGGER no_repair BEFORE DELETE ON note "
                 "BEGIN SELECT RAISE(ABORT, 'repaired again'); END")
    conn.commit()
    conn.close()
    Ledger.open(path, clock=Clock(), limits=NO_LIMITS).close()


@pytest.mark.parametrize(("statement", "seq"), EVENTS)
def test_a_damaged_event_is_a_ledger_error_naming_it(tmp_path: Path, statement: str,
                                                     seq: int) -> None:
    path = tmp_path / LEDGER_FILE
    _ledger(path).close()
    _damage(path, statement)
    led = Ledger.open(path, clock=Clock(), limits=NO_LIMITS)  # its session ended: rows load
    with pytest.raises(LedgerError, match=f"learning event seq {seq} is damaged"):
        led.replay()
    led.close()  # no statement left open ("database table is locked" at the checkpoint)


def test_a_damaged_event_of_an_open_session_is_a_ledger_error_at_open(tmp_path: Path) -> None:
    path = tmp_path / LEDGER_FILE
    _ledger(path).close()
    _damage(path, "UPDATE events SET data = '{' WHERE session = 'open' AND kind = 'search'")
    with pytest.raises(LedgerError, match="is damaged"):
        Ledger.open(path, clock=Clock(), limits=NO_LIMITS)
