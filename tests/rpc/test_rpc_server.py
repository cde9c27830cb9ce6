"""`rpc.StdioServer` over real pipes: concurrency, ids, cancellation, oversize lines, slots,
control methods ahead of queued work, the answer cap, end of input.

Methods here are protocol fixtures (block until released, echo), not stand-ins for rmh parts;
ordering is forced with events, never with timing.
"""

from __future__ import annotations

import json
import os
import select
import signal
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from typing import Any

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rpc import Dispatcher, StdioServer


class Conn:
    """The client end: write frames, read answers one line at a time."""

    def __init__(self, write_fd: int, read_fd: int) -> None:
        self.write_fd, self.read_fd = write_fd, read_fd
        self._buf = b""

    async def send_raw(self, data: bytes) -> None:
        def write() -> None:
            view = memoryview(data)
            while view:
                view = view[os.write(self.write_fd, view):]
        await anyio.to_thread.run_sync(write)

    async def send(self, message: Any) -> None:
        await self.send_raw(json.dumps(message).encode() + b"\n")

    async def recv(self) -> Any:
        while b"\n" not in self._buf:
            chunk = await anyio.to_thread.run_sync(os.read, self.read_fd, 65536)
            if not chunk:
                raise EOFError
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return json.loads(line)

    def close_input(self) -> None:
        os.close(self.write_fd)


class Fixture:
    def __init__(self) -> None:
        self.release = anyio.Event()
        self.started = anyio.Event()
        self.running = 0  # `block` calls now running (holding a slot)
        self.cancelled = 0
        self.shutdown_at: int | None = None
        self.made = 0  # `repeat` answers made

    def methods(self) -> dict[str, Callable[..., Any]]:
        async def block() -> str:
            self.started.set()
            self.running += 1
            try:
                await self.release.wait()
            except anyio.get_cancelled_exc_class():
                self.cancelled += 1
                raise
            finally:
                self.running -= 1
            return "released"

        async def echo(value: Any = None) -> Any:
            return value

        async def ping() -> dict[str, Any]:
            return {}

        async def repeat(text: str, times: int) -> str:
            self.made += 1
            return text * times

        return {"block": block, "echo": echo, "ping": ping, "repeat": repeat}


@asynccontextmanager
async def serving(fx: Fixture, max_frame: int = 8 * 1024 * 1024, max_in_flight: int = 64,
                  max_pending_bytes: int | None = None,
                  drain_timeout_s: float = 120.0) -> AsyncIterator[Conn]:
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    shutdowns: list[int] = []

    async def on_shutdown() -> None:
        shutdowns.append(1)

    dispatcher = Dispatcher(fx.methods(), max_frame=max_frame, control=("ping",))
    server = StdioServer(dispatcher, on_shutdown=on_shutdown, max_in_flight=max_in_flight,
                         max_pending_bytes=max_pending_bytes, drain_timeout_s=drain_timeout_s)
    conn = Conn(in_w, out_r)
    try:
        async with anyio.create_task_group() as tg:
            async def run() -> None:
                await server.run(in_r, out_w, handle_signals=False)
                os.close(out_w)

            tg.start_soon(run)
            yield conn
    finally:
        fx.shutdown_at = len(shutdowns)
        for fd in (in_r, out_r):
            with suppress(OSError):
                os.close(fd)


def run_session(body: Callable[[Fixture, Conn], Any], **kw: Any) -> Fixture:
    fx = Fixture()

    async def main() -> None:
        async with serving(fx, **kw) as conn:
            await body(fx, conn)
            conn.close_input()
            with anyio.fail_after(30):
                while True:
                    try:
                        await conn.recv()
                    except EOFError:
                        break

    anyio.run(main)
    return fx


def test_slow_request_never_blocks_ping_and_ids_are_kept() -> None:
    async def body(fx: Fixture, c: Conn) -> None:
        await c.send({"jsonrpc": "2.0", "method": "block", "id": "slow"})
        await fx.started.wait()
        await c.send({"jsonrpc": "2.0", "method": "ping", "id": 2})
        assert await c.recv() == {"jsonrpc": "2.0", "result": {}, "id": 2}
        fx.release.set()
        assert await c.recv() == {"jsonrpc": "2.0", "result": "released", "id": "slow"}

    fx = run_session(body)
    assert fx.shutdown_at == 1


def test_duplicate_in_flight_id_is_refused_and_first_survives() -> None:
    async def body(fx: Fixture, c: Conn) -> None:
        await c.send({"jsonrpc": "2.0", "method": "block", "id": 1})
        await fx.started.wait()
        await c.send({"jsonrpc": "2.0", "method": "echo", "params": ["x"], "id": 1})
        dup = await c.recv()
        assert dup["id"] == 1 and dup["error"]["code"] == -32600
        assert dup["error"]["data"]["reason"] == "duplicate id in flight"
        await c.send({"jsonrpc": "2.0", "method": "echo", "params": ["y"], "id": "1"})
        assert (await c.recv())["result"] == "y"  # "1" is not 1
        fx.release.set()
        assert await c.recv() == {"jsonrpc": "2.0", "result": "released", "id": 1}
        # once answered, the id may be used again
        await c.send({"jsonrpc": "2.0", "method": "echo", "params": ["z"], "id": 1})
        assert (await c.recv())["result"] == "z"

    run_session(body)


def test_cancel_request_answers_request_cancelled() -> None:
    async def body(fx: Fixture, c: Conn) -> None:
        await c.send({"jsonrpc": "2.0", "method": "block", "id": 5})
        await fx.started.wait()
        await c.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 5}})
        out = await c.recv()
        assert out["id"] == 5 and out["error"]["code"] == -32800
        assert fx.cancelled == 1

    run_session(body)


def test_mcp_cancelled_notification_cancels_without_answer() -> None:
    async def body(fx: Fixture, c: Conn) -> None:
        await c.send({"jsonrpc": "2.0", "method": "block", "id": 6})
        await fx.started.wait()
        await c.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                      "params": {"requestId": 6, "reason": "user"}})
        await c.send({"jsonrpc": "2.0", "method": "echo", "params": ["after"], "id": 7})
        assert await c.recv() == {"jsonrpc": "2.0", "result": "after", "id": 7}
        assert fx.cancelled == 1

    run_session(body)


def test_oversize_line_is_answered_once_then_stream_resyncs() -> None:
    async def body(fx: Fixture, c: Conn) -> None:
        await c.send_raw(b'{"jsonrpc":"2.0","method":"echo","params":["' + b"x" * 5000)
        first = await c.recv()
        assert first["id"] is None and first["error"]["data"]["reason"] == "frame too large"
        await c.send_raw(b"x" * 5000 + b'"],"id":1}\n')
        await c.send({"jsonrpc": "2.0", "method": "echo", "params": ["ok"], "id": 2})
        assert await c.recv() == {"jsonrpc": "2.0", "result": "ok", "id": 2}

    run_session(body, max_frame=1024)


def test_end_of_input_waits_for_running_requests_then_shuts_down() -> None:
    fx = Fixture()
    answers: list[Any] = []

    async def main() -> None:
        async with serving(fx) as c:
            await c.send({"jsonrpc": "2.0", "method": "block", "id": 1})
            await fx.started.wait()
            c.close_input()
            fx.release.set()
            while True:
                try:
                    answers.append(await c.recv())
                except EOFError:
                    break

    anyio.run(main)
    assert answers == [{"jsonrpc": "2.0", "result": "released", "id": 1}]
    assert fx.shutdown_at == 1


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.binary(max_size=300) | st.sampled_from([
    b'{"jsonrpc":"2.0","method":"echo","params":[1],"id":1}',
    b'[{"jsonrpc":"2.0","method":"echo","id":2},{"jsonrpc":"2.0","method":"ping"}]',
    b'{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":[]}}',
    b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":7}',
    b"[]", b"[[[[", b"\xc3\x28",
]), max_size=12))
def test_fuzzed_streams_never_kill_the_server(frames: list[bytes]) -> None:
    async def body(fx: Fixture, c: Conn) -> None:
        await c.send_raw(b"\n".join(frames) + b"\n")
        await c.send({"jsonrpc": "2.0", "method": "ping", "id": "alive?"})
        while True:  # every answer is well-formed; the final ping is answered
            out = await c.recv()
            items = out if isinstance(out, list) else [out]
            for r in items:
                assert r["jsonrpc"] == "2.0" and "id" in r and (("result" in r) != ("error" in r))
            if isinstance(out, dict) and out.get("id") == "alive?":
                assert out["result"] == {}
                return

    run_session(body, max_frame=256)


def test_ping_is_answered_while_every_slot_is_busy_and_work_is_queued() -> None:
    """Control methods never wait for a slot: with max_in_flight slow requests running and
    more queued behind them, ping is still answered at once (it used to wait behind them)."""
    async def body(fx: Fixture, c: Conn) -> None:
        for i in range(5):  # 2 run, 3 wait for a slot
            await c.send({"jsonrpc": "2.0", "method": "block", "id": f"slow{i}"})
        with anyio.fail_after(10):
            while fx.running < 2:
                await anyio.sleep(0.005)
        await c.send({"jsonrpc": "2.0", "method": "ping", "id": "p"})
        with anyio.fail_after(10):
            assert await c.recv() == {"jsonrpc": "2.0", "result": {}, "id": "p"}
        assert fx.running == 2  # the slots were honoured: the queued three still wait
        await c.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "slow4"}})
        queued = await c.recv()  # a request waiting for a slot can be cancelled too
        assert queued["id"] == "slow4" and queued["error"]["code"] == -32800
        fx.release.set()
        done = sorted([(await c.recv())["id"] for _ in range(4)])
        assert done == ["slow0", "slow1", "slow2", "slow3"]

    run_session(body, max_in_flight=2)


def test_repeated_id_in_one_batch_is_refused_on_the_served_path() -> None:
    async def body(fx: Fixture, c: Conn) -> None:
        await c.send([{"jsonrpc": "2.0", "method": "echo", "params": ["a"], "id": 1},
                      {"jsonrpc": "2.0", "method": "echo", "params": ["b"], "id": 1}])
        first, second = await c.recv()
        assert first == {"jsonrpc": "2.0", "result": "a", "id": 1}
        assert second["id"] == 1 and second["error"]["code"] == -32600
        assert second["error"]["data"]["reason"] == "duplicate id in flight"

    run_session(body)


def test_infinite_id_never_silences_its_batch_on_the_served_path() -> None:
    async def body(fx: Fixture, c: Conn) -> None:
        await c.send_raw(b'[{"jsonrpc":"2.0","method":"echo","params":[1],"id":1e400},'
                         b'{"jsonrpc":"2.0","method":"echo","params":[2],"id":2}]\n')
        bad, good = await c.recv()
        assert bad["id"] is None and bad["error"]["code"] == -32600
        assert good == {"jsonrpc": "2.0", "result": 2, "id": 2}
        await c.send_raw(b'{"jsonrpc":"2.0","method":"echo","id":-1e400}\n')
        alone = await c.recv()
        assert alone["id"] is None and alone["error"]["code"] == -32600

    run_session(body)


def test_the_server_sends_nothing_over_the_frame_cap() -> None:
    async def body(fx: Fixture, c: Conn) -> None:
        await c.send({"jsonrpc": "2.0", "method": "repeat", "params": ["x", 2000], "id": 3})
        out = await c.recv()
        assert out["id"] == 3 and out["error"]["data"]["kind"] == "response_too_large"
        await c.send([{"jsonrpc": "2.0", "method": "repeat", "params": ["y", 500], "id": 4},
                      {"jsonrpc": "2.0", "method": "repeat", "params": ["z", 600], "id": 5}])
        first, second = await c.recv()  # only what does not fit is refused
        assert first["result"] == "y" * 500
        assert second["id"] == 5 and second["error"]["data"]["kind"] == "response_too_large"

    run_session(body, max_frame=1024)


def test_answers_a_client_does_not_read_stay_bounded() -> None:
    """A client that sends requests and reads nothing: the server makes answers only while
    at most `max_pending_bytes` of them wait to be written (plus one per slot), not one per
    queued request (`rmh serve` held 900 MB for 200 unread `vault.read` of a 4 MiB note);
    once the client reads, every request is answered."""
    size, count = 256 << 10, 100

    async def body(fx: Fixture, c: Conn) -> None:
        for i in range(count):
            await c.send({"jsonrpc": "2.0", "method": "repeat", "params": ["x", size], "id": i})
        await c.send({"jsonrpc": "2.0", "method": "block", "id": "last"})
        with anyio.fail_after(10):
            while fx.made < 4:
                await anyio.sleep(0.01)
        await anyio.sleep(0.5)  # a server without the bound makes all 100 in this time
        made_unread = fx.made  # asserted once all is read: a failure here would hang the
        fx.release.set()  # server's write, and so the test
        ids: set[Any] = set()
        with anyio.fail_after(30):
            while len(ids) < count + 1:
                answer = await c.recv()
                assert "result" in answer, answer
                ids.add(answer["id"])
        assert fx.made == count
        assert made_unread <= (1 << 20) // size + 4 + 2, made_unread

    run_session(body, max_in_flight=4, max_pending_bytes=1 << 20)


def test_a_batch_whose_own_errors_pass_the_unwritten_bound_is_answered() -> None:
    """300 invalid elements (errors a refusal cannot make smaller, ~20 KB) and one ordinary
    request in one batch, 16 KiB of unwritten answers allowed: the batch's own errors held
    its request out of a slot until they were written, which needed the request (the batch
    and every later ordinary request of the connection waited forever)."""

    async def body(fx: Fixture, c: Conn) -> None:
        echo = {"jsonrpc": "2.0", "method": "echo", "params": ["x"], "id": "e"}
        await c.send([{}] * 300 + [echo])
        readable, _, _ = await anyio.to_thread.run_sync(select.select, [c.read_fd], [], [], 10)
        if not readable:  # (a thread's read cannot be cancelled: look before reading)
            c.close_input()  # a held server drains for drain_timeout_s, then stops
            raise AssertionError("the batch was not answered in 10 s")
        whole = await c.recv()
        assert whole["id"] is None and whole["error"]["data"]["kind"] == "response_too_large"
        await c.send({"jsonrpc": "2.0", "method": "echo", "params": ["y"], "id": "after"})
        assert (await c.recv())["result"] == "y"

    run_session(body, max_frame=4096, max_pending_bytes=16 << 10, drain_timeout_s=1.0)


def test_answers_of_running_batches_stay_bounded() -> None:
    """Batches of a 256 KiB answer and a request still running: the answers made wait for
    the running ones to finish their batches once the bound is passed, as they did before
    batches whose own answers pass it were answered (20 such batches make 20 answers
    without that wait)."""
    size, count = 256 << 10, 20

    async def body(fx: Fixture, c: Conn) -> None:
        for i in range(count):
            await c.send([{"jsonrpc": "2.0", "method": "repeat", "params": ["x", size],
                           "id": f"r{i}"}, {"jsonrpc": "2.0", "method": "block", "id": f"b{i}"}])
        await anyio.sleep(0.5)
        made = fx.made
        fx.release.set()
        for _ in range(count):
            answer = await c.recv()
            assert {a["id"][0] for a in answer if "result" in a} == {"r", "b"}, answer
        assert made <= (1 << 20) // size + 1, made

    run_session(body, max_frame=1 << 20, max_pending_bytes=1 << 20)


def test_a_client_that_stops_reading_cannot_hold_the_shutdown() -> None:
    """ADVRPC: answers a client never reads filled the pipe and held the server in write(2):
    at end of input (or SIGTERM) it never finished, so `on_shutdown` never ran. Now answers
    not written `write_grace_s` after the requests are cancelled are abandoned. (On the code
    before, the test reads the pipe after 15 s so that it can end, and fails.)"""
    fx = Fixture()
    took: list[float] = []
    rescued: list[bool] = []
    shutdowns: list[int] = []

    async def on_shutdown() -> None:
        shutdowns.append(1)

    async def main() -> None:
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        server = StdioServer(Dispatcher(fx.methods()), on_shutdown=on_shutdown,
                             drain_timeout_s=1.0, write_grace_s=0.5)
        finished = anyio.Event()

        async def run() -> None:
            start = time.monotonic()
            await server.run(in_r, out_w, handle_signals=False)
            took.append(time.monotonic() - start)
            finished.set()

        def read_until_finished() -> None:
            while not finished.is_set():
                if select.select([out_r], [], [], 0.1)[0]:
                    os.read(out_r, 1 << 20)

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            conn = Conn(in_w, out_r)
            for i in range(8):  # 8 MB of answers against a 64 KB pipe nobody reads
                await conn.send({"jsonrpc": "2.0", "method": "repeat",
                                 "params": {"text": "x", "times": 1 << 20}, "id": i})
            conn.close_input()
            with anyio.move_on_after(15):
                await finished.wait()
            if not finished.is_set():
                rescued.append(True)
                await anyio.to_thread.run_sync(read_until_finished)
        for fd in (in_r, out_r, out_w):
            with suppress(OSError):
                os.close(fd)

    anyio.run(main)
    assert not rescued and took[0] < 10, (rescued, took)
    assert shutdowns == [1]


def test_a_signal_during_a_written_answer_loses_no_later_answer() -> None:
    """REV (session 26): SIGTERM while the reader was waiting for its own answer (an oversize
    line's error) to be written marked the output broken, so the running request's "shutting
    down" answer was never written though the client kept reading. The writer thread writes
    each queued frame whole and in order whoever waits for it: a cancelled wait breaks
    nothing."""
    fx = Fixture()
    got: list[bytes] = []
    junk = [0]

    async def on_shutdown() -> None:
        pass

    async def main() -> None:
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        os.set_blocking(out_w, False)
        with suppress(BlockingIOError):
            while True:  # the pipe full: the next answer waits in write(2)
                junk[0] += os.write(out_w, b"." * 4096)
        os.set_blocking(out_w, True)
        server = StdioServer(Dispatcher(fx.methods(), max_frame=4096), on_shutdown=on_shutdown)

        async def run() -> None:
            await server.run(in_r, out_w, handle_signals=True)
            os.close(out_w)

        def read_all() -> None:
            while chunk := os.read(out_r, 1 << 16):
                got.append(chunk)

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            conn = Conn(in_w, out_r)
            await conn.send({"jsonrpc": "2.0", "method": "block", "id": 1})
            await fx.started.wait()
            await conn.send_raw(b"x" * 8192 + b"\n")  # answered "frame too large"
            with anyio.fail_after(10):  # that answer taken by the writer, which waits
                while not (server._write_lock.locked() and server._jobs.empty()):
                    await anyio.sleep(0.01)
            await anyio.sleep(0.1)
            os.kill(os.getpid(), signal.SIGTERM)
            await anyio.sleep(0.1)
            await anyio.to_thread.run_sync(read_all)
        for fd in (in_r, in_w, out_r):
            with suppress(OSError):
                os.close(fd)

    anyio.run(main)
    lines = b"".join(got)[junk[0]:].splitlines()
    answers = {json.dumps(json.loads(line).get("id")): json.loads(line) for line in lines}
    assert answers["null"]["error"]["code"] == -32600, lines  # the oversize line
    assert answers["1"]["error"]["code"] == -32091, lines  # the running request: shutting down


def test_a_hangup_the_process_started_ignoring_is_still_ignored() -> None:
    """REV (session 26): `nohup rmh serve` starts with SIGHUP ignored, asking to outlive its
    terminal; the server's SIGHUP handler (ADVRPC) overrode that and shut down at a hangup.
    Now SIGHUP stops the server only where it was not ignored at the start."""
    fx = Fixture()
    answers: list[Any] = []
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)

    async def on_shutdown() -> None:
        pass

    async def main() -> None:
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        server = StdioServer(Dispatcher(fx.methods()), on_shutdown=on_shutdown)

        async def run() -> None:
            await server.run(in_r, out_w, handle_signals=True)
            os.close(out_w)

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            conn = Conn(in_w, out_r)
            await conn.send({"jsonrpc": "2.0", "method": "echo", "params": {"value": 1}, "id": 1})
            answers.append(await conn.recv())
            os.kill(os.getpid(), signal.SIGHUP)
            await anyio.sleep(0.2)
            await conn.send({"jsonrpc": "2.0", "method": "echo", "params": {"value": 2}, "id": 2})
            with anyio.fail_after(10), suppress(EOFError):
                answers.append(await conn.recv())
            conn.close_input()
        for fd in (in_r, out_r):
            with suppress(OSError):
                os.close(fd)

    try:
        anyio.run(main)
    finally:
        signal.signal(signal.SIGHUP, previous)
    assert [a.get("result") for a in answers] == [1, 2], answers
