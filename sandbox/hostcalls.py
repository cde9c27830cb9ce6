"""Host calls off the exec thread, so a cell keeps its deadline while a host function runs.

A host function (a search building its index, an `ask`, an LLM call to an endpoint that never
answers) may take longer than the cell is allowed. The exec thread therefore never runs one
itself: `HostCalls.run` hands it to the sandbox's one host-call thread and waits for its reply
only until the cell's deadline or a cancel (`wake`). What is still running then is abandoned:
it goes on in that thread (it cannot be killed: it holds the vault's locks), its result is
discarded, and nothing else waits for it except the next host call.

At most one host call runs per sandbox, ever: a call that arrives while an abandoned one is
still running waits for it (within its own cell's deadline and cancel) before it starts, and
is never queued behind it. So abandoned work cannot pile up, and a cell that makes no host
call is not slowed by it.

An abandoned call is stopped cooperatively (its stop event set: `context.host_call_stop`)
as soon as a later call of ANOTHER function needs the thread, or the sandbox closes: the vault
checks it between notes while it builds its search structures (vault/cancel.py), so that later
call starts within one checkpoint. A later call of the SAME function waits for it instead of
stopping it: a search abandoned while it built the index has done work the next search needs
(stopping it would make every search with a short deadline start over, and none finish). The
LLM broker clips every attempt to the cell's deadline (harness/llm.py), so an abandoned LLM
call ends by itself at about that deadline.

Each call runs in the exec's own `contextvars.Context` (the running exec, its deadline, the
exec's LLM budget), one call at a time.
"""

from __future__ import annotations

import contextvars
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from .context import call_stoppable

Job = tuple[contextvars.Context, Callable[[], dict[str, Any]], "Future[dict[str, Any]]",
            threading.Event]


class Abandoned(Exception):
    """The deadline or a cancel came first: `name` was abandoned while it ran, or (`blocker`
    set) never started because `blocker`, abandoned by an earlier cell, was still running."""

    def __init__(self, name: str, blocker: str | None = None) -> None:
        super().__init__(name)
        self.name = name
        self.blocker = blocker

    def describe(self) -> str:
        if self.blocker is None:
            return (f"while the host function {self.name} was running (abandoned: its result "
                    "is discarded)")
        return (f"while the host function {self.name} waited for {self.blocker}, abandoned by "
                f"an earlier cell and still running ({self.name} never ran)")


class HostCalls:
    """The host-call thread of one sandbox (started on first use, a daemon: an abandoned call
    never holds up the process's exit)."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._current: Future[dict[str, Any]] | None = None
        self._stop = threading.Event()  # the current call's
        self._name = ""

    @property
    def busy(self) -> str | None:
        """The name of a host function still running (abandoned by its cell), else None."""
        current = self._current
        return self._name if current is not None and not current.done() else None

    def run(self, name: str, call: Callable[[], dict[str, Any]], ctx: contextvars.Context,
            deadline: float, wake: threading.Event, stop: Callable[[], bool]) -> dict[str, Any]:
        """`call()`'s reply; `Abandoned` when the deadline passed or `stop()` became true
        first. `wake` is set by whoever makes `stop()` true."""
        previous, blocker = self._current, self._name
        if previous is not None and not previous.done() and blocker != name:
            self._stop.set()  # abandoned, and in the way of another function: stop it
        if previous is not None and not _wait(previous, deadline, wake, stop):
            raise Abandoned(name, blocker)
        future: Future[dict[str, Any]] = Future()
        self._current, self._name, self._stop = future, name, threading.Event()
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="rmh-host-call",
                                            daemon=True)
            self._thread.start()
        self._jobs.put((ctx, call, future, self._stop))
        if not _wait(future, deadline, wake, stop):
            raise Abandoned(name)
        return future.result()

    def close(self) -> None:
        """Stop the current call (if any) cooperatively; the thread ends once it returns."""
        self._stop.set()
        if self._thread is not None:
            self._jobs.put(None)
            self._thread = None

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            ctx, call, future, stop = job
            try:
                future.set_result(ctx.run(call_stoppable, stop, call))
            except BaseException as exc:  # invoke() catches everything; this is a backstop
                future.set_exception(exc)


def _wait(future: Future[dict[str, Any]], deadline: float, wake: threading.Event,
          stop: Callable[[], bool]) -> bool:
    """Wait for `future` until `deadline` (time.monotonic) or `stop()`; True when it is done."""
    future.add_done_callback(lambda _: wake.set())
    while not future.done():
        remaining = deadline - time.monotonic()
        if remaining <= 0 or stop():
            return False
        wake.wait(remaining)
        wake.clear()
    return True
