"""`rmh serve` as a real subprocess, stopped by a signal while it is still starting (its vault
opening): the requests the client wrote are answered and it exits 0, as for a signal a moment
later (rpc/held_signals.py). The server is held inside its vault's open by another
connection's exclusive lock on the index (SQLite waits for it), so the signal lands there
every time, whatever the machine's load."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from vault import Vault

from .test_server_e2e import Server, make_vault

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads /proc/PID/fd")]


def opened(pid: int, path: Path) -> bool:
    """Whether process `pid` holds `path` open."""
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == str(path):
                return True
        except OSError:  # closed meanwhile
            continue
    return False


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP],
                         ids=["SIGTERM", "SIGINT", "SIGHUP"])
def test_a_stop_signal_while_the_vault_opens_answers_every_request(
        tmp_path: Path, signum: int) -> None:
    """Before: SIGTERM and SIGHUP killed it (exit -15, -1), SIGINT ended it with exit 1 and
    "rmh: interrupted"; no request written before was answered."""
    root = make_vault(tmp_path / "v")
    Vault.init(root).close()
    index = (root / ".rmh" / "index.sqlite").resolve()
    lock = sqlite3.connect(index, isolation_level=None)
    lock.execute("PRAGMA locking_mode = EXCLUSIVE")
    lock.execute("BEGIN EXCLUSIVE")
    locked = True
    srv = Server(root, tmp_path)
    try:
        frames = [{"jsonrpc": "2.0", "id": 1, "method": "ping"},
                  {"jsonrpc": "2.0", "id": "s", "method": "vault.search",
                   "params": {"query": "atlas"}},
                  {"jsonrpc": "2.0", "method": "notifications/initialized"}]
        srv.send_raw(b"".join(json.dumps(f).encode() + b"\n" for f in frames))
        deadline = time.monotonic() + 120
        while not opened(srv.proc.pid, index):
            assert srv.proc.poll() is None, srv.stderr_path.read_text()
            assert time.monotonic() < deadline, "the server never opened its index"
            time.sleep(0.002)
        srv.proc.send_signal(signum)
        lock.execute("COMMIT")
        lock.close()
        locked = False
        code = srv.finish()
        answers = [json.loads(line) for line in srv.lines]
        assert code == 0, (code, srv.stderr_path.read_text())
        assert sorted(str(a["id"]) for a in answers) == ["1", "s"], answers
        for a in answers:
            assert "result" in a or a["error"]["data"]["kind"] == "server_shutting_down", a
    finally:
        if locked:
            lock.close()
        if srv.proc.poll() is None:
            srv.proc.kill()
            srv.proc.wait()
