"""vault/learning/liveness.py: a session's lock file is rmh's own, never a file it links to."""

from __future__ import annotations

from pathlib import Path

from vault.learning.liveness import SessionLocks


def test_a_symlink_planted_at_a_session_s_lock_is_not_written_through(tmp_path: Path) -> None:
    """`.rmh/sessions/<lock>` a symlink to another file (a vault folder others can write):
    holding the session truncated that file and wrote the process id into it."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    locks = SessionLocks(tmp_path / "sessions")
    (tmp_path / "sessions").mkdir()
    path = locks._path("s1")
    path.symlink_to(victim)
    assert locks.hold("s1")
    assert victim.read_text() == "precious\n"
    assert not path.is_symlink() and locks.alive("s1")
    locks.release("s1")
