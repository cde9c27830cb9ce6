"""Ctrl-C in the `rmh` command: one line, exit 1 (harness/entry.py and harness/cli.py)."""

from __future__ import annotations

import contextlib
import ctypes
import sys


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
