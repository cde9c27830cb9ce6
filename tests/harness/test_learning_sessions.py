"""Issue 13 through the real server and CLI: a session on every connection (MCP included),
recovery of a kill -9'd session at once by liveness, `rmh learning NOTE`, and reproducible
`--as-of` / `--no-learn` searches."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import stdio_client

from tests.forks import run_cli

from .test_mcp_sdk_client import server_params
from .test_server_e2e import Server, make_vault

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def rmh(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env["PYTHONPATH"] = str(REPO)
    return run_cli(["--vault", str(root), *args], env=env, cwd=REPO, timeout=120)


def learning(root: Path, note: str) -> dict[str, object]:
    out = rmh(root, "learning", note, "--json", "--no-dense")
    assert out.returncode == 0, out.stderr
    doc: dict[str, object] = json.loads(out.stdout)
    return doc


def test_mcp_client_learns_with_no_session_call(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault")

    async def main() -> None:
        with anyio.fail_after(120):
            async with stdio_client(server_params(vault)) as (rx, tx), \
                    ClientSession(rx, tx) as session:
                await session.initialize()
                found = await session.call_tool("search", {"query": "auth rewrite", "k": 5})
                assert not found.is_error
                await session.call_tool("read", {"note": "Project Atlas"})
                wrote = await session.call_tool(
                    "write", {"note": "answers/Owner", "content": "Per [[Project Atlas]]."})
                assert not wrote.is_error

    anyio.run(main)  # the client closes stdin: EOF ends the connection's session
    doc = learning(vault, "Project Atlas")
    assert isinstance(doc["q"], float) and doc["q"] > 0.0
    rewards = doc["rewards"]
    assert isinstance(rewards, list) and len(rewards) == 1
    assert rewards[0]["rewards"]["cite"] == 1.0 and rewards[0]["rewards"]["read"] > 0
    assert rewards[0]["session"].startswith("c-") and not rewards[0]["recovered"]
    kinds = [e["kind"] for e in doc["events"]]  # type: ignore[attr-defined]
    assert kinds == ["search", "read", "linked_from"]
    human = rmh(vault, "learning", "Project Atlas", "--no-dense")
    assert human.returncode == 0 and "cite +1.0000" in human.stdout
    assert "prior x1.1000 on a query wholly about" in human.stdout  # read + cite: m = 0.625
    assert "x1 on a query sharing none of its words), never past a note it names" in \
        human.stdout  # v5, v8: the topic-free part of a positive score, by the word share
    audit = json.loads(rmh(vault, "learning", "--json").stdout)
    assert audit["forward_citations"] == 1 and audit["replay_matches"] is True
    assert audit["sessions"] == {"open": 0, "ended": 1, "recovered": 0}


def test_kill_9_mid_session_is_recovered_by_the_next_connection_at_once(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault")
    srv = Server(vault, tmp_path)
    hits = srv.call("vault.search", {"query": "auth rewrite", "k": 3})["result"]["hits"]
    assert hits[0]["note"] == "Project Atlas.md"
    srv.call("vault.read", {"note": "Project Atlas"}, rid=2)
    status = srv.call("status", rid=3)["result"]
    assert status["session"].startswith("c-") and status["session_implicit"] is True
    locks = list((vault / ".rmh" / "sessions").glob("*.lock"))
    assert len(locks) == 1
    srv.proc.send_signal(signal.SIGKILL)
    srv.proc.wait(timeout=30)
    start = time.time()
    again = Server(vault, tmp_path)  # a new connection, seconds later: no idle timer
    assert again.call("ping", rid=1)["result"] == {}
    assert again.finish() == 0
    assert time.time() - start < 60
    doc = learning(vault, "Project Atlas")
    rewards = doc["rewards"]
    assert isinstance(rewards, list) and len(rewards) == 1 and rewards[0]["recovered"] is True
    assert rewards[0]["rewards"]["read"] > 0 and isinstance(doc["q"], float) and doc["q"] > 0
    assert not list((vault / ".rmh" / "sessions").glob("*.lock"))


def test_a_live_session_is_not_recovered(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault")
    a = Server(vault, tmp_path)
    a.call("vault.search", {"query": "auth rewrite"})
    (tmp_path / "b").mkdir()
    b = Server(vault, tmp_path / "b")
    b.call("vault.search", {"query": "hiking"}, rid=2)  # b's session start checks liveness
    assert b.finish() == 0
    assert a.call("vault.read", {"note": "Project Atlas"}, rid=3)["result"]["note"]
    assert a.finish() == 0
    audit = json.loads(rmh(vault, "learning", "--json").stdout)
    assert audit["sessions"] == {"open": 0, "ended": 2, "recovered": 0}


def test_as_of_searches_are_byte_identical_and_no_learn_records_nothing(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault")
    srv = Server(vault, tmp_path)
    srv.call("vault.search", {"query": "auth rewrite"})
    srv.call("vault.read", {"note": "Project Atlas"}, rid=2)
    assert srv.finish() == 0
    copy = tmp_path / "copy"
    shutil.copytree(vault, copy)
    events = json.loads(rmh(vault, "learning", "--json").stdout)["events"]
    as_of = str(time.time())
    first = rmh(vault, "search", "auth rewrite Caroline", "--as-of", as_of, "--json", "--explain")
    assert first.returncode == 0, first.stderr
    time.sleep(1.5)
    second = rmh(copy, "search", "auth rewrite Caroline", "--as-of", as_of, "--no-learn",
                 "--json", "--explain")
    assert first.stdout == second.stdout  # byte for byte, another copy, later
    basis = json.loads(first.stdout)["basis"]
    assert basis["clock"] == float(as_of) and basis["learned_seq"] > 0
    assert json.loads(first.stdout)["hits"][0]["receipt"]["basis"] == basis
    plain = rmh(vault, "search", "auth rewrite", "--no-learn", "--json")
    assert plain.returncode == 0
    assert json.loads(rmh(vault, "learning", "--json").stdout)["events"] == events
    assert json.loads(rmh(copy, "learning", "--json").stdout)["events"] == events
    # replay --until SEQ: the state at a point of the log
    until = rmh(vault, "replay", "--until", "1", "--json")
    doc = json.loads(until.stdout)
    assert until.returncode == 0 and doc["last_seq"] == 1
