"""The hook entry path (harness/entry.py, harness/hooks_fast.py): a hook the warm daemon
answers imports no CLI, SQLite, vault or numpy (checked with `python -X importtime` on real
processes); anything it does not handle reaches the full CLI with its stdin intact."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.hooks_daemon import daemon_request
from harness.hooks_fast import parse_argv

from .test_hooks_daemon import _alive, wait, wait_for
from .test_hooks_session import rmh, two_notes
from .test_server_e2e import CHILD_ENV, REPO

HEAVY = ("harness.cli", "harness.config", "harness.hooks", "argparse", "sqlite3", "vault",
         "numpy", "subprocess", "harness.hooks_index", "harness.commands", "tomllib",
         "dataclasses")


def test_only_the_installed_shape_takes_the_fast_path() -> None:
    assert parse_argv(["--vault", "/v", "hook", "prompt", "--client", "codex"]) == \
        ("/v", "prompt", "codex")
    assert parse_argv(["--vault=/v", "hook", "session-start"]) == \
        ("/v", "session-start", "claude-code")
    assert parse_argv(["--vault", "/v", "hook", "prompt", "--client=gemini"]) == \
        ("/v", "prompt", "gemini")
    for argv in (["hook", "prompt"], ["--vault", "/v", "hook", "session-end"],
                 ["--vault", "/v", "hook", "prompt", "--client", "nope"],
                 ["--vault", "/v", "hook", "prompt", "--help"],
                 ["--vault", "/v", "hook", "prompt", "--client"],
                 ["--vault", "/v", "search", "hook"], ["--vault"], []):
        assert parse_argv(argv) is None, argv


def timed_hook(root: Path, event: str, payload: Any) -> tuple[subprocess.CompletedProcess[str],
                                                             set[str]]:
    """A hook as a client runs it, under `-X importtime`: (the process, modules imported)."""
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
    env["PYTHONPATH"] = str(REPO)
    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "harness", "--vault",
                          str(root), "hook", event, "--client", "claude-code"],
                         input=payload if isinstance(payload, str) else json.dumps(payload),
                         capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
    assert out.returncode == 0, out.stderr
    modules = {line.rsplit("|", 1)[1].strip() for line in out.stderr.splitlines()
               if line.startswith("import time:") and "|" in line}
    out.stderr = "\n".join(ln for ln in out.stderr.splitlines()
                           if not ln.startswith("import time:"))
    return out, modules


def heavy(modules: set[str]) -> set[str]:
    return {m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)}


@pytest.mark.slow
def test_a_hook_the_daemon_answers_loads_nothing_heavy(tmp_path: Path) -> None:
    root = two_notes(tmp_path / "v")
    assert rmh(root, "init", "--no-dense").returncode == 0
    wait(root, 60.0)  # the daemon's answer is awaited, however loaded the machine
    base = {"session_id": "s1", "transcript_path": "", "cwd": str(tmp_path / "build")}

    # no daemon yet: the full CLI (which starts one), stdin intact
    out, modules = timed_hook(root, "session-start", base)
    assert "harness.cli" in modules and "Build notes.md" in out.stdout
    wait_for(lambda: daemon_request(root, {"event": "ping"}, timeout=5.0) is not None,
             "the daemon")
    pid = int((root / ".rmh" / "hooks-daemon.pid").read_text())
    try:
        out, modules = timed_hook(root, "prompt", {**base, "prompt": "When does the nightly "
                                                   "job run?"})
        assert heavy(modules) == set(), heavy(modules)
        text = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
        assert "02:00" in text and "Tomatoes" not in text

        out, modules = timed_hook(root, "session-start", {**base, "session_id": "s2"})
        assert heavy(modules) == set(), heavy(modules)
        assert "Related to build" in json.loads(out.stdout)["hookSpecificOutput"][
            "additionalContext"]

        # input that is not a JSON object: the full path says so, the client is not failed
        for bad in ("[1, 2]", "{not json"):
            out, modules = timed_hook(root, "prompt", bad)
            assert "harness.cli" in modules
            assert out.stdout == "" and "rmh hook prompt:" in out.stderr

        # a nothing-relevant prompt: the daemon's empty answer, no output
        out, modules = timed_hook(root, "prompt", {**base, "prompt": "zebra quokka"})
        assert out.stdout == "" and heavy(modules) == set()
    finally:
        if _alive(pid):
            os.kill(pid, signal.SIGTERM)
    wait_for(lambda: not _alive(pid), "the daemon's exit")
    assert not (root / ".rmh" / "hooks-daemon.json").exists()  # removed at its exit
    # a dead daemon's socket and settings (a SIGKILL): refused at once, the full path
    (root / ".rmh" / "hooks.sock").touch()
    (root / ".rmh" / "hooks-daemon.json").write_text(
        '{"pid": 1, "wait_s": 60.0, "start_words": 150}', "utf-8")
    out, modules = timed_hook(root, "prompt", {**base, "prompt": "When does the nightly "
                                               "job run?"})
    assert "harness.cli" in modules and "02:00" in out.stdout


@pytest.mark.parametrize("published", ['{"wait_s": 1e308, "start_words": 10}',
                                       '{"wait_s": Infinity, "start_words": 10}', "fifo"])
def test_settings_no_daemon_writes_never_hold_or_crash_the_hook(
        tmp_path: Path, published: str) -> None:
    """`.rmh/hooks-daemon.json` that no daemon wrote, beside a socket that never answers: a
    wait past what a socket timeout takes was an OverflowError traceback (exit 1), and a
    FIFO in the file's place held the client's prompt forever. The hook now exits 0."""
    import socket

    state = tmp_path / ".rmh"
    state.mkdir()
    if published == "fifo":
        os.mkfifo(state / "hooks-daemon.json")
    else:
        (state / "hooks-daemon.json").write_text(published, encoding="utf-8")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as silent:
        silent.bind(str(state / "hooks.sock"))
        silent.listen(4)  # accepts connections, never answers
        env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
        env["PYTHONPATH"] = str(REPO)
        out = subprocess.run([sys.executable, "-m", "harness", "--vault", str(tmp_path),
                              "hook", "prompt", "--client", "claude-code"],
                             input=json.dumps({"session_id": "s", "prompt": "who owns billing"}),
                             capture_output=True, text=True, env=env, cwd=REPO, timeout=60)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr


def test_input_nested_past_the_parser_never_crashes_the_hook(tmp_path: Path) -> None:
    """stdin of 100000 `[` with a daemon's settings published: json.loads's RecursionError
    escaped the fast path (a traceback, exit 1, before the full CLI could answer)."""
    import socket

    state = tmp_path / ".rmh"
    state.mkdir()
    (state / "hooks-daemon.json").write_text('{"wait_s": 0.5, "start_words": 10}',
                                             encoding="utf-8")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as silent:
        silent.bind(str(state / "hooks.sock"))
        silent.listen(4)
        env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
        env["PYTHONPATH"] = str(REPO)
        out = subprocess.run([sys.executable, "-m", "harness", "--vault", str(tmp_path),
                              "hook", "prompt", "--client", "claude-code"],
                             input="[" * 100_000, capture_output=True, text=True, env=env,
                             cwd=REPO, timeout=60)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
