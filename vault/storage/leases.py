"""Whether another program is writing a note in place right now (an editor's save that
truncates, then writes): asked of the kernel by a read lease where rmh may take one, judged
from the file's size and modification time where it may not (a note another user owns). A guarded
write refuses to replace a note being saved so (storage/store.py): the save's bytes would go
into the replaced inode, lost."""

from __future__ import annotations

import errno
import fcntl
import os
import signal

from . import folders

QUIET_NS = folders.SETTLED_NS  # a file of another owner changed this recently may be mid-save
# an empty one, this recently: the gap between an in-place save's truncation and its write,
# allowed to be long (an editor stalled on a loaded machine); a safety bound, not fitted
EMPTY_QUIET_NS = 30 * QUIET_NS
_NOFOLLOW_CLOEXEC = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def held_for_writing(dir_fd: int, name: str) -> bool:
    """Whether another process holds the file `name` (in the open folder `dir_fd`) open for
    writing now: a read lease (fcntl F_SETLEASE, Linux) is refused (EAGAIN) exactly then, and
    released at once. An editor that truncates a note then writes it in place holds it so
    between the two: a guarded write that read the truncated bytes must not replace the file
    (its write would land in the replaced inode, lost: STORE9, session 34). Where the lease is
    refused for want of the right to ask (a note another user owns, rmh without CAP_LEASE),
    `mid_save` judges the file instead. False where it cannot be asked at all (no leases, not
    a regular file)."""
    setlease = getattr(fcntl, "F_SETLEASE", None)
    if setlease is None:
        return False
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return False
    try:  # a writer opening it while the lease is held breaks it, signalling this process:
        # SIGURG (ignored unless handled), not the default SIGIO, which would kill it
        fcntl.fcntl(fd, getattr(fcntl, "F_SETSIG", 10), signal.SIGURG)
        fcntl.fcntl(fd, setlease, fcntl.F_RDLCK)
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM):  # not ours to lease (FIX35, session 35)
            return mid_save(os.fstat(fd))
        return exc.errno in (errno.EAGAIN, errno.EBUSY)
    else:
        fcntl.fcntl(fd, setlease, fcntl.F_UNLCK)
        return False
    finally:
        os.close(fd)


def mid_save(info: os.stat_result) -> bool:
    """Whether a file no lease can be asked of may be mid-save: changed less than QUIET_NS ago
    (its writes follow within that), or EMPTY_QUIET_NS when empty (an in-place save truncates
    first). Another user's editor holding a half-written file longer is not seen (nothing
    unprivileged sees another user's open files); a refusal costs a retry (EditConflict),
    never bytes. An empty note long quiet is no save in flight: refusing it for being empty
    refused every guarded write of it for good (REV35, session 35)."""
    quiet = EMPTY_QUIET_NS if info.st_size == 0 else QUIET_NS
    return info.st_mtime_ns > folders.now() - quiet
