"""A looping agent cannot grow the learning log without bound: a real `rmh serve`, searches in
a loop over JSON-RPC and from the REPL, session after session, under rmh.toml's [learning]."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.harness.test_server_e2e import Server, make_vault

pytestmark = pytest.mark.slow

SESSION_BYTES, LOG_BYTES = 5_000, 16_000


def log_bytes(vault: Path) -> int:
    conn = sqlite3.connect(vault / ".rmh" / "learned.sqlite")
    try:
        row = conn.execute("SELECT SUM(32 + LENGTH(CAST(data AS BLOB))) FROM events")
        return int(row.fetchone()[0] or 0)
    finally:
        conn.close()


@pytest.fixture
def bounded(tmp_path: Path) -> Any:
    vault = make_vault(tmp_path / "vault")
    (vault / "rmh.toml").write_text(
        f"[learning]\nsession_bytes = {SESSION_BYTES}\nlog_bytes = {LOG_BYTES}\n", "utf-8")
    srv = Server(vault, tmp_path)
    yield vault, srv
    if srv.proc.poll() is None:
        srv.proc.kill()
        srv.proc.wait()


def test_searches_in_a_loop_stay_within_the_bounds(bounded: tuple[Path, Server]) -> None:
    vault, server = bounded
    rid, sizes = 0, []
    for _ in range(6):  # a session's budget, spent over JSON-RPC, then the next session
        server.call("session.start", {}, rid=(rid := rid + 1))
        said = []
        for k in range(60):
            out = server.call("vault.search", {"query": f"hiking auth {k}", "k": 100},
                              rid=(rid := rid + 1))["result"]
            assert out["hits"]  # the search answers, recorded or not
            said.append(out.get("learning", ""))
        assert said[0] == "" and said[-1].startswith("not recorded: ")
        assert "session_bytes" in said[-1]
        server.call("session.end", rid=(rid := rid + 1))
        sizes.append(log_bytes(vault))
    assert max(sizes) <= LOG_BYTES + SESSION_BYTES  # the open session's events may wait
    assert server.finish() == 0


def test_a_repl_loop_of_searches_stays_within_the_bounds(bounded: tuple[Path, Server]) -> None:
    vault, server = bounded
    for rid in range(1, 5):  # one exec of 300 searches, each time in a new session
        server.call("session.start", {}, rid=f"s{rid}")
        code = ("said = [search(f'hiking {i}', k=100) for i in range(300)]\n"
                "(said[0][0].get('learning', ''), said[-1][0].get('learning', ''))")
        out = server.call("repl.exec", {"code": code}, rid=rid)["result"]
        assert out["ok"], out
        assert out["value"].startswith("('', ") and "not recorded: " in out["value"]
        server.call("session.end", rid=f"e{rid}")
        assert log_bytes(vault) <= LOG_BYTES + SESSION_BYTES
    assert server.finish() == 0
    assert (vault / ".rmh" / "learned.sqlite").stat().st_size < 400_000
