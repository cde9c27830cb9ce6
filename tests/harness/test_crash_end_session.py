"""Commands that change learned state, killed after each of their file operations
(RMH_FAULT_AFTER_OPS: the store's writes and each `learned.sqlite` transaction's two steps,
vault/storage/faults.py), then recovered by the next process.

- `rmh conversation end-session --apply` promoted and archived working notes one at a time: a
  kill midway left some notes promoted or archived and the rest not, until a rerun. Now all
  or none once the next process has opened the vault (vault/archive_writes.py).
- `rmh end-session S`, `rmh read --session S` and the recovery of a dead session by the next
  command wrote only `learned.sqlite`, which the seam did not count: no kill ever landed in
  them. Now each transaction counts, and a kill at any of them leaves the session's end
  (its events) whole or absent, and what the next command sees the state a replay gives.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.forks import CLI_PRELOAD, ForkServer, cli_env

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
WORKING = "conversations/c1/working/S1"


def rmh(server: ForkServer, work: Path, *args: str,
        fault_after: int | None = None) -> subprocess.CompletedProcess[str]:
    env = cli_env(work, fault_after=fault_after)
    return server.run(["--vault", str(work / "vault"), *args, "--json"], module="harness",
                      env=env, cwd=ROOT)


def notes(work: Path) -> dict[str, bytes]:
    root = work / "vault"
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.md"))
            if ".rmh" not in p.parts}


def pending(work: Path) -> list[str]:
    folder = work / "vault" / ".rmh" / "intents"
    return sorted(os.listdir(folder)) if folder.is_dir() else []


def ledger_rows(work: Path, sql: str) -> list[tuple[int, ...]]:
    conn = sqlite3.connect(work / "vault" / ".rmh" / "learned.sqlite")
    try:
        return [tuple(int(x) for x in row) for row in conn.execute(sql)]
    finally:
        conn.close()


def working_template(top: Path, server: ForkServer) -> Path:
    """Five working notes of session S1: two confirmed, one cited by a plain note (promoted),
    two neither (archived)."""
    work = top / "template"
    assert rmh(server, work, "init").returncode == 0
    for i in range(5):
        extra = ["--confirmed"] if i in (1, 3) else []
        run = rmh(server, work, "conversation", "note", "c1", "S1", f"n{i}",
                  f"Working note {i} about the kiln firing.", "--date", "2024-01-01T00:00",
                  *extra)
        assert run.returncode == 0, run.stderr
    (work / "vault" / "cites.md").write_text("See [[n4]] for the glaze.\n")
    return work


def test_end_session_killed_anywhere_is_all_or_none_after_the_next_open(
        tmp_path: Path) -> None:
    with ForkServer(CLI_PRELOAD, workdir=tmp_path / "forks", cwd=ROOT) as server:
        template = working_template(tmp_path, server)
        assert len(json.loads(rmh(server, template, "conversation", "end-session", "c1",
                                  "S1").stdout)["decisions"]) == 5
        whole = tmp_path / "whole"
        shutil.copytree(template, whole)
        assert rmh(server, whole, "conversation", "end-session", "c1", "S1",
                   "--apply").returncode == 0
        before, after = notes(template), notes(whole)
        assert before != after
        states, work = [], tmp_path / "work"
        for n in range(1, 300):
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(template, work)
            run = rmh(server, work, "conversation", "end-session", "c1", "S1", "--apply",
                      fault_after=n)
            if run.returncode == 0:
                break
            assert run.returncode == -9, run.stderr
            # the next process (a report: no --apply) finishes or leaves it
            left = json.loads(rmh(server, work, "conversation", "end-session", "c1",
                                  "S1").stdout)["decisions"]
            now = notes(work)
            state = ("before" if now == before and len(left) == 5 else
                     "after" if now == after and left == [] else f"torn at {n}: {left}")
            assert state in ("before", "after"), state
            assert pending(work) == [], n
            states.append(state)
        else:
            raise AssertionError("never finished")
        assert "before" in states and "after" in states  # the kills landed on both sides
        assert len(states) >= 8  # the archives' transaction counts: its two steps are points


def test_learned_state_writes_are_kill_points_and_all_or_none(tmp_path: Path) -> None:
    """`rmh read --session` (a use event), `rmh end-session` (the session's end), and the
    recovery of a session whose server died (the next command's open): each is killed at
    every one of its counted operations; the ledger's replay still matches and the event is
    there whole or not at all."""
    with ForkServer(CLI_PRELOAD, workdir=tmp_path / "forks", cwd=ROOT) as server:
        template = tmp_path / "template"
        assert rmh(server, template, "init").returncode == 0
        (template / "vault" / "kiln.md").write_text("# Kiln\nThe kiln fires at 1200 C.\n")
        assert rmh(server, template, "read", "kiln", "--session", "S1").returncode == 0
        commands = [("read", "kiln", "--session", "S1"), ("end-session", "S1")]
        for args in commands:
            kinds = []
            for n in range(1, 50):
                work = tmp_path / "work"
                shutil.rmtree(work, ignore_errors=True)
                shutil.copytree(template, work)
                count = ledger_rows(work, "SELECT count(*) FROM events")[0][0]
                run = rmh(server, work, *args, fault_after=n)
                if run.returncode == 0:
                    break
                assert run.returncode == -9, (args, n, run.stderr)
                kinds.append(ledger_rows(work, "SELECT count(*) FROM events")[0][0] - count)
                audit = rmh(server, work, "learning")
                assert json.loads(audit.stdout)["replay_matches"], (args, n)
                assert rmh(server, work, *args).returncode == 0, (args, n)
            else:
                raise AssertionError("never finished")
            assert kinds, f"{args}: no kill point (its ledger writes were not counted)"
            assert set(kinds) <= {0, 1}, kinds  # the event whole or absent


def test_a_dead_sessions_recovery_is_a_kill_point_and_finishes_later(tmp_path: Path) -> None:
    """A server killed with its session open: the next command recovers it (its end logged
    with `recovered`); killed at each of the recovery's operations, the command after it
    ends the session exactly once."""
    with ForkServer(CLI_PRELOAD, workdir=tmp_path / "forks", cwd=ROOT) as server:
        template = tmp_path / "template"
        assert rmh(server, template, "init").returncode == 0
        (template / "vault" / "kiln.md").write_text("# Kiln\nThe kiln fires at 1200 C.\n")
        frames = [{"jsonrpc": "2.0", "id": 1, "method": "session.start",
                   "params": {"session": "dead"}},
                  {"jsonrpc": "2.0", "id": 2, "method": "vault.read", "params": {"note": "kiln"}}]
        env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
        env.update({"PYTHONPATH": str(ROOT), "HOME": str(template)})
        server_proc = subprocess.Popen(  # killed with its session open: a dead session
            [sys.executable, "-m", "harness", "--vault", str(template / "vault"), "serve"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
        assert server_proc.stdin is not None and server_proc.stdout is not None
        for frame in frames:
            server_proc.stdin.write(json.dumps(frame) + "\n")
            server_proc.stdin.flush()
            assert "result" in json.loads(server_proc.stdout.readline())
        server_proc.kill()
        server_proc.wait()
        server_proc.stdin.close()
        server_proc.stdout.close()
        ends = "SELECT count(*) FROM events WHERE kind = 'end' AND session = 'dead'"
        assert ledger_rows(template, ends) == [(0,)]  # exit closed nothing: left for recovery
        seen: list[int] = []  # the session's ends right after each kill
        for n in range(1, 50):
            work = tmp_path / "work"
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(template, work)
            run = rmh(server, work, "search", "kiln", "--no-dense", fault_after=n)
            if run.returncode == 0:
                break
            assert run.returncode == -9, run.stderr
            seen.append(ledger_rows(work, ends)[0][0])
            assert rmh(server, work, "search", "kiln", "--no-dense").returncode == 0
            assert ledger_rows(work, ends) == [(1,)], n
        else:
            raise AssertionError("never finished")
        # killed before the recovery's commit (not ended) and after it (ended once)
        assert 0 in seen and set(seen) <= {0, 1}, seen
