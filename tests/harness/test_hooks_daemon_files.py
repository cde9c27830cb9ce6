"""harness/hooks_client.py `own_file`: the daemon's log and lock in `.rmh/` are never opened
through a symlink (`open(LOG, "ab")` appended the daemon's stderr to the file a planted link
named, outside the vault too)."""

from __future__ import annotations

from pathlib import Path

from harness.hooks_client import own_file
from harness.hooks_daemon import LOG


def test_a_link_at_the_daemon_s_log_is_replaced_not_appended_to(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    log = tmp_path / LOG
    log.symlink_to(victim)
    with own_file(log, "ab") as fh:
        fh.write(b"daemon line\n")
    with own_file(log, "ab") as fh:  # a second open appends to rmh's own file
        fh.write(b"another\n")
    assert victim.read_text() == "precious\n"
    assert not log.is_symlink() and log.read_bytes() == b"daemon line\nanother\n"
