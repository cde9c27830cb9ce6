"""Another vault's whole `.rmh` moved into this vault (a real folder, not a link): the hooks
never recall the other vault's notes as this vault's memory (STORE17, session 42).

Search was right (the index is checked against the notes), but the prompt hook asked the
daemon whose socket and settings the moved folder carried (the other vault's, still running)
and, with no daemon, read the other vault's hooks' index: its notes were injected for this
vault's prompts until the next refresh (README's Known limits). Now the daemon publishes its
vault folder's identity and the hooks' index names the vault it was made for (harness
hooks_client `root_id`, hooks_owner.py); another vault's daemon is not asked, its index
recalls only notes this vault holds with the same bytes, and the next refresh makes the
index again from this vault's notes. Real `rmh hook` processes, a real daemon."""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

from harness.hooks_daemon import daemon_request

from .test_hooks_daemon import _alive, wait, wait_for
from .test_hooks_session import hook, rmh, two_notes

NIGHTLY = {"session_id": "s1", "transcript_path": "", "cwd": "",
           "prompt": "When does the nightly job run?"}
KIWI = {**NIGHTLY, "prompt": "What colour are kiwis inside?"}


def notes(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in root.glob("*.md")}


def test_a_moved_in_rmh_never_recalls_the_other_vaults_notes(tmp_path: Path) -> None:
    other = two_notes(tmp_path / "other")  # the build note: the nightly job at 02:00
    own = tmp_path / "own"
    own.mkdir()
    (own / "Kiwi.md").write_text("Kiwis are green inside.\n", "utf-8")
    (own / "Lemons.md").write_text("Lemons are sour and yellow.\n", "utf-8")
    (own / "Rain.md").write_text("Rain fell all week in the valley.\n", "utf-8")
    for root in (own, other):
        wait(root, 60.0)  # the daemon's answer is awaited, however loaded the machine
        assert rmh(root, "init", "--no-dense").returncode == 0
    hook(other, "session-start", NIGHTLY)  # builds the hooks' index, starts other's daemon
    wait_for(lambda: daemon_request(other, {"event": "ping"}, timeout=5.0) is not None,
             "the daemon")
    pid = int((other / ".rmh" / "hooks-daemon.pid").read_text())
    try:
        assert "Build notes.md" in hook(other, "prompt", NIGHTLY).stdout
        mine = notes(own)
        shutil.rmtree(own / ".rmh")
        (other / ".rmh").rename(own / ".rmh")  # the other vault's state, its daemon serving
        out = hook(own, "prompt", NIGHTLY)  # main: the daemon's answer, the build note
        assert "nightly" not in out.stdout and "Build notes" not in out.stdout, out.stdout
        os.kill(pid, signal.SIGTERM)  # no daemon: the hooks' index alone
        wait_for(lambda: not _alive(pid), "the daemon's exit")
        out = hook(own, "prompt", NIGHTLY)  # main: the other vault's index, the build note
        assert "nightly" not in out.stdout and "Build notes" not in out.stdout, out.stdout
        hook(own, "session-end", NIGHTLY)  # a refresh: the index made from this vault's notes
        out = hook(own, "prompt", KIWI)
        assert "Kiwi.md" in out.stdout and "Build notes" not in out.stdout, out.stdout
        assert "Build notes" not in hook(own, "prompt", NIGHTLY).stdout
        assert notes(own) == mine
    finally:
        if _alive(pid):
            os.kill(pid, signal.SIGTERM)
