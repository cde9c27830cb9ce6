"""The warm hooks daemon (harness/hooks_daemon.py) with real processes: the session-start hook
starts it, the prompt hook gets its memory from it (the hooks' own index removed, so only the
daemon can answer), a stopped daemon never holds the prompt hook up (the hooks' index
answers), and the last session's end stops it and removes its socket."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from harness.hooks_daemon import daemon_request, socket_path

from .test_hooks_session import hook, rmh, two_notes

pytestmark = pytest.mark.slow

PROMPT = "When does the nightly job run on the CI runners?"


def wait_for(check: object, what: str, limit: float = 240.0) -> None:
    """Poll `check()` until true (a state, not a guessed sleep); fail after `limit` s."""
    deadline = time.monotonic() + limit
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def test_the_prompt_hook_asks_the_warm_daemon_and_never_waits_on_it(tmp_path: Path) -> None:
    root = two_notes(tmp_path / "v")
    assert rmh(root, "init", "--no-dense").returncode == 0
    wait(root, 1.0)  # short, so the stopped daemon below costs 1 s; answers are polled for
    base = {"session_id": "s1", "transcript_path": "", "cwd": str(tmp_path)}
    hook(root, "session-start", {**base, "hook_event_name": "SessionStart"})
    wait_for(lambda: daemon_request(root, {"event": "ping"}, timeout=5.0) is not None,
             "the daemon")
    pid = int((root / ".rmh" / "hooks-daemon.pid").read_text())
    try:
        _exercise(root, base, pid)
    finally:  # never leave a daemon behind a failed test
        if _alive(pid):
            os.kill(pid, signal.SIGCONT)
            os.kill(pid, signal.SIGTERM)


def _exercise(root: Path, base: dict[str, str], pid: int) -> None:
    index = root / ".rmh" / "hooks.sqlite"
    index.rename(index.with_suffix(".away"))  # only the daemon can answer now
    prompt = {**base, "hook_event_name": "UserPromptSubmit", "prompt": PROMPT}
    said: list[str] = []  # on a loaded machine one answer may miss the 1 s wait: ask again

    def answered() -> bool:
        said.append(hook(root, "prompt", prompt).stdout)
        return said[-1] != ""

    wait_for(answered, "the warm daemon's answer")
    text = json.loads(said[-1])["hookSpecificOutput"]["additionalContext"]
    assert "02:00" in text and "Build notes.md" in text and "Tomatoes" not in text

    index.with_suffix(".away").rename(index)
    # a daemon that does not answer: the hooks' own index answers, once its wait (published
    # when it started: `[hooks] daemon_wait_s`, 1 s here) is spent; a changed rmh.toml
    # applies to the next (test_hooks_daemon_late.py: several prompts at once)
    wait(root, 60.0)
    assert json.loads((root / ".rmh" / "hooks-daemon.json").read_text())["wait_s"] == 1.0
    os.kill(pid, signal.SIGSTOP)
    try:
        out = hook(root, "prompt", prompt)
        assert out.stdout, f"nothing injected; stderr: {out.stderr}"
        assert "02:00" in json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
        assert "did not answer in time (1 s" in out.stderr
    finally:
        os.kill(pid, signal.SIGCONT)

    # a second client session keeps it; the last one's end stops it, and the hook then
    # falls back to the hooks' own index

    hook(root, "session-start", {**base, "session_id": "s2", "hook_event_name": "SessionStart"})
    hook(root, "session-end", {**base, "hook_event_name": "SessionEnd"})
    assert daemon_request(root, {"event": "ping"}, timeout=5.0) is not None
    hook(root, "session-end", {**base, "session_id": "s2", "hook_event_name": "SessionEnd"})
    path = socket_path(root)
    assert path is not None
    wait_for(lambda: not path.exists(), "the socket removed")
    wait_for(lambda: not _alive(pid), "the daemon's exit")
    out = hook(root, "prompt", prompt)
    assert "02:00" in json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]


def wait(root: Path, seconds: float) -> None:
    """How long the prompt hook waits for the daemon (`[hooks] daemon_wait_s`)."""
    (root / "rmh.toml").write_text(f"[hooks]\ndaemon_wait_s = {seconds}\n", "utf-8")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"  # a zombie has exited
