"""Session liveness: a session is alive while the process serving it holds its lock file.

`VAULT/.rmh/sessions/<sha256(id)[:32]>.lock` is opened and `fcntl.flock(LOCK_EX | LOCK_NB)`ed
by the process that serves the session, and stays locked until the session ends or the
process dies: the kernel drops the lock of a killed process (kill -9 included) at once, so
the next session start anywhere can tell a dead session from a live one without waiting for
an idle timer. `alive(id)` is True for a session this object holds, and for one whose lock
another open file holds (another process, or another `SessionLocks` in this one); a session
with no lock file, or whose lock can be taken, is dead. Linux/macOS (flock); no clock is read.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from pathlib import Path

SESSIONS_DIR = "sessions"


def lock_name(session: str) -> str:
    """The lock file's name for a session id (any string: hashed, so always a safe name)."""
    return hashlib.sha256(session.encode("utf-8")).hexdigest()[:32] + ".lock"


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
        fd = os.open(self._path(session), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
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
        try:
            fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        path.unlink(missing_ok=True)  # a dead session's leftover file
        return False

    def close(self) -> None:
        """Release every held lock."""
        for session in sorted(self._held):
            self.release(session)
