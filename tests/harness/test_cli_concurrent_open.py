"""`rmh init --no-dense` creates both SQLite files, and servers started together on a fresh
vault all start (issue 27 item 4: one of them used to exit `table meta already exists`); they
are forked at one instant from a server that imported the CLI (tests/forks.py)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from tests.forks import run_cli_together
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
        # all forked at the same instant from one server that imported the CLI
        # (tests/forks.py), each its own process; a ping each, then end of input: every server
        # answers and exits 0
        env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
        env.update(PYTHONHASHSEED="0", PYTHONPATH=str(ROOT))  # test_cli_notes.rmh's server
        done = run_cli_together([["--vault", str(root), "serve", "--no-dense"]] * SERVERS,
                                env=env, cwd=ROOT,
                                stdin='{"jsonrpc":"2.0","method":"ping","id":1}\n', timeout=120)
        for p in done:
            assert p.returncode == 0, p.stderr[-2000:]
            assert '"result"' in p.stdout, p.stderr[-2000:]
