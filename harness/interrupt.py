"""Ctrl-C in the `rmh` command: one line, exit 1 (harness/entry.py and harness/cli.py)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType


def interrupted() -> int:
    """Ctrl-C was handled: say so in one line; the exit status (1). Where the
    KeyboardInterrupt was raised in Python code a C extension ran with PyRun_String (the
    tokenizers and onnxruntime imports do), CPython marked it unhandled and killed `python -m
    harness` with SIGINT at exit whatever main returned (exit -2 after the line); running a
    statement the same way clears that mark."""
    print("rmh: interrupted", file=sys.stderr)
    with contextlib.suppress(AttributeError, OSError):  # not CPython: no such mark
        ctypes.pythonapi.PyRun_SimpleString(b"pass")
    return 1


PRESSES_TO_QUIT = 3  # the first stops between two notes; a second says so; the third quits


@contextlib.contextmanager
def stop_between_notes() -> Iterator[None]:
    """`rmh ingest`'s Ctrl-C (main thread only): the first asks the ingest to stop at its next
    checkpoint (vault `cancellable`: between two notes, or between two parses), which takes
    back the conversation it was writing or, past half, finishes it, then raises
    IngestStopped; Ctrl-C again while it does so is said to be heard, and only the third
    raises KeyboardInterrupt at once (REV, session 33: a second Ctrl-C landing inside the
    take-back left part of the conversation). A SIGINT the process was started with ignored
    stays ignored, as Python keeps it (REV, session 34: the handler replaced it)."""
    from vault import cancellable

    presses = 0

    def pressed(signum: int, frame: FrameType | None) -> None:
        nonlocal presses
        presses += 1
        if presses >= PRESSES_TO_QUIT:
            raise KeyboardInterrupt
        os.write(2, b"rmh: interrupted: stopping between two notes (the conversation being "
                    b"written is taken back or finished; Ctrl-C twice more quits at once)\n"
                 if presses == 1 else b"rmh: still stopping; Ctrl-C once more quits at once, "
                 b"leaving part of a conversation for the next ingest to finish\n")

    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is signal.SIG_IGN):
        yield  # SIGINT ignored by the parent (a script's `rmh ingest FILE &`): it stays so
        return
    before = signal.signal(signal.SIGINT, pressed)
    try:
        with cancellable(lambda: presses > 0):
            yield
    finally:
        signal.signal(signal.SIGINT, before)
