"""Issue 31 through real processes: a `rmh serve` in its own pid namespace (a container that
shares the vault folder; here `unshare --pid --fork --mount-proc`) is alive to every rmh
process outside it. Its recorded pid named another process here (1: init), so `rmh doctor`
from the host recovered its session while it ran, and the server's read counted nowhere
(docs/measurements/session30/LROWS_liveness.py.txt)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from .test_learning_sessions import learning, rmh
from .test_server_e2e import CHILD_ENV, REPO, make_vault

pytestmark = pytest.mark.slow

UNSHARE = ["unshare", "--pid", "--fork", "--mount-proc"]


def _unshare_works() -> bool:
    if shutil.which("unshare") is None:
        return False
    return subprocess.run([*UNSHARE, "true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _unshare_works(), reason="needs unshare --pid (root)")
def test_a_server_in_another_pid_namespace_is_never_recovered_while_it_runs(
        tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault")
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
    env["PYTHONPATH"] = str(REPO)
    proc = subprocess.Popen([*UNSHARE, sys.executable, "-m", "harness", "--vault", str(vault),
                             "serve", "--no-dense"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=REPO, env=env)
    assert proc.stdin is not None and proc.stdout is not None

    def call(rid: int, method: str, params: dict[str, object]) -> dict[str, object]:
        assert proc.stdin is not None and proc.stdout is not None
        msg = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
        proc.stdin.write(json.dumps(msg).encode() + b"\n")
        proc.stdin.flush()
        return dict(json.loads(proc.stdout.readline()))

    call(1, "vault.search", {"query": "auth rewrite", "k": 3})
    session = call(2, "status", {})["result"]["session"]  # type: ignore[index]
    audit = json.loads(rmh(vault, "doctor", "--json").stdout)["learning"]
    assert [(s["session"], s["alive"]) for s in audit["open_sessions"]] == [(session, "yes")]
    call(3, "vault.read", {"note": "Project Atlas"})  # the session goes on
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0
    with contextlib.closing(sqlite3.connect(vault / ".rmh" / "learned.sqlite")) as db:
        ends = db.execute("SELECT data FROM events WHERE kind = 'end' AND session = ?",
                          (session,)).fetchall()
    assert [json.loads(d)["recovered"] for (d,) in ends] == [False]
    rewards = learning(vault, "Project Atlas")["rewards"]
    assert isinstance(rewards, list) and [r["rewards"] for r in rewards] == [{"read": 1.0}]
