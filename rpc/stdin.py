"""The stdio server's input: a daemon thread reading raw chunks for `StdioServer`.

It reads in a thread so that a blocked read never holds up exit. After a stop signal it reads
what the input holds at that moment (no more: a client that writes on must not hold the
shutdown), so that every complete frame a client wrote before the signal is answered (-32091
"shutting down"), then reports DRAINED.
"""

from __future__ import annotations

import fcntl
import os
import select
import struct
import termios
import threading
from collections import deque

import anyio
from anyio.lowlevel import EventLoopToken

READ_CHUNK = 65_536
CHUNKS_AHEAD = 16  # chunks read ahead of the server: then the reader waits to hand one over
Chunk = bytes | None  # b"": end of input; None: what the input held at a stop is all read
DRAINED: Chunk = None


class Chunks:
    """The reader thread's chunks, handed to the loop. At most `ahead` wait unread: then the
    thread waits for room (back-pressure). The thread makes no coroutine: a handover is a
    plain callback (`from_thread.run_sync`). With `from_thread.run(send.send, ...)` (an
    anyio memory stream) the thread made one per chunk, and one made as the loop closed was
    never run: "coroutine ... task_wrapper was never awaited" at a server's end (seen in
    tests/rpc/test_rpc_output_closed.py; PROTO6: 8 in 300 loop ends with a thread handing
    over)."""

    def __init__(self, ahead: int = CHUNKS_AHEAD) -> None:
        self._room = threading.Semaphore(ahead)
        self._waiting: deque[Chunk] = deque()
        self._arrived = anyio.Event()
        self._closed = False

    def put(self, chunk: Chunk, token: EventLoopToken) -> None:
        """Thread side: hand `chunk` over, waiting for room; raises once the loop side is
        closed or the loop has finished (the reader then just ends)."""
        self._room.acquire()
        if self._closed:
            raise anyio.ClosedResourceError
        anyio.from_thread.run_sync(self._add, chunk, token=token)

    def _add(self, chunk: Chunk) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        self._waiting.append(chunk)
        self._arrived.set()

    async def receive(self) -> Chunk:
        """Loop side: the next chunk; EndOfStream once closed."""
        while not self._waiting:
            if self._closed:
                raise anyio.EndOfStream
            self._arrived = anyio.Event()
            await self._arrived.wait()
        self._room.release()
        return self._waiting.popleft()

    def __aiter__(self) -> Chunks:
        return self

    async def __anext__(self) -> Chunk:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    def close(self) -> None:
        """Loop side: no more chunks; a thread waiting for room wakes and ends."""
        self._closed = True
        self._waiting.clear()
        self._arrived.set()
        self._room.release()


def read_input(fd: int, stop_fd: int, chunks: Chunks,
               token: EventLoopToken, drain_cap: int) -> None:
    """Daemon thread: forward raw chunks; b"" marks end of input. A byte on `stop_fd` (a stop
    signal) makes it read what the input holds at that moment without waiting (poll with no
    timeout, at most `drain_cap` bytes), forward it, then DRAINED, and end: frames a client
    wrote before the signal, still in the pipe, are answered, not left unread (1,015 of 5,000
    at SIGTERM: PROTO3, PROTO4). `stop_fd` closed without a byte: end, reading nothing.
    `fd` is the thread's own duplicate, closed when it ends: a read that outlives the server
    cannot take the bytes of whatever file the caller's fd number is reused for once the
    caller closes it (a server's reader read the next server's first request, in a test that
    ran servers one after another: that server never answered it)."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    poller.register(stop_fd, select.POLLIN)
    try:
        while True:
            try:
                ready = dict(poller.poll())
            except InterruptedError:
                continue
            if stop_fd in ready:
                if os.read(stop_fd, 1):
                    drain_input(fd, chunks, token, drain_cap)
                return
            chunk = read_chunk(fd)
            chunks.put(chunk, token)
            if not chunk:
                return
    except BaseException:  # the loop has finished (RunFinishedError, "Event loop is
        return  # closed"), or the server closed `chunks`: just stop
    finally:
        os.close(fd)
        os.close(stop_fd)


def read_chunk(fd: int, size: int = READ_CHUNK) -> bytes:
    while True:
        try:
            return os.read(fd, size)
        except InterruptedError:
            continue
        except OSError:
            return b""


def holds(fd: int) -> int | None:
    """Bytes `fd` holds now, unread (FIONREAD: pipes, sockets, terminals, regular files);
    None where it cannot say."""
    try:
        return int(struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0])
    except OSError:
        return None


def drain_input(fd: int, chunks: Chunks, token: EventLoopToken, cap: int) -> None:
    """Forward what `fd` holds now, then DRAINED; b"" instead where the input ends. A partial
    last line stays unanswered. "Now" is the byte count FIONREAD gives at the call (within
    `cap`): reading while poll said readable, a client that wrote on after the signal was
    read up to `cap` (32 MiB) and answered, and held SIGTERM the whole `drain_timeout_s`
    (120 s; PROTO5). Where FIONREAD fails, while poll reports it readable at once."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    now = holds(fd)
    cap = cap if now is None else min(cap, now)
    while cap > 0 and poller.poll(0):
        chunk = read_chunk(fd, min(READ_CHUNK, cap))
        cap -= len(chunk)
        chunks.put(chunk, token)
        if not chunk:
            return
    chunks.put(DRAINED, token)
