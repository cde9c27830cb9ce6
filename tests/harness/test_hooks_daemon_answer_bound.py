"""A hook never holds more of the daemon's answer than MAX_ANSWER_BYTES, nor waits for it past
`[hooks] daemon_wait_s`: a broken or hostile daemon costs a prompt bounded memory and time,
and the prompt is then recalled from the hooks' index, as with a late daemon (HOUSE41).

Before, `hooks_client.daemon_request` appended the socket's bytes to one `bytes` until a
newline or the deadline: a daemon sending without end made the hook grow (quadratically
copied) for the whole wait. A stand-in daemon (a real Unix socket at VAULT/.rmh/hooks.sock,
its settings published as the daemon publishes them) answers each real `rmh hook prompt`
process by flooding one endless line, by one line just over the bound, or by trickling bytes
that never end the line; the hook's peak memory (the kernel's ru_maxrss of the child) is
compared with the same hook's with no daemon at all, measured in the same test.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.hooks_client import MAX_ANSWER_BYTES, MAX_WAIT_S, SETTINGS, SOCKET

from .test_hooks_session import hook, rmh, two_notes
from .test_server_e2e import CHILD_ENV, REPO

PROMPT = "When does the nightly job run on the CI runners?"
SLACK_KIB = 64 << 10  # what the hook may hold above its no-daemon self: the bound plus copies


class StandIn:
    """A daemon that reads each request line and answers as `mode` says, until closed."""

    def __init__(self, root: Path, mode: str) -> None:
        self.mode = mode
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(root / ".rmh" / SOCKET))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        chunk = b'{"text": "' + b"x" * (1 << 20)
        with conn:
            conn.settimeout(MAX_WAIT_S + 30)
            try:
                conn.recv(1 << 20)
                if self.mode == "over":  # one line just past the bound, then its end
                    conn.sendall(b'{"text": "' + b"y" * MAX_ANSWER_BYTES + b'"}\n')
                elif self.mode == "flood":  # never a line end, until the hook hangs up
                    sent = 0
                    while not self.stop.is_set() and sent < (4 << 30):
                        conn.sendall(chunk)
                        sent += len(chunk)
                else:  # trickle: a byte at a time, never a line end
                    while not self.stop.is_set():
                        conn.sendall(b"z")
                        time.sleep(0.05)
            except OSError:
                pass

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.sock.close()


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Path]:
    root = two_notes(tmp_path / "v")
    (root / "rmh.toml").write_text("[hooks]\ndaemon = false\n", "utf-8")
    assert rmh(root, "init", "--no-dense").returncode == 0
    hook(root, "session-start", {"session_id": "s1", "transcript_path": "", "cwd": str(root)})
    assert (root / ".rmh" / "hooks.sqlite").exists()
    yield root


def _publish(root: Path, wait_s: float) -> None:
    (root / "rmh.toml").write_text(f"[hooks]\ndaemon_wait_s = {wait_s}\n", "utf-8")
    (root / ".rmh" / SETTINGS).write_text(json.dumps(
        {"pid": os.getpid(), "wait_s": wait_s, "start_words": 150}), "utf-8")


def _recalled(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"])


@pytest.mark.parametrize("mode", ["flood", "over"])
def test_an_endless_answer_costs_bounded_memory_and_the_index_answers(
        vault: Path, mode: str) -> None:
    alone, alone_kib = _prompt_rusage(vault)
    assert "02:00" in _recalled(alone)
    _publish(vault, MAX_WAIT_S)
    stand_in = StandIn(vault, mode)
    try:
        flooded, flooded_kib = _prompt_rusage(vault)
    finally:
        stand_in.close()
    assert flooded_kib < alone_kib + SLACK_KIB, (flooded_kib, alone_kib)
    assert "02:00" in _recalled(flooded), flooded.stderr  # the hooks' index answered
    assert f"answer was over {MAX_ANSWER_BYTES} bytes" in flooded.stderr, flooded.stderr


def test_an_answer_that_never_ends_its_line_is_a_late_daemon(vault: Path) -> None:
    _publish(vault, 1.0)
    stand_in = StandIn(vault, "trickle")
    try:
        late, _ = _prompt_rusage(vault)
    finally:
        stand_in.close()
    assert "02:00" in _recalled(late), late.stderr
    assert "did not answer in time (1 s" in late.stderr, late.stderr


def _prompt_rusage(root: Path) -> tuple[subprocess.CompletedProcess[str], int]:
    """`_prompt`, its peak memory read from the kernel's accounting of the reaped child."""
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
    env["PYTHONPATH"] = str(REPO)
    payload = json.dumps({"session_id": "s1", "transcript_path": "", "cwd": str(root),
                          "hook_event_name": "UserPromptSubmit", "prompt": PROMPT})
    argv = [sys.executable, "-m", "harness", "--vault", str(root), "hook", "prompt",
            "--client", "claude-code"]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=REPO)
    result: dict[str, bytes] = {}

    def talk() -> None:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdin.write(payload.encode())
        proc.stdin.close()
        result["err"] = proc.stderr.read()

    reader = threading.Thread(target=talk, daemon=True)
    reader.start()
    assert proc.stdout is not None
    out = proc.stdout.read()
    reader.join(timeout=MAX_WAIT_S + 120)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = result.get("err", b"")
    proc.stdout.close()
    assert proc.stderr is not None
    proc.stderr.close()
    done = subprocess.CompletedProcess(argv, proc.returncode, out.decode(), err.decode())
    return done, usage.ru_maxrss
