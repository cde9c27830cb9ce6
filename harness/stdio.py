"""The `rmh` process's standard streams, made safe before any command runs (harness/entry.py).

- A standard descriptor the caller closed (`<&-`, `>&-`, `2>&-`) is held by /dev/null, so no
  file rmh opens later is given its number: `rmh serve 2>&-` duplicated stdout to descriptor
  2 for its frames and then wrote its log there, into the protocol stream, and a note or lock
  opened as descriptor 2 would have taken whatever a library or child wrote to "stderr". With
  stderr closed nothing is said (Python printed error lines to stdout instead: `print(...,
  file=None)`); with stdin or stdout closed, reading or writing it is a `StreamError` (one
  line, exit 1), as `cat` does, never an AttributeError traceback.
- A failed write to stdout is a `StreamError` (`stream_error`: the stream and the reason), not
  an OSError, which the CLI took for the vault's own disk being full (`rmh list > /dev/full`
  said "disk full: no space left to write vault files"); after it, stdout drops what is
  written, so Python's own flush at exit raises nothing more.
- On a terminal, stdout and stderr escape the control characters a note, a name or a cell's
  output may hold (harness/terminal.py), so no text rmh prints can drive the terminal.
- Text stdout's encoding cannot hold (`PYTHONIOENCODING=ascii`) is written backslash-escaped
  instead of raising UnicodeEncodeError (harness/commands/output.py's `json_line` escapes
  JSON to ASCII then, which stays valid JSON).
"""

from __future__ import annotations

import codecs
import errno
import io
import os
import sys

from .terminal import Guarded

STDIN, STDOUT, STDERR = 0, 1, 2


class StreamError(Exception):
    """Standard input or output could not be used: it was closed, the disk under it is full,
    the reader went away (EPIPE)."""

    code_name = "stream_error"

    def __init__(self, stream: str, error: OSError) -> None:
        self.stream = stream
        self.errno = error.errno
        self.reason = os.strerror(error.errno) if error.errno else str(error)
        verb = "read" if stream == "stdin" else "write"
        super().__init__(f"cannot {verb} {stream}: {self.reason}")

    @property
    def broken_pipe(self) -> bool:
        """The reader closed the pipe (`rmh list | head -1`): end quietly."""
        return self.errno == errno.EPIPE

    def data(self) -> dict[str, object]:
        return {"stream": self.stream, "reason": self.reason}


class _Output(io.RawIOBase):
    """Descriptor `fd` as stdout: a failed write raises StreamError once, then everything
    written is dropped (the output is lost either way; Python's flush at exit must not raise
    again). `closed_at_start`: the caller closed it; every write fails with EBADF."""

    def __init__(self, fd: int, *, closed_at_start: bool) -> None:
        super().__init__()
        self._fd = fd
        self._failed: OSError | None = (
            OSError(errno.EBADF, os.strerror(errno.EBADF)) if closed_at_start else None)
        self._raised = False

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return self._failed is None and os.isatty(self._fd)

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        size = len(memoryview(data))
        if self._failed is None:
            try:
                return os.write(self._fd, data)
            except OSError as exc:
                self._failed = exc
        if self._raised:
            return size
        self._raised = True
        raise StreamError("stdout", self._failed)


class _ClosedInput(io.RawIOBase):
    """stdin the caller closed: reading it is a StreamError (EBADF), not an empty input."""

    def readable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        raise StreamError("stdin", OSError(errno.EBADF, os.strerror(errno.EBADF)))


def _closed(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False


def _hold(fd: int) -> None:
    """Put /dev/null at descriptor `fd` (closed by the caller)."""
    null = os.open(os.devnull, os.O_RDWR)
    if null != fd:
        os.dup2(null, fd)
        os.close(null)
    os.set_inheritable(fd, True)  # as the caller's descriptor was: children get it too


def install(encoding: object = None) -> None:
    """Make the standard streams safe (module docstring). Called once, first thing, by the
    `rmh` entry point; in-process callers of harness.cli.main keep their own streams.
    `encoding` (a str): stdout's and stderr's, instead of what Python chose (the locale's
    own, for a process run again in UTF-8 mode: harness/entry.py)."""
    closed = {fd: _closed(fd) for fd in (STDIN, STDOUT, STDERR)}
    for fd in (STDIN, STDOUT, STDERR):
        if closed[fd]:
            _hold(fd)
    if not closed[STDERR] and os.isatty(STDERR):
        if sys.stderr is not None:
            sys.stderr.flush()
        sys.stderr = Guarded(io.BufferedWriter(io.FileIO(STDERR, "w", closefd=False)),
                             encoding=_usable(encoding, sys.stderr), errors="backslashreplace",
                             line_buffering=True, write_through=True)
    elif closed[STDERR] or isinstance(encoding, str):
        if sys.stderr is not None:
            sys.stderr.flush()
        sys.stderr = open(STDERR, "w", buffering=1, errors="backslashreplace",  # noqa: SIM115
                          closefd=False, encoding=_usable(encoding, sys.stderr))
    if closed[STDIN]:
        sys.stdin = io.TextIOWrapper(io.BufferedReader(_ClosedInput()), encoding="utf-8")
    old = sys.stdout
    line_buffering = bool(getattr(old, "line_buffering", False))
    raw = _Output(STDOUT, closed_at_start=closed[STDOUT])
    kind = Guarded if raw.isatty() else io.TextIOWrapper  # a terminal: harness/terminal.py
    sys.stdout = kind(io.BufferedWriter(raw),  # type: ignore[type-var]
                      encoding=_usable(encoding, old), errors="backslashreplace",
                      line_buffering=line_buffering)


def _usable(encoding: object, stream: object) -> str:
    """`encoding` where Python knows it, else `stream`'s own (else UTF-8)."""
    if isinstance(encoding, str):
        try:
            return codecs.lookup(encoding).name
        except LookupError:
            pass
    return getattr(stream, "encoding", None) or "utf-8"


def require_stdout() -> None:
    """Raise the StreamError a write to stdout would (stdout closed by the caller): for
    `rmh serve`, which writes its frames to a copy of the descriptor, not through sys.stdout."""
    sys.stdout.flush()
    if isinstance(sys.stdout, io.TextIOWrapper):
        raw = getattr(sys.stdout.buffer, "raw", None)
        if isinstance(raw, _Output) and raw._failed is not None:
            raise StreamError("stdout", raw._failed)
