"""The learning log's rewrites, killed after each of their steps (RMH_FAULT_AFTER_OPS,
vault/storage/faults.py): its compaction (a fold of the oldest events into the base, past
rmh.toml [learning] log_bytes: learning/compact.py) and its redaction by `rmh forget`
(learning/redact.py: the rewrite, then VACUUM). Before session 34 neither was a kill point
(one uncounted transaction each, and the VACUUM after it): a sweep never stopped a process
inside them. Now each is (rows written, COMMIT, and the redaction's VACUUM), and after a kill
at any of them the next process sees a log whose replay matches its state; an erasure killed
between its rewrite and its VACUUM is finished by the next open (no byte of the erased text
left in any file). Real processes forked from one server (tests/forks.py)."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.forks import CLI_PRELOAD, ForkServer, cli_env

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
SECRET = "Quillon-Marrow-5519"


def rmh(server: ForkServer, work: Path, *args: str, fault_after: int | None = None,
        stdin: str = "") -> subprocess.CompletedProcess[str]:
    return server.run(["--vault", str(work / "vault"), *args], module="harness",
                      env=cli_env(work, fault_after=fault_after), cwd=ROOT, stdin=stdin)


def rows(work: Path, sql: str) -> list[tuple[object, ...]]:
    # read only: a writable connection's close checkpoints the WAL, changing the file
    conn = sqlite3.connect(f"file:{work / 'vault' / '.rmh' / 'learned.sqlite'}?mode=ro",
                           uri=True)
    try:
        return list(conn.execute(sql))
    finally:
        conn.close()


def served_reads(server: ForkServer, work: Path, note: str, n: int) -> None:
    frames = [{"jsonrpc": "2.0", "id": 0, "method": "session.start",
               "params": {"session": "S0"}}]
    frames += [{"jsonrpc": "2.0", "id": i + 1, "method": "vault.read", "params": {"note": note}}
               for i in range(n)]
    run = rmh(server, work, "serve", stdin="".join(json.dumps(f) + "\n" for f in frames))
    assert all("result" in json.loads(ln) for ln in run.stdout.splitlines()), run.stdout


def test_compaction_is_a_kill_point_and_the_log_replays_after_any_kill(
        tmp_path: Path) -> None:
    with ForkServer(CLI_PRELOAD, workdir=tmp_path / "forks", cwd=ROOT) as server:
        template = tmp_path / "template"
        (template / "vault").mkdir(parents=True)
        (template / "vault" / "rmh.toml").write_text("[learning]\nlog_bytes = 1024\n")
        (template / "vault" / "kiln.md").write_text("# Kiln\nThe kiln fires at 1200 C.\n")
        assert rmh(server, template, "init", "--no-dense").returncode == 0
        served_reads(server, template, "kiln", 12)  # the log near its bound: 12 x 54 bytes
        cost = 32 + len(str(rows(template, "SELECT data FROM events WHERE kind = 'read'")[0][0]))
        while int(str(rows(template, "SELECT value FROM meta WHERE key = 'log_bytes'")[0][0])) \
                + cost <= 1024:  # until the next read compacts it (compact.py)
            assert rmh(server, template, "read", "kiln", "--session", "S1").returncode == 0
        assert rows(template, "SELECT count(*) FROM base") == [(0,)]
        last = rows(template, "SELECT max(seq) FROM events")[0][0]
        landed, work = [], tmp_path / "work"
        for n in range(1, 30):
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(template, work)
            run = rmh(server, work, "read", "kiln", "--session", "S1", fault_after=n)
            if run.returncode == 0:
                break
            assert run.returncode == -9, run.stderr
            appended = rows(work, f"SELECT count(*) FROM events WHERE seq > {last}") != [(0,)]
            based = rows(work, "SELECT count(*) FROM base") != [(0,)]
            landed.append((appended, based))
            audit = rmh(server, work, "learning", "--json")
            assert json.loads(audit.stdout)["replay_matches"], (n, audit.stdout)
            assert rmh(server, work, "read", "kiln", "--session", "S1").returncode == 0
            assert rows(work, "SELECT count(*) FROM base") == [(1,)], n  # compacted by now
        else:
            raise AssertionError("never finished")
        # killed before the append, after it, inside the compaction, after its commit
        assert (True, False) in landed and (True, True) in landed, landed
        assert landed.count((True, False)) >= 2, landed


def test_an_erasure_killed_between_the_logs_rewrite_and_its_vacuum_is_finished(
        tmp_path: Path) -> None:
    with ForkServer(CLI_PRELOAD, workdir=tmp_path / "forks", cwd=ROOT) as server:
        template = tmp_path / "template"
        (template / "vault").mkdir(parents=True)
        (template / "vault" / "Quillon.md").write_text(f"# Quillon\nBadge {SECRET}.\n")
        (template / "vault" / "keep.md").write_text("Groceries: apples and tea.\n")
        assert rmh(server, template, "init", "--no-dense").returncode == 0
        frames = [{"jsonrpc": "2.0", "id": 1, "method": "session.start",
                   "params": {"session": "s1"}},
                  {"jsonrpc": "2.0", "id": 2, "method": "vault.search",
                   "params": {"query": f"who owns {SECRET}", "k": 3}},
                  {"jsonrpc": "2.0", "id": 3, "method": "session.end", "params": {}}]
        assert rmh(server, template, "serve",
                   stdin="".join(json.dumps(f) + "\n" for f in frames)).returncode == 0
        work, between = tmp_path / "work", []
        for n in range(1, 80):
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(template, work)
            run = rmh(server, work, "forget", "--subject", SECRET, fault_after=n)
            if run.returncode == 0:
                break
            assert run.returncode == -9, run.stderr
            state = work / "vault" / ".rmh"
            in_file = any(SECRET.encode() in p.read_bytes() for p in state.iterdir()
                          if p.name.startswith("learned.sqlite"))
            redacted = rows(work, "SELECT count(*) FROM events WHERE kind = 'redact'") != [(0,)]
            if redacted and in_file:
                between.append(n)
            if n > 1 and not (redacted and (in_file or between[-1:] == [n - 1])):
                continue  # the other points: test_crash_forget.py sweeps them all
            doctor = rmh(server, work, "doctor", "--json")
            assert json.loads(doctor.stdout)["vault"]["intents"]["pending"] == [], n
            left = [p for p in work.rglob("*") if p.is_file() and SECRET.encode() in
                    p.read_bytes()]
            if (work / "vault" / "Quillon.md").exists():  # killed before the intent landed
                assert not redacted, n
            else:  # all erased, no byte of it left
                assert left == [], (n, left)
            assert rmh(server, work, "replay", "--check").returncode == 0, n
        else:
            raise AssertionError("never finished")
        assert between, "no kill landed between the log's rewrite and its VACUUM"
