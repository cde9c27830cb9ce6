"""A stderr whose writers never block: `rmh serve`'s log when the client does not read it.

An MCP host starts `rmh serve` with stderr on a pipe. A host that never reads that pipe leaves
it full once 64 KiB of log are written, and a write(2) to a full pipe blocks: every logging
call (on the event loop too) then waited for a reader that never comes, and the server
answered nothing more, `ping` included (session 26: 288 rounds of session.start/end at
`--log-level info`, 64,736 bytes of log). `StderrSink` is a text stream whose `write` only
queues the text, at most `max_pending` bytes of it; one daemon thread writes the queue to the
descriptor. Text that does not fit is dropped and counted, and where it was dropped one line
says how many bytes were lost (written once the reader reads again). The writing thread uses a
descriptor of its own, never a Python buffered stream (whose lock, held by a thread blocked in
write(2), would stop the interpreter's exit), so a process whose stderr is never read still
exits: at most `drain` seconds are spent on what is still queued.
"""

from __future__ import annotations

import io
import os
import select
import threading
import time
from collections import deque

MAX_PENDING = 1 << 20  # bytes of log held while the reader does not read
_NAME = "rmh.stderr"


def dropped_line(count: int) -> bytes:
    """The line standing where `count` bytes of log were dropped."""
    return (f"rmh WARNING {_NAME}: {count} bytes of log dropped here "
            "(stderr was not being read)\n").encode()


class StderrSink(io.TextIOBase):
    """Text written here goes to descriptor `fd` from a thread of its own, in order; `write`
    never waits (see the module docstring). Thread-safe; a write is kept or dropped whole."""

    def __init__(self, fd: int, *, max_pending: int = MAX_PENDING) -> None:
        super().__init__()
        self._target = fd
        self._fd = os.dup(fd)
        self._max = max_pending
        self._cond = threading.Condition()
        self._queue: deque[tuple[bytes, int]] = deque()  # (bytes, of them counted as pending)
        self._pending = 0  # bytes queued or being written
        self._dropped = 0  # bytes dropped since the last kept write
        self._busy = False
        self._stop = False
        self._broken = False  # the descriptor failed (the reader closed it): drop everything
        self._thread = threading.Thread(target=self._run, name=_NAME, daemon=True)
        self._thread.start()

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._target  # for faulthandler and the like, which write to it themselves

    def isatty(self) -> bool:
        return os.isatty(self._target)

    def write(self, s: str) -> int:
        data = s.encode("utf-8", "backslashreplace")
        with self._cond:
            if self._broken or self._stop or not data:
                return len(s)
            if self._pending + len(data) > self._max:
                self._dropped += len(data)
                self._cond.notify_all()  # an idle writer says so (one write over the bound)
                return len(s)
            if self._dropped:
                self._queue.append((dropped_line(self._dropped), 0))
                self._dropped = 0
            self._queue.append((data, len(data)))
            self._pending += len(data)
            self._cond.notify_all()
        return len(s)

    def flush(self) -> None:
        """Never waits for the reader (that is the point); `drain` does, within a bound."""

    def drain(self, timeout_s: float) -> bool:
        """Wait at most `timeout_s` seconds until everything queued is written; True if it
        was (or the descriptor failed and nothing more can be)."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while (self._queue or self._busy or self._dropped) and not self._broken:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def close(self) -> None:
        """Stop taking text; the thread writes what is queued, then closes its descriptor."""
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        super().close()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not (self._queue or self._dropped or self._stop):
                    self._cond.wait()
                if not (self._queue or self._dropped):  # stopped, all written
                    break
                chunks = list(self._queue)
                self._queue.clear()
                if self._dropped:  # nothing kept since: the count goes last
                    chunks.append((dropped_line(self._dropped), 0))
                    self._dropped = 0
                self._busy = True
            ok = not self._broken and self._write_all(b"".join(c for c, _ in chunks))
            with self._cond:
                self._busy = False
                self._pending -= sum(n for _, n in chunks)
                if not ok:
                    self._broken = True
                    self._queue.clear()
                    self._pending = self._dropped = 0
                self._cond.notify_all()
        os.close(self._fd)

    def _write_all(self, data: bytes) -> bool:
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self._fd, view):]
            except BlockingIOError:  # someone made the descriptor non-blocking: wait for room
                select.select([], [self._fd], [], 1.0)
            except OSError:  # the reader closed the pipe (EPIPE), the descriptor is gone
                return False
        return True
