"""vault/learning/liveness.py: a session's lock file is rmh's own, never a file it links to."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

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


KINDS = ("none", "file", "held file", "link to file", "link to held file", "dangling link",
         "fifo", "folder")


@pytest.mark.parametrize("kind", KINDS)
def test_alive_reads_only_rmh_s_own_lock_file_and_follows_no_link(tmp_path: Path,
                                                                  kind: str) -> None:
    """What is at `.rmh/sessions/<lock>` decides `alive`: only a regular file another holder
    locks is a live session. `alive` opened the name read-write through a symlink: a link to
    another program's locked file made a dead session alive for good (and rmh took that
    program's lock while it looked); a folder there was a raw IsADirectoryError."""
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    victim = tmp_path / "victim.lock"
    victim.write_text("another program's\n")
    holder = os.open(victim, os.O_RDWR)
    fcntl.flock(holder, fcntl.LOCK_EX)  # another program holds its own lock
    locks = SessionLocks(sessions)
    path = locks._path("s1")
    if kind in ("file", "held file"):
        path.write_text("123\n")
    elif kind in ("link to file", "link to held file"):
        path.symlink_to(victim if kind == "link to held file" else tmp_path / "free.lock")
        (tmp_path / "free.lock").write_text("free\n")
    elif kind == "dangling link":
        path.symlink_to(tmp_path / "nowhere")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    other = None
    if kind == "held file":
        other = os.open(path, os.O_RDWR)
        fcntl.flock(other, fcntl.LOCK_EX)
    try:
        assert locks.alive("s1") is (kind == "held file")
        if "link" in kind:
            assert not os.path.lexists(path)  # the planted link is gone
        assert victim.read_text() == "another program's\n"
    finally:
        os.close(holder)
        if other is not None:
            os.close(other)


@pytest.mark.parametrize("pid", [1, 4_194_305, os.getpid()],
                         ids=["init", "past-pid-max", "this-process"])
def test_an_owner_in_another_pid_namespace_is_judged_by_its_lock_alone(tmp_path: Path,
                                                                       pid: int) -> None:
    """A server in its own pid namespace (a container sharing the vault, `unshare --pid`)
    records its namespace's pid: here that pid is another process (1: init), none (past
    pid_max) or a process that started at another time. Its session was judged dead while
    its lock was held, and recovered under the live server (LROWS_liveness.py.txt)."""
    owner = {"pid": pid, "pid_start": -1, "pid_ns": "pid:[1]", "lock": True}
    server, here = SessionLocks(tmp_path / "sessions"), SessionLocks(tmp_path / "sessions")
    assert server.hold("s1")
    assert here.verdict("s1", owner) is True
    server.release("s1")
    assert here.verdict("s1", owner) is False  # its lock free: dead, whatever the pid says


def test_an_owner_records_its_pid_namespace(tmp_path: Path) -> None:
    owner = SessionLocks(tmp_path / "sessions").owner()
    assert owner["pid_ns"] == os.readlink("/proc/self/ns/pid") and owner["pid"] == os.getpid()
