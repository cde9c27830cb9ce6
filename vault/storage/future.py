"""Notes whose ctime is in the future: read once, then trusted while the file system's clock
stays before it.

A row stores its file's true ctime only once it is SETTLED_NS old when the sync begins
(folders.stored_ctime, git's "racily clean" rule): a change in the same file-system clock tick
as the read could otherwise hide behind equal stats. A ctime *ahead* of the clock (the clock
was set back after the change, a file restored or copied from a machine whose clock ran
ahead) stayed RACY until the clock caught up with it, so the file was read and hashed again
at every sync, for as long as the clock stayed behind (years, for a ctime in 2030).

No change can be stamped with that ctime before the file system's clock reaches it: a change
gets the clock's time of the change. So such a row stores FUTURE, the ctime negated (`stored`:
below folders.LEGACY, a value no listing shows, so its folder is compared file by file), and a
sync trusts a listed ctime C against a stored -C, every other stat equal, while the file
system's clock, read after the listing, is still more than SETTLED_NS before C (`unchanged`;
the margin covers a coarse clock tick as the settled rule's does). Once it is not, the file
is read again and stored by the usual rule: a change in C's own tick is never missed.

The clock is the file system's own (`file_system_now`: the ctime of `.rmh/clock` once its times
are set to now; over NFS, the server's), not this process's: a server whose clock runs ahead
stamps a change with a ctime "in the future" by ours that is its present, and trusting it
would miss a second change in the same tick. It is read at most once a sync, and only when a
listed ctime is ahead of this process's clock; where it cannot be read (a read-only vault,
a state folder that refuses the write) the row stays RACY, as before.
"""

from __future__ import annotations

import os
import stat

from .folders import RACY, SETTLED_NS, stored_ctime

CLOCK_FILE = "clock"  # in the vault's state folder: only its times are ever changed
# O_NONBLOCK: a FIFO put there would hold the open (and the sync) until a reader came
_FLAGS = (os.O_WRONLY | os.O_CREAT | getattr(os, "O_NONBLOCK", 0)
          | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))


def file_system_now(state: str) -> int | None:
    """The file system's clock now (ns), as it stamps a change: the ctime of `state`/clock
    (made when missing) once its times are set to now; None when that fails or it is no
    regular file of its own (a link, a hard link, a FIFO, a device: never waited on, nor
    another file's times set through it)."""
    try:
        fd = os.open(os.path.join(state, CLOCK_FILE), _FLAGS, 0o644)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:  # a hard link: another's times
            return None
        os.utime(fd)  # times omitted: now, by the file system's clock (NFS: the server's)
        return os.fstat(fd).st_ctime_ns
    except OSError:
        return None
    finally:
        os.close(fd)


class FileSystemClock:
    """`file_system_now` of a state folder, read the first time it is asked and kept (one
    sync); None for every question when `state` is None (a read-only vault) or it fails."""

    def __init__(self, state: str | None) -> None:
        self._state = state
        self._now: int | None = None
        self._asked = False

    def __call__(self) -> int | None:
        if not self._asked and self._state is not None:
            self._now = file_system_now(self._state)
        self._asked = True
        return self._now


def _ahead(ctime_ns: int, clock: FileSystemClock) -> bool:
    now = clock()
    return now is not None and ctime_ns > now + SETTLED_NS


def stored(ctime_ns: int, now: int, clock: FileSystemClock) -> int:
    """The ctime a row stores for a file whose ctime is `ctime_ns`, read after this process's
    clock said `now`: folders.stored_ctime's, but FUTURE (the ctime negated) when it is more
    than SETTLED_NS ahead of this process's clock and of the file system's."""
    kept = stored_ctime(ctime_ns, now)
    if kept == RACY and ctime_ns > now + SETTLED_NS and _ahead(ctime_ns, clock):
        return -ctime_ns
    return kept


def unchanged(row_ctime_ns: int, listed_ctime_ns: int, clock: FileSystemClock) -> bool:
    """Whether a row that stores FUTURE for `listed_ctime_ns` (its other stats equal to the
    listing's) still says the file is unchanged: the file system's clock has not come within
    SETTLED_NS of that ctime."""
    return row_ctime_ns == -listed_ctime_ns < 0 and _ahead(listed_ctime_ns, clock)
