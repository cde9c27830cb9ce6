"""A client that closes the server's output (EPIPE) while it keeps the server's input open:
`rpc.StdioServer` logged "output closed; stopping" yet went on waiting in read(2) for input
that never came, so it never shut down (MCPRPC2, session 29; the contract says a closed
output pipe is end of input). Now the first failed write stops reading at once."""

from __future__ import annotations

import json
import os
from contextlib import suppress
from typing import Any

import anyio
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from rpc import Dispatcher, StdioServer


async def ping() -> dict[str, Any]:
    return {}


async def echo(value: Any = None) -> Any:
    return value


def frame(method: str, rid: int, params: Any = None) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "id": rid}
    if params is not None:
        msg["params"] = params
    return json.dumps(msg).encode() + b"\n"


def serve_then_close_output(after: list[bytes]) -> tuple[bool, int]:
    """(whether the server had to be rescued by closing its input, on_shutdown calls)."""
    rescued: list[bool] = []
    shutdowns: list[int] = []

    async def on_shutdown() -> None:
        shutdowns.append(1)

    async def main() -> None:
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        server = StdioServer(Dispatcher({"ping": ping, "echo": echo}), on_shutdown=on_shutdown,
                             drain_timeout_s=5.0, write_grace_s=0.5)
        finished = anyio.Event()

        async def run() -> None:
            await server.run(in_r, out_w, handle_signals=False)
            finished.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            os.write(in_w, frame("ping", 0))
            answer = await anyio.to_thread.run_sync(os.read, out_r, 65536)
            assert json.loads(answer) == {"jsonrpc": "2.0", "result": {}, "id": 0}
            os.close(out_r)  # the client stops reading; its input stays open
            # what fits in the pipe, never blocking: a server that stopped reading leaves a
            # blocking write of the rest waiting for ever (a CI run hung there); a small
            # request first, so that one whole request is read and its answer's write fails
            os.set_blocking(in_w, False)
            data = frame("ping", 10**6) + b"".join(after)
            with suppress(BlockingIOError):
                while data:
                    data = data[os.write(in_w, data):]
            with anyio.move_on_after(20):  # poll for the state, a bound far over the need
                await finished.wait()
            if not finished.is_set():
                rescued.append(True)
                os.close(in_w)  # end of input: lets the server of main end
                await finished.wait()
        for fd in (in_r, in_w, out_w):
            with suppress(OSError):
                os.close(fd)

    anyio.run(main)
    return bool(rescued), len(shutdowns)


@settings(max_examples=6, deadline=None)
@given(st.lists(st.sampled_from([("ping", None), ("echo", ["x" * 70_000]), ("echo", [1]),
                                 ("nope", None)]), min_size=1, max_size=40))
def test_a_closed_output_stops_the_server_while_its_input_stays_open(
    calls: list[tuple[str, Any]],
) -> None:
    rescued, shutdowns = serve_then_close_output(
        [frame(method, i + 1, params) for i, (method, params) in enumerate(calls)])
    assert not rescued
    assert shutdowns == 1


def close_output_while_running(running: int, answered_first: int) -> tuple[bool, int, int]:
    """`running` requests that never end by themselves are in flight (after `answered_first`
    pings answered) when the client closes the server's output and then writes nothing, its
    input left open. (whether it had to be rescued by closing the input, requests cancelled,
    on_shutdown calls)."""
    rescued: list[bool] = []
    shutdowns: list[int] = []
    cancelled: list[int] = []
    started: list[int] = []

    async def on_shutdown() -> None:
        shutdowns.append(1)

    async def block() -> None:
        started.append(1)
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            cancelled.append(1)
            raise

    async def main() -> None:
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        server = StdioServer(Dispatcher({"ping": ping, "block": block}), on_shutdown=on_shutdown,
                             drain_timeout_s=2.0, write_grace_s=0.5)
        finished = anyio.Event()

        async def run() -> None:
            await server.run(in_r, out_w, handle_signals=False)
            finished.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            for i in range(answered_first):
                os.write(in_w, frame("ping", i))
                answer = await anyio.to_thread.run_sync(os.read, out_r, 65536)
                assert json.loads(answer)["id"] == i
            os.write(in_w, b"".join(frame("block", 100 + i) for i in range(running)))
            while len(started) < running:  # poll for the state: every one is running
                await anyio.sleep(0.01)
            os.close(out_r)  # the client goes away from our output; nothing more is written
            with anyio.move_on_after(20):  # a bound far over the need
                await finished.wait()
            if not finished.is_set():
                rescued.append(True)
                os.close(in_w)  # end of input: main's server drains (2 s), then ends
                await finished.wait()
        for fd in (in_r, in_w, out_w):
            with suppress(OSError):
                os.close(fd)

    anyio.run(main)
    return bool(rescued), len(cancelled), len(shutdowns)


@settings(max_examples=4, deadline=None, phases=[Phase.explicit, Phase.generate])
@given(running=st.integers(1, 5), answered_first=st.integers(0, 3))
def test_a_closed_output_is_noticed_without_a_write(running: int, answered_first: int) -> None:
    """Before (PROTO3, session 30): the closed output was noticed only when an answer was next
    written, so requests running for long held the server, reading input that never came.
    Now a poll of the output fd sees POLLERR at once: reading stops, what runs is cancelled."""
    rescued, cancelled, shutdowns = close_output_while_running(running, answered_first)
    assert not rescued
    assert cancelled == running and shutdowns == 1
