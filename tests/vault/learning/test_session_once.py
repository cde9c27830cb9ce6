"""A session ends once in the log, however many processes recover or end it at the same time:
each ledger decided which sessions were dead from its own read of the log, outside the write
lock, so two processes opening the vault after a kill -9 both logged the dead session's `end`
(seen with 6 CLI commands at once: docs/measurements/session27/learnadv_recover_race.py.txt)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from vault import LEDGER_FILE, Ledger


def _ends(path: Path) -> list[str]:
    db = sqlite3.connect(path)
    try:
        rows = db.execute("SELECT session FROM events WHERE kind = 'end' ORDER BY seq").fetchall()
    finally:
        db.close()
    return [str(r[0]) for r in rows]


def _open(path: Path) -> Ledger:
    return Ledger.open(path, clock=lambda: 100.0)


def _race(first: Ledger) -> Callable[[str], bool | None]:
    """A liveness test that lets `first` recover everything before answering "dead": the
    other process's recovery landing between this one's read and its write."""
    def alive(session: str) -> bool | None:
        first.recover(50.0, alive=lambda s: False)
        return False
    return alive


@pytest.mark.parametrize("dead", [1, 2, 5])
@pytest.mark.parametrize("how", ["recover", "start_session"])
def test_two_ledgers_recovering_the_same_dead_sessions_log_each_end_once(
        tmp_path: Path, dead: int, how: str) -> None:
    path = tmp_path / LEDGER_FILE
    a, b = _open(path), _open(path)
    sessions = [f"s{i}" for i in range(dead)]
    for i, s in enumerate(sessions):
        a.start_session(s, 10.0 + i)
        a.on_read(s, i + 1)
    assert b.open_sessions() == sessions  # b has read the log: every session open
    if how == "recover":
        got = b.recover(50.0, alive=_race(a))
    else:
        got = b.start_session("late", 50.0, alive=_race(a))
    assert got == []  # a recovered them first
    assert _ends(path) == sessions
    assert b.open_sessions() == (["late"] if how == "start_session" else [])
    a.close()
    b.close()


@pytest.mark.parametrize("answered", [(), (1,)])
def test_a_session_ended_by_another_ledger_is_not_ended_again(tmp_path: Path,
                                                              answered: tuple[int, ...]) -> None:
    path = tmp_path / LEDGER_FILE
    a, b = _open(path), _open(path)
    a.start_session("s", 10.0)
    a.on_read("s", 1)
    assert b.open_sessions() == ["s"]
    assert a.end_session("s", 20.0, answered) is True
    assert b.end_session("s", 21.0, answered) is False
    assert b.recover(30.0, alive=lambda s: False) == []
    assert _ends(path) == ["s"]
    a.close()
    b.close()
