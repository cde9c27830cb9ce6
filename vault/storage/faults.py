"""Fault injection for crash tests and benchmarks: SIGKILL this process right after its N-th
file operation.

A file operation is a temp file written and fsynced, a rename or link, an unlink, a folder
fsync (storage/store.py, intents.py, the stores beside the index), and each of the two steps
of a transaction on `learned.sqlite` (its rows written and not committed; its COMMIT:
learning/ledger.py), and the client settings' writes of `rmh setup` / `rmh hooks install`
(harness/client_config.py, through the public `operation_made`). One count per process,
whichever part made the operation, so a sweep of N = 1, 2, ... kills a command at every step
of its vault files and of its learned state alike (a forked child counts from 0 again). The
harness reads N from RMH_FAULT_AFTER_OPS and gives it to the store and the ledger it opens;
with none given, nothing is ever killed.
"""

from __future__ import annotations

import os
import signal

_made = [0, 0]  # [the pid that counted, file operations it made so far]


def operation_made(after: int | None) -> int:
    """Count one file operation of this process; SIGKILL it when that makes `after` (None:
    never). Returns the process's count."""
    pid = os.getpid()
    if _made[0] != pid:
        _made[:] = [pid, 0]
    _made[1] += 1
    if after is not None and _made[1] >= after:
        os.kill(pid, signal.SIGKILL)
    return _made[1]
