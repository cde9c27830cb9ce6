"""The stdio server: NDJSON frames in, `Dispatcher.dispatch` for each, answer frames out.

Contract:
- Frames are read from `in_fd` by a daemon thread (so a blocked read never holds up exit) and
  split by `LineSplitter` (bounded memory; an over-long line is answered once, id null, and
  skipped to the next newline).
- Every frame is handled in its own anyio task by the one dispatch path, with this
  connection's `InFlight` (duplicate ids, cancellation, shutdown): the server adds no protocol
  of its own. At most `max_in_flight` ordinary methods run at once; requests beyond that wait
  inside dispatch for a slot while reading goes on, so control methods (`ping`, `status`,
  cancellation) are answered while every slot is busy. Reading stops (back-pressure) only
  while more than `max_pending_frames` frames, or `max_pending_bytes` bytes of them, are
  waiting or running; and no ordinary method starts while more than `max_pending_bytes` of
  answers wait to be written (a client that does not read: `InFlight`'s `max_unwritten`).
- Answers are written whole, one frame each, under a lock, to `out_fd` (the real stdout;
  `rmh serve` points fd 1 and `sys.stdout` at stderr so nothing else reaches it). Every frame
  gets an answer or, for notifications, deliberately none; a bug while handling a frame is
  logged and answered -32603 with id null, never fatal.
- End of input: stop reading, let running requests finish and answer (within
  `drain_timeout_s`), then `on_shutdown`. SIGTERM/SIGINT/SIGHUP: cancel running requests
  (answered -32091 "shutting down"), then the same `on_shutdown`. (SIGHUP is a client's
  terminal or parent going away: left at its default it killed the server with no answer
  for a running request, no session end, and, the supervisor's exit path skipped, its
  sandbox worker left to the kernel. A SIGHUP ignored at the start, `nohup`, stays
  ignored.) A closed output is the client gone: reading stops and running requests are
  cancelled (nobody can read their answers), then the same `on_shutdown`. It is noticed at
  the first failed write, or at once by a poll of the output fd for POLLERR/POLLHUP (a
  client that closed our stdout and wrote nothing more was noticed only when an answer was
  next written: a request running for minutes held the server that long; PROTO3).
- Either way, a request a cancel cannot stop (a vault change, shielded so that it lands;
  an ingest stops at its next note and answers what landed: dispatch `_stopped`) is waited
  for (within `drain_timeout_s`) and its answer written; then answers not written
  `write_grace_s` later are abandoned: frames are written by a daemon thread, so a client
  that stops reading stdout cannot hold the shutdown (ADVRPC: with 20 MB of answers unread,
  SIGTERM left the server in write(2) for good, and its session was never ended).
"""

from __future__ import annotations

import logging
import math
import os
import queue
import select
import signal
import threading
from collections import deque
from collections.abc import Awaitable, Callable
from contextlib import suppress

import anyio
import anyio.abc
from anyio.lowlevel import EventLoopToken, current_token

from . import held_signals
from .dispatch import Dispatcher
from .errors import INTERNAL_ERROR, INVALID_REQUEST, spec_error
from .flight import InFlight
from .framing import Frame, FrameTooLarge, LineSplitter, encode
from .messages import failure
from .stdin import CHUNKS_AHEAD, DRAINED, Chunk, Chunks, read_input

log = logging.getLogger("rpc.server")

SHUTDOWN_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
ShutdownHook = Callable[[], Awaitable[None]]


def shutdown_signals() -> tuple[signal.Signals, ...]:
    """SHUTDOWN_SIGNALS, less SIGHUP when this process ignores it (`nohup`: started to
    outlive its terminal; a handler would override what the caller asked for)."""
    return tuple(s for s in SHUTDOWN_SIGNALS
                 if s != signal.SIGHUP or signal.getsignal(s) is not signal.SIG_IGN)


async def _nothing() -> None:
    return None


WriteJob = tuple[bytes, list[OSError], anyio.Event]


def _writer(fd: int, jobs: queue.SimpleQueue[WriteJob | None], token: EventLoopToken) -> None:
    """Daemon thread: write each frame whole, then wake its sender (None: stop). A daemon,
    so a write(2) a client never lets finish cannot hold the process's exit. `fd` is its own
    duplicate, closed when it ends: an abandoned frame written after the caller closed its fd
    went to whatever file the number was reused for (the next in-process server's output,
    PROTO4: 2 of ~20 runs of test_rpc_server.py)."""
    try:
        while (job := jobs.get()) is not None:
            data, failed, done = job
            view = memoryview(data)
            try:
                while view:
                    view = view[os.write(fd, view):]
            except OSError as exc:  # BrokenPipe: the client is gone
                failed.append(exc)
            try:
                anyio.from_thread.run_sync(done.set, token=token)
            except Exception:  # the loop has finished: nobody waits for it
                return
    finally:
        os.close(fd)


def _watch_output(fd: int, stop_fd: int, token: EventLoopToken,
                  gone: Callable[[], None]) -> None:
    """Daemon thread: wait for the output fd to report POLLERR or POLLHUP (a pipe whose reader
    closed it, a hung-up terminal, a closed socket), then call `gone` in the loop; a byte on
    `stop_fd` (the server is done) ends it. Asking for no events reports only those: a
    regular file or /dev/null never wakes it."""
    poller = select.poll()
    poller.register(fd, 0)
    poller.register(stop_fd, select.POLLIN)
    try:
        while True:
            try:
                events = poller.poll()
            except InterruptedError:
                continue
            for polled, mask in events:
                if polled == stop_fd or mask & select.POLLNVAL:
                    return
                if mask & (select.POLLERR | select.POLLHUP):
                    anyio.from_thread.run_sync(gone, token=token)
                    return
    except Exception:  # the loop has finished: nobody to tell
        return
    finally:
        os.close(stop_fd)


class StdioServer:
    """Serves one connection (one agent) over a pair of file descriptors."""

    def __init__(
        self,
        dispatcher: Dispatcher,
        *,
        on_shutdown: ShutdownHook = _nothing,
        max_in_flight: int = 64,
        max_pending_frames: int = 1024,
        max_pending_bytes: int | None = None,
        drain_timeout_s: float = 120.0,
        write_grace_s: float = 5.0,
    ) -> None:
        self.dispatcher = dispatcher
        self.on_shutdown = on_shutdown
        self.max_frame = dispatcher.max_frame  # one cap, both directions
        self.max_pending_frames = max_pending_frames
        self.max_pending_bytes = (
            4 * self.max_frame if max_pending_bytes is None else max_pending_bytes
        )
        self.drain_timeout_s = drain_timeout_s
        self.write_grace_s = write_grace_s
        self._jobs: queue.SimpleQueue[WriteJob | None] = queue.SimpleQueue()
        self.flight = InFlight(max_in_flight, self.max_pending_bytes)
        self._pending = 0  # frames being handled (their answer not yet written)
        self._unmade = 0  # of which those whose answer is not made yet
        self._pending_bytes = 0
        self._room = anyio.Event()
        self._write_lock = anyio.Lock()
        self._output_broken = False
        self._reading: anyio.CancelScope | None = None  # the read loop, while it runs
        self._splitter = LineSplitter(self.max_frame)
        self._backlog: deque[Frame] = deque()  # frames read, not yet handed to a task
        self._input_done = False  # end of input read, or what it held at a stop signal
        self._stop_reading = -1  # a byte here: the reader reads what waits, then DRAINED
        self._grace: anyio.CancelScope | None = None  # answering at the end: renewed per answer
        self._progress_at = 0.0  # when an answer was last made or written

    # -- output ---------------------------------------------------------------------------

    async def send(self, frame: bytes) -> None:
        """Write one whole frame (frames never interleave)."""
        async with self._write_lock:
            if self._output_broken:
                return
            failed: list[OSError] = []
            done = anyio.Event()
            self._jobs.put((frame, failed, done))
            # A cancelled wait (a signal, the shutdown's abandonment) leaves the frame queued:
            # the writer thread writes each frame whole and in order whoever waits for it, so
            # the next answer is still framed (marking the output broken here lost the running
            # requests' "shutting down" answers to a signal that came during a write)
            await done.wait()
            if failed:
                self._output_gone()
            else:  # the client reads: more time to answer
                self._progress()

    def _progress(self) -> None:
        """An answer was made or written: what waits to be written has `write_grace_s` from
        now. One bound for a client that does not read, whatever the shutdown's phase: after
        a signal it waited that long for the frames read, then as long again for the answers
        left (PROTO5: SIGTERM exit 10.4 s, not README's 5 s)."""
        self._progress_at = anyio.current_time()
        if self._grace is not None:
            self._grace.deadline = self._progress_at + self.write_grace_s

    def _output_gone(self) -> None:
        """The client closed our output: stop reading now, not at the next chunk (a client
        that closed our stdout and wrote nothing more held the server in read(2) for good,
        MCPRPC2), and cancel what runs: no answer can reach anyone."""
        if self._output_broken:
            return
        self._output_broken = True
        log.warning("output closed; stopping")
        self.flight.close()
        if self._reading is not None:
            self._reading.cancel()

    # -- frames ---------------------------------------------------------------------------

    async def _handle(self, raw: bytes) -> None:
        try:
            try:
                out = await self.dispatcher.dispatch(raw, self.flight)  # counted as unwritten
            except Exception:  # a bug must cost one answer, never the server
                log.exception("frame handling failed")
                out = encode(failure(None, spec_error(INTERNAL_ERROR)))
                self.flight.answer_waiting(len(out))
                self.flight.answer_ready(len(out))
            finally:
                self._unmade -= 1
                self._room.set()
            if out is not None:
                self._progress()
                try:
                    await self.send(out)
                finally:
                    self.flight.answer_written(len(out))
        finally:
            self._pending -= 1
            self._pending_bytes -= len(raw)
            self._room.set()

    async def _admit(self, size: int) -> None:
        """Back-pressure: wait until the frame fits the pending bounds (one always fits)."""
        while self._pending and (
            self._pending >= self.max_pending_frames
            or self._pending_bytes + size > self.max_pending_bytes
        ):
            self._room = anyio.Event()
            await self._room.wait()
        self._pending += 1
        self._unmade += 1
        self._pending_bytes += size

    def _split(self, chunk: Chunk) -> None:
        if chunk is DRAINED:  # a partial last line: no frame, no answer
            self._input_done = True
        elif chunk:
            self._backlog.extend(self._splitter.feed(chunk))
        else:
            self._input_done = True
            self._backlog.extend(self._splitter.close())

    async def _frames(self, chunks: Chunks, tg: anyio.abc.TaskGroup) -> None:
        async for chunk in chunks:
            self._split(chunk)
            await self._take_backlog(tg)
            if self._input_done or self._output_broken:
                return

    async def _take_backlog(self, tg: anyio.abc.TaskGroup) -> None:
        """Hand each frame read to its task; one a cancel interrupts stays for `_answer_read`."""
        while self._backlog:
            frame = self._backlog[0]
            if isinstance(frame, FrameTooLarge):
                self._backlog.popleft()
                reason = {"reason": "frame too large", "limit": frame.limit}
                await self.send(encode(failure(None, spec_error(INVALID_REQUEST, reason))))
                continue
            await self._admit(len(frame))
            self._backlog.popleft()
            tg.start_soon(self._handle, frame)

    async def _answer_read(self, chunks: Chunks, tg: anyio.abc.TaskGroup) -> None:
        """After a stop signal: the frames the client wrote before it (the rest of the chunk
        at hand, the chunks the reader thread handed over, and what the input pipe holds,
        read by the reader up to DRAINED) are handled, so each request is answered (-32091),
        not dropped: SIGTERM after 5,000 requests were written left 3,976 of them, read
        behind the back-pressure bound, unanswered (PROTO3), then the 1,015 still in the
        pipe (PROTO4)."""
        while True:
            await self._take_backlog(tg)
            if self._input_done:
                return
            try:
                self._split(await chunks.receive())
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                return

    # -- the loop -------------------------------------------------------------------------

    async def _drain(self, timeout_s: float) -> None:
        """Wait until every frame read is answered, or `timeout_s` passes."""
        with anyio.move_on_after(timeout_s):
            while self._pending:
                self._room = anyio.Event()
                await self._room.wait()

    async def _made(self) -> None:
        """Wait until every frame handed to a task has its answer made (or none): a change
        that lands late finishes its request before its answer exists, and the grace
        counted from before then lost that answer."""
        while self._unmade:
            self._room = anyio.Event()
            await self._room.wait()

    async def _watch_signals(self, reading: anyio.CancelScope) -> None:
        with anyio.open_signal_receiver(*shutdown_signals()) as signals:
            for signum in held_signals.take(restore=False):  # came while it was starting
                signal.raise_signal(signum)  # (rpc/held_signals.py): delivered now
            async for signum in signals:
                log.info("signal %d: shutting down", signum)
                with suppress(OSError):  # the reader has ended (end of input)
                    os.write(self._stop_reading, b"x")
                self.flight.close()
                reading.cancel()

    async def _serve(self, thread: threading.Thread, receive: Chunks,
                     handle_signals: bool) -> None:
        reading = self._reading = anyio.CancelScope()
        async with anyio.create_task_group() as control:
            if handle_signals:
                control.start_soon(self._watch_signals, reading)
            async with anyio.create_task_group() as requests:
                thread.start()
                with reading:
                    await self._frames(receive, requests)
                if self.flight.closing and not self._output_broken:  # a signal
                    # `write_grace_s` with no answer written ends it, not in all: 5,000
                    # requests, SIGTERM, load ~11: 3,985 answered in the 5 s (PROTO3, PROTO4)
                    self._grace = anyio.CancelScope(
                        deadline=anyio.current_time() + self.write_grace_s)
                    with anyio.move_on_after(self.drain_timeout_s), self._grace:
                        await self._answer_read(receive, requests)
                    self._grace = None
                if not self.flight.closing:  # end of input: let running requests finish
                    await self._drain(self.drain_timeout_s)
                self.flight.close()  # (a signal has cancelled them already)
                # What runs on is a change a cancel cannot stop (it lands): its answer is
                # written whatever the grace, which bounds only a client's reading (SIGTERM
                # during a 3 MB `write` answered nothing though the note landed: PROTO3)
                with anyio.move_on_after(self.drain_timeout_s):
                    await self.flight.idle()
                    await self._made()  # (each answer made counts as progress)
                self._grace = anyio.CancelScope(
                    deadline=self._progress_at + self.write_grace_s)
                with self._grace:
                    await self._drain(math.inf)
                self._grace = None
                requests.cancel_scope.cancel()  # answers a client does not read: abandoned
            control.cancel_scope.cancel()

    async def run(self, in_fd: int, out_fd: int, *, handle_signals: bool = True) -> None:
        """Serve until end of input or a signal, then shut down cleanly."""
        self._progress_at = anyio.current_time()
        chunks = Chunks(CHUNKS_AHEAD)
        stop_reading, self._stop_reading = os.pipe()
        thread = threading.Thread(
            target=read_input, daemon=True, name="rpc-stdin",
            args=(os.dup(in_fd), stop_reading, chunks, current_token(), self.max_pending_bytes),
        )
        threading.Thread(target=_writer, args=(os.dup(out_fd), self._jobs, current_token()),
                         daemon=True, name="rpc-stdout").start()
        stop_r, stop_w = os.pipe()
        threading.Thread(target=_watch_output, daemon=True, name="rpc-stdout-poll",
                         args=(out_fd, stop_r, current_token(), self._output_gone)).start()
        try:
            await self._serve(thread, chunks, handle_signals)
        finally:
            with suppress(OSError):  # BrokenPipe: the watcher has ended already
                os.write(stop_w, b"x")
            os.close(stop_w)
            os.close(self._stop_reading)  # no byte: the reader, if still there, just ends
        self._jobs.put(None)
        with anyio.CancelScope(shield=True):
            await self.on_shutdown()
        chunks.close()
