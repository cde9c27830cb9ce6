"""Whose a worker's cpu cgroup is: the names supervisors give their groups, the lock each holds
on its groups, and the start-up sweep of groups whose supervisor is gone.

A group's name is `rmh-sandbox.PID.START.PIDNS.N` (`tag`): the supervisor's pid, its start
time (field 22 of /proc/PID/stat, proc(5)) and the inode of its PID namespace (namespaces(7)),
so two live supervisors never pick one name. The name alone cannot say whether its supervisor
lives: a pid and a start time name one process only within its PID namespace, and a supervisor
in one namespace cannot see the processes of another (session 39's CI: a host supervisor read
a namespace's pid 1 as the host's init and removed its new group; session 40, NOTES-SBX16: a
supervisor killed -9 in one namespace left groups no supervisor of another namespace ever
removed, since none could judge them).

So the supervisor holds a shared flock(2) on each group's directory from the moment it makes it
until it removes it (`make_held`); the kernel drops the lock when the holder dies, however it
dies, and every mount of one cgroup hierarchy shares the directory's inode, so every namespace
sees the same lock. The sweep (`sweep`) removes a group only under an exclusive lock taken
without waiting, i.e. one no live supervisor holds; a name of the sweeper's own namespace whose
supervisor still lives is not touched at all (a supervisor of an older rmh holds no lock). The
window between mkdir and the maker's lock is closed on the maker's side: it takes its lock
without waiting and checks the path still names the directory it locked; where a sweeper got
there first it passes to its next name. A group with a process in it cannot be removed anyway
(rmdir: EBUSY), so only a group made and not yet entered was ever at risk. Any local user can
open a group's directory and lock it; that can keep a dead supervisor's empty group from being
swept, or make a maker pass to its next name, never block a supervisor (no lock is waited for).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

PREFIX = "rmh-sandbox."
INIT_PID_NAMESPACE = "4026531836"  # PROC_PID_INIT_INO (include/linux/proc_ns.h)


def start_time(pid: int) -> str | None:
    """Field 22 of /proc/PID/stat (proc(5)): with the pid, names one process for its life."""
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    return data.rsplit(b")", 1)[1].split()[19].decode()


def pid_namespace() -> str:
    """The inode of this process's PID namespace (namespaces(7)), "" where none can be read."""
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        return ""


def tag() -> str:
    """PREFIX + pid.start.pidns: this supervisor's groups' names begin with it."""
    pid = os.getpid()
    return f"{PREFIX}{pid}.{start_time(pid)}.{pid_namespace()}"


def owner_lives(parts: list[str]) -> bool:
    """Whether the name's parts (pid, start, pidns, suffix) are of this PID namespace and name
    a process alive now; older names (pid, start, suffix) count as of the initial namespace."""
    own = pid_namespace()
    ours = ((len(parts) == 4 and parts[2] == own)
            or (len(parts) == 3 and own == INIT_PID_NAMESPACE))
    return ours and parts[0].isdigit() and start_time(int(parts[0])) == parts[1]


def _open(path: Path) -> int:
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)


def make_held(path: Path, mode: int = 0o755) -> int:
    """mkdir `path` and hold a shared lock on it; the locked descriptor (closed by `release`).
    FileExistsError where the name is taken or a sweeper removed the new directory before the
    lock was held (the caller takes its next name); OSError where mkdir or open fails."""
    path.mkdir(mode=mode)
    try:
        fd = _open(path)
    except OSError:
        with contextlib.suppress(OSError):
            path.rmdir()
        raise
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        now = os.stat(path)
        held = os.fstat(fd)
    except OSError as exc:  # locked by a sweeper (EWOULDBLOCK), or removed by it (ENOENT)
        os.close(fd)
        raise FileExistsError(f"{path} was taken while being made") from exc
    if (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino):
        os.close(fd)
        raise FileExistsError(f"{path} was replaced while being made")
    return fd


def hold(path: Path) -> int | None:
    """A shared lock on an existing directory (a supervisor's own leaf, made with
    exist_ok); None where it cannot be opened or a sweeper holds it."""
    try:
        fd = _open(path)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def release(fd: int | None) -> None:
    """Close a descriptor `make_held` or `hold` returned (its lock goes with it)."""
    if fd is not None:
        with contextlib.suppress(OSError):
            os.close(fd)


def sweep(parent: Path) -> None:
    """rmdir the groups in `parent` no live supervisor holds (module doc); a group still busy
    (processes dying) or locked by anyone is left for a later start."""
    try:
        names = sorted(os.listdir(parent))
    except OSError:
        return
    for name in names:
        if not name.startswith(PREFIX) or owner_lives(name[len(PREFIX):].split(".")):
            continue
        try:
            fd = _open(parent / name)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            (parent / name).rmdir()
        except OSError:
            pass
        finally:
            os.close(fd)
