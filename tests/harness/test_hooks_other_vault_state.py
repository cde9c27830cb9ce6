"""Another vault's `.rmh` moved in as a real folder (not a link) in place of this vault's: the
prompt hook never recalls the other vault's notes as this vault's memory (HOUSE41).

A real folder is rmh's own kind of state, so it is not refused (a copied or moved vault
carries its `.rmh` too); but the hooks' index in it (`hooks.sqlite`) held the other vault's
notes, and its warm daemon's socket moved with it: both answered this vault's prompts with the
other's notes. Now the hooks' index names the vault it was built for (read as none elsewhere,
built again by the next refresh) and the daemon answers only requests for its own vault.
Real `rmh hook` processes; the other vault's daemon live in the second case.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from harness.hooks_daemon import daemon_request

from .test_hooks_daemon import _alive, wait, wait_for
from .test_hooks_session import hook, rmh, two_notes

SECRET = "When does the nightly job run on the CI runners?"  # the other vault's build note


def _vaults(tmp_path: Path, daemon: bool) -> tuple[Path, Path]:
    other = two_notes(tmp_path / "other")
    own = tmp_path / "own"
    own.mkdir()
    (own / "Kiwi.md").write_text("Kiwis are green inside.\n", "utf-8")
    for root in (own, other):
        wait(root, 60.0)
        if not daemon:
            with (root / "rmh.toml").open("a", encoding="utf-8") as f:
                f.write("daemon = false\n")
        assert rmh(root, "init", "--no-dense").returncode == 0
    return own, other


def _moved_in(own: Path, other: Path) -> None:
    """The other vault's `.rmh`, a real folder, in place of this one's."""
    (own / ".rmh").rename(own / ".rmh-away")
    (other / ".rmh").rename(own / ".rmh")


def test_another_vaults_hooks_index_is_not_this_vaults_memory(tmp_path: Path) -> None:
    own, other = _vaults(tmp_path, daemon=False)
    base = {"session_id": "s1", "transcript_path": "", "cwd": str(tmp_path), "prompt": SECRET}
    hook(other, "session-start", base)  # the other vault's hooks' index, with its notes
    assert "Build notes.md" in hook(other, "prompt", base).stdout
    _moved_in(own, other)
    out = hook(own, "prompt", base)
    assert "Build notes.md" not in out.stdout and "02:00" not in out.stdout, out.stdout
    hook(own, "pre-compact", {**base, "transcript_path": ""})  # a refresh: built for this one
    out = hook(own, "prompt", {**base, "prompt": "Are kiwis green inside?"})
    assert "Kiwi.md" in out.stdout and "Build notes.md" not in out.stdout, out.stdout


def test_another_vaults_daemon_does_not_answer_this_vault(tmp_path: Path) -> None:
    own, other = _vaults(tmp_path, daemon=True)
    base = {"session_id": "s1", "transcript_path": "", "cwd": str(tmp_path), "prompt": SECRET}
    hook(other, "session-start", base)  # builds the hooks' index, starts other's daemon
    wait_for(lambda: daemon_request(other, {"event": "ping"}, timeout=5.0) is not None,
             "the daemon")
    pid = int((other / ".rmh" / "hooks-daemon.pid").read_text())
    try:
        assert "Build notes.md" in hook(other, "prompt", base).stdout
        _moved_in(own, other)  # its daemon still listens on the socket that moved with it
        out = hook(own, "prompt", base)
        assert "Build notes.md" not in out.stdout and "02:00" not in out.stdout, out.stdout
    finally:
        if _alive(pid):
            os.kill(pid, signal.SIGTERM)
