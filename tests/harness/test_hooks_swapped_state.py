"""Every hook a client runs, with the vault's `.rmh` swapped for a symlink to another vault's
(whose warm daemon serves): the hook stays quiet (exit 0, no context), says why and what to do
on stderr, and reads nothing through the link. Before (HOUSE40) the daemon's settings and
socket were found by the plain path `VAULT/.rmh/hooks.sock`: the prompt hook and the
session-start brief injected the other vault's notes as this vault's memory; the full path
printed only "PathRefused: path refused: '.rmh' (...)". Real `rmh hook` processes."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from harness.hooks_daemon import daemon_request

from .test_hooks_daemon import _alive, wait, wait_for
from .test_hooks_session import context_of, hook, rmh, two_notes

EVENTS = ("prompt", "session-start", "session-end", "pre-compact")


def test_no_hook_reads_through_a_swapped_rmh(tmp_path: Path) -> None:
    other = two_notes(tmp_path / "other")  # the build note: the nightly job at 02:00
    own = tmp_path / "own"
    own.mkdir()
    (own / "Kiwi.md").write_text("Kiwis are green inside.\n", "utf-8")
    for root in (own, other):
        wait(root, 60.0)  # the daemon's answer is awaited, however loaded the machine
        assert rmh(root, "init", "--no-dense").returncode == 0
    base = {"session_id": "s1", "transcript_path": "", "cwd": str(tmp_path / "build"),
            "prompt": "When does the nightly job run?"}
    hook(other, "session-start", base)  # builds the hooks' index, starts other's daemon
    wait_for(lambda: daemon_request(other, {"event": "ping"}, timeout=5.0) is not None,
             "the daemon")
    pid = int((other / ".rmh" / "hooks-daemon.pid").read_text())
    try:
        assert "Build notes.md" in context_of(hook(other, "prompt", base), "UserPromptSubmit")
        (own / ".rmh").rename(own / ".rmh-away")
        (own / ".rmh").symlink_to(other / ".rmh")
        for event in EVENTS:
            out = hook(own, event, base)  # exit 0 (asserted there)
            assert out.stdout.strip() == "", (event, out.stdout)  # no context at all
            assert "the vault's .rmh is refused (symlink leaves the vault)" in out.stderr, \
                (event, out.stderr)
            assert "put the vault's own .rmh folder back" in out.stderr
        # the refusal stays: the link is left as it was, the other vault still served
        assert (own / ".rmh").is_symlink()
        assert "Build notes.md" in context_of(hook(other, "prompt", base), "UserPromptSubmit")
        # the vault's own `.rmh` back: its hooks work again
        (own / ".rmh").unlink()
        (own / ".rmh-away").rename(own / ".rmh")
        out = hook(own, "prompt", {**base, "prompt": "What colour are kiwis inside?"})
        assert "refused" not in out.stderr, out.stderr
    finally:
        if _alive(pid):
            os.kill(pid, signal.SIGTERM)
