"""A prompt the warm hooks daemon does not answer within `[hooks] daemon_wait_s` (a loaded
machine, a daemon busy or stopped: a slow vault) is recalled from the hooks' own index, as a
prompt with no daemon is, and the hook says so on stderr: memory is never silently dropped
because the daemon was late. Real processes: several prompt hooks at once against a stopped
daemon, by the command `rmh hooks install` writes (harness/hooks_fast.py's path) and by a
command line only the full CLI takes (`$RMH_VAULT`, harness/commands/hooks.py)."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from harness.hooks_daemon import daemon_request
from tests.forks import run_cli_together

from .test_hooks_daemon import _alive, wait, wait_for
from .test_hooks_session import hook, rmh, two_notes
from .test_server_e2e import CHILD_ENV, REPO

pytestmark = pytest.mark.slow

PROMPT = "When does the nightly job run on the CI runners?"


@pytest.mark.parametrize("engine", [False, True])
def test_a_late_daemon_leaves_each_prompt_to_the_hooks_index(tmp_path: Path,
                                                             engine: bool) -> None:
    root = two_notes(tmp_path / "v")
    assert rmh(root, "init", "--no-dense").returncode == 0
    wait(root, 0.5)
    if engine:  # the full engine would open the vault: a late daemon still costs no more
        with (root / "rmh.toml").open("a", encoding="utf-8") as f:
            f.write("engine = true\n")
    base = {"session_id": "s1", "transcript_path": "", "cwd": str(tmp_path)}
    hook(root, "session-start", {**base, "hook_event_name": "SessionStart"})
    assert (root / ".rmh" / "hooks.sqlite").exists()
    wait_for(lambda: daemon_request(root, {"event": "ping"}, timeout=5.0) is not None,
             "the daemon")
    pid = int((root / ".rmh" / "hooks-daemon.pid").read_text())
    payload = json.dumps({**base, "hook_event_name": "UserPromptSubmit", "prompt": PROMPT})
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
    env["PYTHONPATH"] = str(REPO)
    installed = ["--vault", str(root), "hook", "prompt", "--client", "claude-code"]
    os.kill(pid, signal.SIGSTOP)  # it holds its socket and never answers
    try:
        outs = run_cli_together([installed] * 3, env=env, cwd=REPO, stdin=payload)
        outs += run_cli_together([["hook", "prompt", "--client", "claude-code"]] * 2,
                                 env={**env, "RMH_VAULT": str(root)}, cwd=REPO, stdin=payload)
    finally:
        os.kill(pid, signal.SIGCONT)
        os.kill(pid, signal.SIGTERM)
    wait_for(lambda: not _alive(pid), "the daemon's exit")
    for out in outs:
        assert out.returncode == 0, out.stderr
        assert out.stdout, f"nothing injected; stderr: {out.stderr}"
        text = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
        assert "02:00" in text and "Build notes.md" in text and "Tomatoes" not in text
        assert out.stderr.count("did not answer in time") == 1, out.stderr  # asked once
        assert "(0.5 s, [hooks] daemon_wait_s); recalled from the hooks' index" in out.stderr
