"""The exec that is running now, as host functions see it: its serial number and deadline.

Host functions run on the sandbox's host-call thread, each in a copy of the context of the
exec that called it (see `hostcalls.py`), so the host loop publishes the exec in a context
variable for the duration of the exec. Callers on the
trusted side use it to bind their own work to the cell's deadline (LLM timeouts and retries,
batches) and to key per-exec budgets (write quotas) without any coupling to the sandbox's
internals. Outside an exec `current_exec()` is None.

`host_call_stop()` is the stop test of the host call running in this thread: it turns true when
the sandbox has given up on the call (its cell was abandoned at the deadline or a cancel, and a
later cell needs the host-call thread for another function, or the sandbox closed). Long work
on the trusted side checks it cooperatively (harness binds it to the vault's checkpoints).
"""

from __future__ import annotations

import contextvars
import itertools
import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

_SERIALS = itertools.count(1)
T = TypeVar("T")


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


_STOP: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar(
    "rmh_sandbox_host_call_stop", default=None)


def host_call_stop() -> Callable[[], bool] | None:
    """The stop test of the host call running in this thread, or None outside one."""
    stop = _STOP.get()
    return None if stop is None else stop.is_set


def call_stoppable(stop: threading.Event, call: Callable[[], T]) -> T:
    """Run `call()` as a host call that `stop` ends cooperatively (see `host_call_stop`)."""
    token = _STOP.set(stop)
    try:
        return call()
    finally:
        _STOP.reset(token)


@contextmanager
def running(deadline: float) -> Iterator[ExecContext]:
    """Publish a new exec with `deadline` (time.monotonic) for the duration of the block."""
    ctx = ExecContext(next(_SERIALS), deadline)
    token = _CURRENT.set(ctx)
    try:
        yield ctx
    finally:
        _CURRENT.reset(token)
