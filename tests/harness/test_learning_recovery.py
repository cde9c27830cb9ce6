"""Issue 31 through real processes: a session of a `rmh serve` killed with kill -9 is recovered
by the next rmh process that opens the ledger, a CLI command included; a live server's session
never is; `doctor` lists the recovered session; `session.end` with the agent's answer counts
the retrieved notes the answer uses."""

from __future__ import annotations

import contextlib
import json
import signal
import sqlite3
from pathlib import Path

import pytest

from harness.commands.learn import learning_warnings

from .test_learning_sessions import learning, rmh
from .test_server_e2e import Server, make_vault

pytestmark = pytest.mark.slow


def _killed_session(vault: Path, tmp: Path) -> str:
    """A server that searched and read, then kill -9: its session id."""
    srv = Server(vault, tmp)
    srv.call("vault.search", {"query": "auth rewrite", "k": 3})
    srv.call("vault.read", {"note": "Project Atlas"}, rid=2)
    session = str(srv.call("status", rid=3)["result"]["session"])
    srv.proc.send_signal(signal.SIGKILL)
    srv.proc.wait(timeout=30)
    return session


@pytest.mark.parametrize("command", [("learning", "--json"), ("doctor", "--json"),
                                     ("search", "hiking", "--no-dense", "--json"),
                                     ("list", "--json"), ("read", "Lunch"), ("links", "Lunch"),
                                     ("status", "--no-dense")])
def test_a_cli_command_recovers_a_killed_server_session(tmp_path: Path,
                                                        command: tuple[str, ...]) -> None:
    vault = make_vault(tmp_path / "vault")
    session = _killed_session(vault, tmp_path)
    out = rmh(vault, *command)  # no server started since the kill
    assert out.returncode == 0, out.stderr
    with contextlib.closing(sqlite3.connect(vault / ".rmh" / "learned.sqlite")) as db:
        ends = db.execute("SELECT count(*) FROM events WHERE kind = 'end' AND session = ?",
                          (session,)).fetchone()[0]
    assert ends == 1  # recovered by that command itself, before any other ran
    doc = learning(vault, "Project Atlas")
    rewards = doc["rewards"]
    assert isinstance(rewards, list) and len(rewards) == 1
    assert rewards[0]["session"] == session and rewards[0]["recovered"] is True
    assert rewards[0]["rewards"]["read"] == 1.0 and isinstance(doc["q"], float) and doc["q"] > 0
    audit = json.loads(rmh(vault, "doctor", "--json").stdout)["learning"]
    assert audit["sessions"]["recovered"] == 1 and audit["open_sessions"] == []
    assert [r["session"] for r in audit["recovered_sessions"]] == [session]
    assert audit["replay_matches"] is True
    assert not list((vault / ".rmh" / "sessions").glob("*.lock"))


def test_the_cli_never_recovers_a_live_server_session(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault")
    srv = Server(vault, tmp_path)
    srv.call("vault.search", {"query": "auth rewrite", "k": 3})
    session = srv.call("status", rid=2)["result"]["session"]
    audit = json.loads(rmh(vault, "doctor", "--json").stdout)["learning"]
    assert [s["session"] for s in audit["open_sessions"]] == [session]
    assert audit["open_sessions"][0]["alive"] == "yes"
    assert audit["open_sessions"][0]["pid"] == srv.proc.pid
    assert audit["sessions"]["recovered"] == 0
    srv.call("vault.read", {"note": "Project Atlas"}, rid=3)  # the session goes on
    assert srv.finish() == 0
    doc = learning(vault, "Project Atlas")
    rewards = doc["rewards"]
    assert isinstance(rewards, list) and len(rewards) == 1 and not rewards[0]["recovered"]


def test_a_cli_session_is_left_to_the_idle_timer(tmp_path: Path) -> None:
    """`rmh search --session` records no process: another CLI command must not end it."""
    vault = make_vault(tmp_path / "vault")
    assert rmh(vault, "search", "auth rewrite", "--session", "cli-1", "--no-dense").returncode == 0
    assert rmh(vault, "read", "Project Atlas", "--session", "cli-1").returncode == 0
    audit = json.loads(rmh(vault, "learning", "--json").stdout)
    assert audit["sessions"] == {"open": 1, "ended": 0, "recovered": 0}
    assert audit["open_sessions"][0]["alive"].startswith("unknown")
    assert rmh(vault, "end-session", "cli-1").returncode == 0
    again = rmh(vault, "end-session", "cli-1", "--json")  # ended already: nothing to do
    assert again.returncode == 0 and json.loads(again.stdout)["rewards_applied"] is False
    unknown = rmh(vault, "end-session", "cli-2", "--json")  # never started: refused, typed
    assert unknown.returncode == 1 and json.loads(unknown.stdout)["error"]["kind"] == "no_session"
    doc = learning(vault, "Project Atlas")
    assert isinstance(doc["rewards"], list) and not doc["rewards"][0]["recovered"]


def test_session_end_with_the_answer_counts_the_notes_it_uses(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault")
    srv = Server(vault, tmp_path)
    srv.call("session.start", {"session": "ans"})
    hits = srv.call("vault.search", {"query": "Monday Tuesday", "k": 5}, rid=2)["result"]["hits"]
    assert {"Project Atlas.md", "Lunch.md"} <= {h["note"] for h in hits}
    bad = srv.call("session.end", {"answer": 7}, rid=3)
    assert bad["error"]["data"]["param"] == "answer"  # a typed error; the session stays open
    ended = srv.call("session.end", {"answer": "The auth rewrite is due on Monday."}, rid=4)
    assert ended["result"]["rewards_applied"] is True and ended["result"]["answer_used"] == 1
    assert srv.finish() == 0
    atlas, lunch = learning(vault, "Project Atlas"), learning(vault, "Lunch")
    assert atlas["rewards"][0]["rewards"] == {"answer": 1.0}  # type: ignore[index]
    assert isinstance(atlas["q"], float) and atlas["q"] > 0
    assert isinstance(lunch["q"], float) and lunch["q"] <= 0  # shown, not used by the answer
    audit = json.loads(rmh(vault, "replay", "--check", "--json").stdout)
    assert audit["matched"] is True


def test_an_answer_citing_a_retrieved_note_by_link_counts_it_used(tmp_path: Path) -> None:
    """A `[[link]]` in the answer that resolves to a note the session retrieved is a citation,
    whatever its words; a link to a note the session never saw, or to no note, counts nothing."""
    vault = make_vault(tmp_path / "vault")
    srv = Server(vault, tmp_path)
    srv.call("session.start", {"session": "cite"})
    hits = srv.call("vault.search", {"query": "Monday Tuesday", "k": 2}, rid=2)["result"]["hits"]
    shown = {h["note"] for h in hits}
    assert "Lunch.md" in shown
    unseen = sorted(p.stem for p in vault.rglob("*.md")
                    if p.relative_to(vault).as_posix() not in shown)
    assert unseen
    answer = f"See [[lunch|the lunch note]] and [[{unseen[0]}]] and [[No Such Note]]."
    ended = srv.call("session.end", {"answer": answer}, rid=3)
    assert ended["result"]["answer_used"] == 1
    assert srv.finish() == 0
    lunch = learning(vault, "Lunch")
    assert lunch["rewards"][0]["rewards"] == {"answer": 1.0}  # type: ignore[index]
    other = learning(vault, unseen[0])
    assert not other["rewards"]


def test_doctor_warns_on_a_negative_exposure_q_correlation() -> None:
    report = {"exposure_q_pearson": -0.25, "missing_rows": 0, "replay_matches": True}
    warnings = learning_warnings(report, dead=["s-1"])
    assert len(warnings) == 2 and "negative (-0.250)" in warnings[0] and "s-1" in warnings[1]
    assert learning_warnings({"exposure_q_pearson": 0.1, "missing_rows": 0}, dead=[]) == []


def test_doctor_warns_through_real_processes(tmp_path: Path) -> None:
    """A note shown twice and skipped, beside one shown once and read: exposure/Q is negative,
    and `rmh doctor` (a new process reading the ledger) says so first."""
    vault = make_vault(tmp_path / "vault")
    for args in (("search", "Monday Tuesday", "--session", "w1", "--no-dense"),
                 ("read", "Lunch", "--session", "w1"), ("end-session", "w1"),
                 # no word of w1's query: its words would find Lunch again (learning v6)
                 ("search", "auth rewrite", "--session", "w2", "--no-dense"),
                 ("end-session", "w2")):
        assert rmh(vault, *args).returncode == 0
    atlas, lunch = learning(vault, "Project Atlas"), learning(vault, "Lunch")
    assert isinstance(atlas["q"], float) and atlas["q"] < 0 < float(str(lunch["q"]))
    audit = json.loads(rmh(vault, "doctor", "--json").stdout)["learning"]
    assert audit["exposure_q_pearson"] < 0
    assert any("exposure/Q correlation is negative" in w for w in audit["warnings"])
    text = rmh(vault, "doctor").stdout
    assert "exposure/Q correlation is negative" in text


@pytest.mark.parametrize("first", [("list",), ("list", "recent"), ("status", "--no-dense")])
def test_a_note_removed_on_disk_leaves_learning_whatever_command_sees_it_first(
        tmp_path: Path, first: tuple[str, ...]) -> None:
    """The first process to see the removal logs the delete: `rmh list` opened the vault
    without its ledger, so the note's learned rows stayed (and `rmh learning` exited 1, `doctor`
    warned of rows naming missing notes) until a `rmh serve` started."""
    vault = make_vault(tmp_path / "vault")
    assert rmh(vault, "search", "auth rewrite", "--session", "s1", "--no-dense").returncode == 0
    assert rmh(vault, "read", "Project Atlas", "--session", "s1").returncode == 0
    assert rmh(vault, "end-session", "s1").returncode == 0
    (vault / "Project Atlas.md").unlink()
    assert rmh(vault, *first).returncode == 0
    out = rmh(vault, "learning", "--json")
    audit = json.loads(out.stdout)
    assert out.returncode == 0 and audit["missing_rows"] == 0 and audit["warnings"] == []
    assert audit["events"].get("delete") == 1 and audit["replay_matches"] is True
