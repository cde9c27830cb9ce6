"""`rmh exec` and `rmh repl` (harness/commands/repl.py) stopped by SIGTERM or SIGHUP while a
cell runs: one line on stderr, exit status 128 + the signal's number, the sandbox worker gone.
SIGHUP (a closed terminal, a dying parent session) killed both outright before: exit -1, no
word, the vault not closed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.harness.test_server_e2e import CHILD_ENV, REPO

pytestmark = pytest.mark.slow

CELL = "import time; time.sleep(60)"


def descendants(pid: int) -> set[int]:
    """Every process below `pid` (/proc/PID/task/*/children)."""
    out: set[int] = set()
    todo = [pid]
    while todo:
        for task in Path(f"/proc/{todo.pop()}/task").glob("*"):
            try:
                kids = {int(k) for k in (task / "children").read_text().split()}
            except OSError:
                continue
            todo += sorted(kids - out)
            out |= kids
    return out


def running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGTERM])
@pytest.mark.parametrize("command", ["exec", "repl"])
def test_a_stop_signal_ends_the_command_with_a_line_and_its_code(
        tmp_path: Path, command: str, sig: signal.Signals) -> None:
    vault = tmp_path / "v"
    (vault / ".rmh").mkdir(parents=True)
    (vault / "a.md").write_text("alpha\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
    env["PYTHONPATH"] = str(REPO)
    argv = [sys.executable, "-m", "harness", "--vault", str(vault), command, "--no-dense"]
    proc = subprocess.Popen([*argv, *(["-c", CELL] if command == "exec" else [])],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=REPO, env=env)
    try:
        assert proc.stdin is not None
        if command == "repl":
            proc.stdin.write(f"{CELL}\n".encode())
            proc.stdin.flush()
        deadline = time.monotonic() + 60
        while not (workers := descendants(proc.pid)) and time.monotonic() < deadline:
            time.sleep(0.05)
        if not workers:
            pytest.skip("no sandbox worker started here")
        time.sleep(0.5)  # the cell runs
        workers = descendants(proc.pid)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + sig, err
    assert err.decode().rstrip().endswith(f"rmh: stopped by {sig.name}"), err
    deadline = time.monotonic() + 5
    while any(map(running, workers)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [w for w in workers if running(w)]
