"""`session.start` with an id the learning log already knows (docs/measurements/session27/
learnadv_reuse.py.txt): it was accepted every time, and
- an ended id: the new client's use went into a session that had ended, so none of it counted
  (its session.end: rewards_applied false);
- another live server's id: both used one session and only the first end counted;
- a killed server's id: the new server served it under the dead owner its start event names,
  so the next rmh command recovered it while it was being served, and this server's use was
  lost.
Now each is `session_error` (-32040) and the connection's use goes to a session of its own."""

from __future__ import annotations

import json
import signal
import sqlite3
from pathlib import Path

import pytest

from vault import LEDGER_FILE

from .test_learning_sessions import learning, rmh
from .test_server_e2e import Server, make_vault

pytestmark = pytest.mark.slow

CASES = ("ended", "live elsewhere", "killed")


def _server(vault: Path, tmp: Path, name: str) -> Server:
    (tmp / name).mkdir()
    return Server(vault, tmp / name)


@pytest.mark.parametrize("case", CASES)
def test_a_known_session_id_is_refused_and_the_use_still_counts(tmp_path: Path,
                                                                case: str) -> None:
    vault = make_vault(tmp_path / "vault")
    first = _server(vault, tmp_path, "a")
    assert first.call("session.start", {"session": "X"})["result"]["session"] == "X"
    first.call("vault.search", {"query": "noodle bar", "k": 3}, rid=2)
    if case == "ended":
        assert first.finish() == 0
    elif case == "killed":
        first.proc.send_signal(signal.SIGKILL)
        first.proc.wait(timeout=30)
    second = _server(vault, tmp_path, "b")
    refused = second.call("session.start", {"session": "X"})
    assert refused["error"]["code"] == -32040, refused
    assert refused["error"]["data"]["kind"] == "session_error"
    second.call("vault.search", {"query": "auth rewrite", "k": 3}, rid=2)
    second.call("vault.read", {"note": "Project Atlas"}, rid=3)
    own = second.call("status", rid=4)["result"]["session"]
    assert own != "X"
    audit = json.loads(rmh(vault, "learning", "--json").stdout)
    assert own in [s["session"] for s in audit["open_sessions"]]  # not recovered while served
    ended = second.call("session.end", {}, rid=5)["result"]
    assert ended["session"] == own and ended["rewards_applied"] is True
    assert second.finish() == 0
    if case == "live elsewhere":
        assert first.finish() == 0
    rewards = learning(vault, "Project Atlas")["rewards"]
    assert isinstance(rewards, list)
    assert [r["session"] for r in rewards] == [own]


def _events(vault: Path) -> int:
    db = sqlite3.connect(vault / ".rmh" / LEDGER_FILE)
    try:
        return int(db.execute("SELECT count(*) FROM events").fetchone()[0])
    finally:
        db.close()


@pytest.mark.parametrize("command", [("search", "noodle bar", "--no-dense"),
                                     ("read", "Lunch")], ids=lambda c: c[0])
def test_the_cli_refuses_a_session_that_ended(tmp_path: Path,
                                              command: tuple[str, ...]) -> None:
    """`rmh search|read --session ID` after `rmh end-session ID`: the use was logged into the
    ended session and counted in none, with no word to the user."""
    vault = make_vault(tmp_path / "vault")
    assert rmh(vault, "search", "auth rewrite", "--session", "s1", "--no-dense").returncode == 0
    assert rmh(vault, "end-session", "s1").returncode == 0
    before = _events(vault)
    out = rmh(vault, *command, "--session", "s1")
    assert out.returncode == 1 and "session 's1' has ended" in out.stderr, out.stderr
    assert _events(vault) == before
    assert rmh(vault, *command, "--session", "s2").returncode == 0
