"""The event log's one sanctioned rewrite (erasure): what goes, what stays, and the learned
state equal to a replay of the rewritten log."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from vault.learning.ledger import Ledger
from vault.learning.redact import redact_event
from vault.learning.rewards import Event
from vault.storage.mentions import mentioning


def _ledger(tmp_path: Path) -> Ledger:
    t = iter(range(1000))
    return Ledger.open(tmp_path / "learned.sqlite", clock=lambda: float(next(t)))


def test_redact_event_drops_notes_and_strips_mentions() -> None:
    ids = frozenset({7})
    sessions: dict[str, str] = {}
    search = Event(3, 1.0, "search", "s-ORCHID", None,
                   {"query": "who has Orchid", "shown": [[7, 0, 1.0], [8, 1, 0.6]],
                    "spread": [[7, 0.1], [9, 0.05]]})
    out = redact_event(search, ids, mentioning(["orchid"]), sessions)
    assert out is not None
    assert out.data["query"] == "" and out.data["shown"] == [[8, 1, 0.6]]
    assert out.data["spread"] == [[9, 0.05]] and out.session == "redacted-3"
    assert redact_event(Event(4, 2.0, "read", "s", 7, {}), ids, mentioning([]), sessions) is None
    keep = Event(5, 3.0, "write", "s", 8, {"linked": [7, 9], "created": True})
    assert redact_event(keep, ids, mentioning([]), sessions) == Event(
        5, 3.0, "write", "s", 8, {"linked": [9], "created": True})


def test_ledger_redact_rewrites_and_refolds(tmp_path: Path) -> None:
    led = _ledger(tmp_path)
    led.start_session("s1", 0.0)
    led.on_search("s1", "secret orchid plans", [(1, 0, 1.0), (2, 1, 0.6)])
    led.on_read("s1", 1)
    led.on_read("s1", 2)
    led.on_write("s1", 3, True, [1, 2])
    led.end_session("s1", 10.0)
    assert 1 in led.state.notes
    counts = led.redact([1], ["orchid"])
    assert counts["events_dropped"] == 1 and counts["events_rewritten"] >= 2
    assert 1 not in led.state.notes and 2 in led.state.notes
    assert led.replay() == led.state  # the state is a replay of the rewritten log
    kinds = [ev.kind for ev in led.events()]
    assert kinds[-1] == "redact"
    assert all("orchid" not in str(ev.data).lower() for ev in led.events())
    path = tmp_path / "learned.sqlite"
    led.close()
    assert b"orchid" not in path.read_bytes().lower()
    conn = sqlite3.connect(path)  # the log is append-only again
    with pytest.raises(sqlite3.DatabaseError):
        conn.execute("DELETE FROM events")
    conn.close()
