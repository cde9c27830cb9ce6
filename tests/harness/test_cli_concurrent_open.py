"""`rmh init --no-dense` creates both SQLite files, and servers started together on a fresh
vault all start (issue 27 item 4: one of them used to exit `table meta already exists`)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.harness.test_cli_notes import ROOT, rmh

SERVERS = 6


def test_init_no_dense_creates_the_learning_ledger(tmp_path: Path) -> None:
    root = tmp_path / "v"
    r = rmh("--vault", str(root), "init", "--no-dense")
    assert r.returncode == 0, r.stderr
    conn = sqlite3.connect(root / ".rmh" / "learned.sqlite")
    tables = {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    conn.close()
    assert {"meta", "events", "note", "session"} <= tables


def test_servers_started_together_on_a_fresh_vault_all_start(tmp_path: Path) -> None:
    for attempt in range(2):
        root = tmp_path / f"v{attempt}"
        (root / ".rmh").mkdir(parents=True)
        for i in range(3):
            (root / f"n{i}.md").write_text(f"note {i} [[n{(i + 1) % 3}]]\n", "utf-8")
        procs = [subprocess.Popen(
            [sys.executable, "-m", "harness", "--vault", str(root), "serve", "--no-dense"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
            for _ in range(SERVERS)]
        for p in procs:  # a ping each, then end of input: every server answers and exits 0
            out, err = p.communicate(b'{"jsonrpc":"2.0","method":"ping","id":1}\n', timeout=120)
            assert p.returncode == 0, err.decode()[-2000:]
            assert b'"result"' in out, err.decode()[-2000:]
