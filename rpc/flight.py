"""The requests of one connection that are in flight: ids, cancellation, slots, shutdown.

An `InFlight` is the only state the dispatch function keeps between frames; the server owns
one per connection, and a fresh one (the default) makes dispatch a pure frame -> frame
function. Contract:
- `claim(id)` registers a request id before anything awaits, so a second request with an id
  already in flight (in an earlier frame or earlier in the same batch) is refused at once;
  `1` and `"1"` are different ids. The id is free again once its request is answered.
- `cancel(id)` cancels that request's scope; `close()` (shutdown) cancels every running
  request and every one that arrives later, each marked `shutting_down`.
- `slot()` bounds how many ordinary methods run at once (`max_running`; None: unbounded).
  Control methods never take a slot, so they are answered while every slot is busy.
- With `max_unwritten`, a slot is also not entered while more than that many bytes of
  answers wait to be written (counted by the dispatcher as it makes them, `answer_waiting`,
  until the server has written them, `answer_written`), so a client that stops reading its
  output holds at most that plus `max_running` answers in the server, not one per queued
  request. It waits only while something can lower that count without it: a whole answer
  frame made (`answer_ready`) that the client has only to read, or a method running that
  may finish its frame. Answers of frames that only more requests can finish (a batch's
  own, a batch of invalid elements whose errors cannot be refused smaller) never hold
  every slot shut: a batch whose own answers passed the bound was never answered.
Entries are created inside the event loop (they hold an anyio cancel scope); the registry
itself may be created outside it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio


def id_key(value: Any) -> str:
    """A hashable, type-preserving key for an id (so 1 and "1" never collide)."""
    return json.dumps(value, allow_nan=True, sort_keys=True)


@dataclass(eq=False)
class Running:
    """One request in flight: its cancel scope and how a cancellation is answered."""

    key: str | None = None  # None for a notification (it has no id to cancel by)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    answer_cancel: bool = True  # False: cancelled by MCP, which wants no answer
    shutting_down: bool = False


class InFlight:
    """Registry of one connection's running requests (see the module docstring)."""

    def __init__(self, max_running: int | None = None,
                 max_unwritten: int | None = None) -> None:
        if max_running is not None and max_running < 1:
            raise ValueError("max_running must be positive")
        self.max_running = max_running
        self.max_unwritten = max_unwritten
        self.unwritten = 0  # bytes of answers made and not yet written
        self.ready = 0  # of which whole frames, waiting only for the client to read them
        self._started = 0  # ordinary methods running (past the wait in `slot`)
        self._written: anyio.Event | None = None  # set when some are written
        self._by_id: dict[str, Running] = {}
        self._active: set[Running] = set()  # every entry, notifications too
        self._slots = None if max_running is None else anyio.Semaphore(max_running)
        self._released: anyio.Event | None = None  # set when an entry is released
        self.closing = False

    def claim(self, rid: Any) -> Running | None:
        """An entry for a request with id `rid`; None when that id is already in flight."""
        key = id_key(rid)
        if key in self._by_id:
            return None
        entry = self._track(Running(key=key))
        self._by_id[key] = entry
        return entry

    def track_notification(self) -> Running:
        """An entry for a notification (cancelled only by shutdown)."""
        return self._track(Running())

    def _track(self, entry: Running) -> Running:
        self._active.add(entry)
        if self.closing:
            entry.shutting_down = True
            entry.scope.cancel()
        return entry

    def release(self, entry: Running) -> None:
        """The request is answered (or dropped): forget it, free its id."""
        self._active.discard(entry)
        if entry.key is not None and self._by_id.get(entry.key) is entry:
            del self._by_id[entry.key]
        if self._released is not None:
            self._released.set()

    async def idle(self) -> None:
        """Wait until nothing is in flight (after `close()`: until what a cancel cannot stop,
        a change shielded so that it lands, has finished and made its answer)."""
        while self._active:
            self._released = anyio.Event()
            await self._released.wait()

    def cancel(self, rid: Any, *, answer: bool) -> bool:
        """Cancel the request with id `rid`; `answer`: reply -32800 (False: no reply)."""
        entry = self._by_id.get(id_key(rid))
        if entry is None:
            return False
        entry.answer_cancel = answer
        entry.scope.cancel()
        return True

    def close(self) -> None:
        """Shutdown: cancel everything running now and everything claimed from now on."""
        self.closing = True
        for entry in list(self._active):
            entry.shutting_down = True
            entry.scope.cancel()

    @property
    def running(self) -> int:
        """Requests and notifications in flight (answered ones excluded)."""
        return len(self._active)

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one of `max_running` slots while an ordinary method runs."""
        if self._slots is None:
            yield
            return
        async with self._slots:
            while self.max_unwritten is not None and self.unwritten > self.max_unwritten \
                    and (self.ready > 0 or self._started > 0) and not self.closing:
                if self._written is None or self._written.is_set():
                    self._written = anyio.Event()
                await self._written.wait()
            self._started += 1
            try:
                yield
            finally:
                self._started -= 1
                if self._written is not None:
                    self._written.set()

    def answer_waiting(self, size: int) -> None:
        """An answer of `size` bytes was made and waits to be written."""
        self.unwritten += size

    def answer_ready(self, size: int) -> None:
        """A whole answer frame of `size` bytes (already counted by `answer_waiting`) is
        made: only writing it is left."""
        self.ready += size

    def answer_written(self, size: int) -> None:
        """An answer counted by `answer_waiting` and `answer_ready` was written (or dropped)."""
        self.unwritten -= size
        self.ready -= size
        if self._written is not None:
            self._written.set()
