"""The stdio loop: NDJSON frames in, concurrent dispatch, responses out, clean shutdown.

Contract:
- Frames are read from `in_fd` by a daemon thread (so a blocked read never holds up exit)
  and split by `rpc.LineSplitter` (bounded memory; an over-long line is answered once and
  skipped to the next newline). Reading has back-pressure: at most `max_in_flight` requests
  run at once; the reader waits for a slot.
- Every request runs in its own anyio task, so a long `repl.exec` never blocks `ping` or a
  search. Responses are written whole, one frame each, under a lock, to `out_fd` (the real
  stdout; `rmh serve` points fd 1 and `sys.stdout` at stderr so nothing else reaches it).
- A request whose id is already in flight is refused (-32600, the id echoed) and the first
  one is left running. `$/cancelRequest {"id"}` cancels a running request, which is answered
  -32800; MCP `notifications/cancelled {"requestId"}` cancels it and, as MCP asks, it gets no
  answer. Batch elements are answered inside their batch.
- End of input: stop reading, let running requests finish and answer, then `on_shutdown`
  (session-end flush, closing the sandbox and the vault). SIGTERM/SIGINT: cancel running
  requests (answered -32091 "shutting down"), then the same `on_shutdown`. A closed output
  pipe is treated as end of input.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
from anyio.lowlevel import EventLoopToken, current_token
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from rpc import (
    DEFAULT_MAX_FRAME,
    INVALID_REQUEST,
    REQUEST_CANCELLED,
    Dispatcher,
    FrameTooLarge,
    Invalid,
    LineSplitter,
    Request,
    application_error,
    encode,
    failure,
    id_key,
    parse_frame,
    spec_error,
)

log = logging.getLogger("rmh.server")

READ_CHUNK = 65_536
CANCEL_METHODS = ("$/cancelRequest", "notifications/cancelled")
ShutdownHook = Callable[[], Awaitable[None]]


async def _nothing() -> None:
    return None


@dataclass(eq=False)
class _Running:
    """One request in flight: its cancel scope and how a cancellation is answered."""

    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    answer_cancel: bool = True
    shutting_down: bool = False


def _reader(fd: int, send: MemoryObjectSendStream[bytes], token: EventLoopToken) -> None:
    """Daemon thread: forward raw chunks; b"" marks end of input."""
    try:
        while True:
            try:
                chunk = os.read(fd, READ_CHUNK)
            except InterruptedError:
                continue
            except OSError:
                chunk = b""
            anyio.from_thread.run(send.send, chunk, token=token)
            if not chunk:
                return
    except Exception:  # the loop has finished (RunFinishedError, closed stream): just stop
        return


class StdioServer:
    """Serves one connection (one agent) over a pair of file descriptors."""

    def __init__(
        self,
        dispatcher: Dispatcher,
        *,
        on_shutdown: ShutdownHook = _nothing,
        max_frame: int = DEFAULT_MAX_FRAME,
        max_in_flight: int = 64,
        drain_timeout_s: float = 120.0,
    ) -> None:
        self.dispatcher = dispatcher
        self.on_shutdown = on_shutdown
        self.max_frame = max_frame
        self.max_in_flight = max_in_flight
        self.drain_timeout_s = drain_timeout_s
        self._running: dict[str, _Running] = {}  # id key -> request in flight
        self._active: set[_Running] = set()  # every running request, notifications too
        self._handlers = 0  # frames being handled (their answer not yet written)
        self._closing = False
        self._write_lock = anyio.Lock()
        self._out_fd = -1
        self._output_broken = False

    # -- output ---------------------------------------------------------------------------

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = os.write(self._out_fd, view)
            view = view[n:]

    async def send(self, frame: bytes) -> None:
        """Write one whole frame (frames never interleave)."""
        async with self._write_lock:
            if self._output_broken:
                return
            try:
                await anyio.to_thread.run_sync(self._write_all, frame)
            except OSError:  # BrokenPipe: the client is gone
                self._output_broken = True
                log.warning("output closed; stopping")

    # -- requests -------------------------------------------------------------------------

    def _cancel(self, request: Request) -> None:
        params = request.params if isinstance(request.params, dict) else {}
        mcp = request.method == "notifications/cancelled"
        target = params.get("requestId" if mcp else "id")
        entry = self._running.get(id_key(target))
        if entry is not None:
            entry.answer_cancel = not mcp
            entry.scope.cancel()

    async def _run_one(
        self, request: Request, entry: _Running, key: str | None
    ) -> dict[str, Any] | None:
        """Run one request under its own cancel scope; its response (None: no answer)."""
        self._active.add(entry)
        try:
            with entry.scope:
                return await self.dispatcher.call(request)
            if request.is_notification:
                return None
            if entry.shutting_down:
                return failure(request.id, application_error("server_shutting_down"))
            if entry.answer_cancel:
                return failure(request.id, spec_error(REQUEST_CANCELLED))
            return None
        finally:
            self._active.discard(entry)
            if key is not None and self._running.get(key) is entry:
                del self._running[key]

    async def _handle(self, raw: bytes) -> None:
        parsed = parse_frame(raw)
        if parsed.error is not None:
            await self.send(encode(failure(None, parsed.error)))
            return
        results: list[dict[str, Any] | None] = [None] * len(parsed.items)
        jobs: list[tuple[int, Request, _Running, str | None]] = []
        for i, item in enumerate(parsed.items):
            if isinstance(item, Invalid):
                results[i] = failure(item.id, item.error)
            elif item.method in CANCEL_METHODS:
                self._cancel(item)
                if not item.is_notification:
                    results[i] = {"jsonrpc": "2.0", "result": None, "id": item.id}
            elif item.is_notification:
                jobs.append((i, item, self._new_entry(), None))
            else:
                rid_key = id_key(item.id)
                if rid_key in self._running:
                    reason = {"reason": "duplicate id in flight"}
                    results[i] = failure(item.id, spec_error(INVALID_REQUEST, reason))
                else:
                    entry = self._new_entry()
                    self._running[rid_key] = entry  # registered before any await: no race
                    jobs.append((i, item, entry, rid_key))

        async def job(i: int, request: Request, entry: _Running, key: str | None) -> None:
            results[i] = await self._run_one(request, entry, key)

        async with anyio.create_task_group() as tg:
            for i, request, entry, job_key in jobs:
                tg.start_soon(job, i, request, entry, job_key)
        answered = [r for r in results if r is not None]
        if answered:
            await self.send(self.dispatcher.render(answered if parsed.is_batch else answered[0]))

    # -- the loop -------------------------------------------------------------------------

    async def _frames(
        self,
        chunks: MemoryObjectReceiveStream[bytes],
        tg: anyio.abc.TaskGroup,
        slots: anyio.Semaphore,
    ) -> None:
        splitter = LineSplitter(self.max_frame)

        async def run(raw: bytes) -> None:
            try:
                await self._handle(raw)
            except Exception:  # a bug must cost one answer, never the server
                log.exception("frame handling failed")
            finally:
                self._handlers -= 1
                slots.release()

        async for chunk in chunks:
            frames = splitter.feed(chunk) if chunk else splitter.close()
            for frame in frames:
                if isinstance(frame, FrameTooLarge):
                    reason = {"reason": "frame too large", "limit": frame.limit}
                    await self.send(encode(failure(None, spec_error(INVALID_REQUEST, reason))))
                    continue
                await slots.acquire()
                self._handlers += 1
                tg.start_soon(run, frame)
            if not chunk or self._output_broken:
                return

    def _new_entry(self) -> _Running:
        entry = _Running()
        if self._closing:
            entry.shutting_down = True
            entry.scope.cancel()
        return entry

    def _cancel_all(self) -> None:
        self._closing = True
        for entry in list(self._active) + list(self._running.values()):
            entry.shutting_down = True
            entry.scope.cancel()

    async def _watch_signals(self, reading: anyio.CancelScope) -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for signum in signals:
                log.info("signal %d: shutting down", signum)
                self._cancel_all()
                reading.cancel()

    async def run(self, in_fd: int, out_fd: int, *, handle_signals: bool = True) -> None:
        """Serve until end of input or a signal, then shut down cleanly."""
        self._out_fd = out_fd
        send, receive = anyio.create_memory_object_stream[bytes](16)
        thread = threading.Thread(
            target=_reader, args=(in_fd, send, current_token()), daemon=True, name="rmh-stdin"
        )
        slots = anyio.Semaphore(self.max_in_flight)
        reading = anyio.CancelScope()
        async with anyio.create_task_group() as control:
            if handle_signals:
                control.start_soon(self._watch_signals, reading)
            async with anyio.create_task_group() as requests:
                thread.start()
                with reading:
                    await self._frames(receive, requests, slots)
                # end of input (or a signal): let running requests finish, within a bound
                with anyio.move_on_after(self.drain_timeout_s):
                    while self._handlers:
                        await anyio.sleep(0.01)
                self._cancel_all()
            control.cancel_scope.cancel()
        with anyio.CancelScope(shield=True):
            await self.on_shutdown()
        send.close()
        receive.close()
