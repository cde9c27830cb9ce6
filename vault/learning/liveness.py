"""Session liveness: a session is alive while the process serving it holds its lock file.

`VAULT/.rmh/sessions/<sha256(id)[:32]>.lock` is opened and `fcntl.flock(LOCK_EX | LOCK_NB)`ed
by the process that serves the session, and stays locked until the session ends or the
process dies: the kernel drops the lock of a killed process (kill -9 included) at once, so
the next session start anywhere can tell a dead session from a live one without waiting for
an idle timer. `alive(id)` is True for a session this object holds, and for one whose lock
another open file holds (another process, or another `SessionLocks` in this one); a session
with no lock file, or whose lock can be taken, is dead. Linux/macOS (flock); no clock is read.

Which sessions have an owner (issue 31): the process that starts a session records
`owner()` -- its pid, the pid's start time from /proc/PID/stat (so a reused pid is not
mistaken for it), its pid namespace and `"lock": true` -- in the session's start event.
`verdict(id, owner)` is then True (alive), False (dead: its lock is free, or its process is
gone or is another process with the same pid) or None for a session with no owner (one the
CLI opened with --session: only an idle timer can tell). Every rmh process that opens the
ledger recovers the dead ones (harness/compose.py), the CLI included. Only a held lock makes a
session alive, so a reused pid never keeps a dead one open.

A pid means something only in its own pid namespace: a server in a container (or under
`unshare --pid`) that shares the vault folder records its namespace's pid, which names no
process or another one here. Its session was then judged dead while its server ran, recovered
under it, and the server's use lost (session 30, NOTES-LROWS.md). The lock is the kernel's
and spans namespaces: for an owner of another pid namespace, the lock alone decides.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path

SESSIONS_DIR = "sessions"


def lock_name(session: str) -> str:
    """The lock file's name for a session id (any string: hashed, so always a safe name)."""
    return hashlib.sha256(session.encode("utf-8")).hexdigest()[:32] + ".lock"


def process_start(pid: int) -> int | None:
    """The start time of process `pid` (field 22 of /proc/PID/stat, clock ticks after boot),
    or None when there is no such process or no /proc."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2:].split()  # the name may hold spaces and parentheses
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def pid_namespace() -> str | None:
    """This process's pid namespace ("pid:[INODE]"), or None without /proc."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return None


def process_alive(pid: int, start: int | None) -> bool:
    """Whether process `pid` exists and (when `start` is known and /proc readable) is the one
    that started at `start`."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by another user
    now = process_start(pid)
    return start is None or now is None or now == start


class SessionLocks:
    """The lock files of the sessions one process serves (module docstring)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._held: dict[str, int] = {}  # session -> open, locked descriptor

    def _path(self, session: str) -> Path:
        return self.folder / lock_name(session)

    def hold(self, session: str) -> bool:
        """Lock the session's file for as long as it lives; False if another holder has it."""
        if session in self._held:
            return True
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self._path(session)
        if path.is_symlink():  # planted: opening it truncated the file it named, outside too
            path.unlink()
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._held[session] = fd
        return True

    def release(self, session: str) -> None:
        """Unlock and remove the session's lock file (the session ended)."""
        fd = self._held.pop(session, None)
        if fd is None:
            return
        try:
            self._path(session).unlink(missing_ok=True)
        finally:
            os.close(fd)  # closing drops the flock

    def alive(self, session: str) -> bool:
        """Whether a live process holds the session's lock (module docstring)."""
        if session in self._held:
            return True
        path = self._path(session)
        try:  # no link followed (a planted one named another program's file: rmh took its
            # lock, and a lock held there made a dead session alive), no wait on a FIFO
            fd = os.open(path, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
        except (FileNotFoundError, IsADirectoryError):
            return False
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
            path.unlink(missing_ok=True)  # a symlink: never a session's lock (`hold`)
            return False
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return False  # a FIFO or a device planted there: no session's lock
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        path.unlink(missing_ok=True)  # a dead session's leftover file
        return False

    def owner(self) -> dict[str, object]:
        """What a session start records about the process that serves it (module docstring)."""
        pid = os.getpid()
        return {"pid": pid, "pid_start": process_start(pid), "pid_ns": pid_namespace(),
                "lock": True}

    def verdict(self, session: str, owner: Mapping[str, object] | None) -> bool | None:
        """Alive (True), dead (False), or unknown (None: no owner recorded)."""
        if not owner or not owner.get("lock"):
            return None
        if session in self._held:
            return True
        pid, start, ns = owner.get("pid"), owner.get("pid_start"), owner.get("pid_ns")
        held = self.alive(session)  # also removes a dead session's leftover file
        if isinstance(ns, str) and ns != pid_namespace():
            return held  # its pid names no process here (module docstring)
        if isinstance(pid, int) and not process_alive(pid, start if isinstance(start, int)
                                                      else None):
            return False  # gone, or its pid reused: a lock still held is a stray child's
        return held

    def close(self) -> None:
        """Release every held lock."""
        for session in sorted(self._held):
            self.release(session)
