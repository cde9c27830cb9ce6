"""The exec that is running now, as host functions see it: its serial number and deadline.

Host functions run on the sandbox's host-call thread, each in a copy of the context of the
exec that called it (see `hostcalls.py`), so the host loop publishes the exec in a context
variable for the duration of the exec. Callers on the
trusted side use it to bind their own work to the cell's deadline (LLM timeouts and retries,
batches) and to key per-exec budgets (write quotas) without any coupling to the sandbox's
internals. Outside an exec `current_exec()` is None.
"""

from __future__ import annotations

import contextvars
import itertools
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

_SERIALS = itertools.count(1)


@dataclass(frozen=True)
class ExecContext:
    """One running exec: `serial` is unique in this process; `deadline` is time.monotonic()."""

    serial: int
    deadline: float

    def time_left(self) -> float:
        """Seconds until the deadline (negative once it has passed)."""
        return self.deadline - time.monotonic()


_CURRENT: contextvars.ContextVar[ExecContext | None] = contextvars.ContextVar(
    "rmh_sandbox_exec", default=None)


def current_exec() -> ExecContext | None:
    """The exec whose host function is running in this thread, or None."""
    return _CURRENT.get()


def exec_time_left() -> float:
    """Seconds left to the running exec; infinity outside an exec."""
    ctx = _CURRENT.get()
    return math.inf if ctx is None else ctx.time_left()


@contextmanager
def running(deadline: float) -> Iterator[ExecContext]:
    """Publish a new exec with `deadline` (time.monotonic) for the duration of the block."""
    ctx = ExecContext(next(_SERIALS), deadline)
    token = _CURRENT.set(ctx)
    try:
        yield ctx
    finally:
        _CURRENT.reset(token)
