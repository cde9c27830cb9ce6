"""The stdin reader thread makes no coroutine (PROTO6, session 32).

`rpc.stdin.read_input` handed each chunk over with `anyio.from_thread.run(send.send, chunk)`,
which makes a coroutine in the thread; a chunk read just as the loop ended was scheduled on a
loop that never ran again (or one closed between anyio's check and its call_soon_threadsafe),
and at the loop's close Python warned "coroutine 'AsyncIOBackend.run_async_from_thread.
<locals>.task_wrapper' was never awaited" (seen in tests/rpc/test_rpc_output_closed.py). Here
that moment is made deterministic: the loop has stopped, the reader hands a chunk over, the
loop is closed. Main, the same steps with its memory stream:
docs/measurements/session32/PROTO6_never_awaited-before.out (one warning a round).
"""

from __future__ import annotations

import asyncio
import gc
import os
import threading
import warnings

import pytest
from anyio.lowlevel import EventLoopToken, current_token

from rpc.stdin import Chunks, holds, read_input


@pytest.mark.parametrize("frames", [1, 3, 40])
def test_a_chunk_handed_over_as_the_loop_closes_leaves_no_unawaited_coroutine(
        frames: int) -> None:
    in_r, in_w = os.pipe()
    stop_r, stop_w = os.pipe()
    runner = asyncio.Runner()

    async def setup() -> tuple[Chunks, EventLoopToken]:
        return Chunks(), current_token()

    chunks, token = runner.run(setup())  # the loop has stopped; not closed yet
    reader = threading.Thread(target=read_input, daemon=True,
                              args=(in_r, stop_r, chunks, token, 1 << 20))
    reader.start()
    os.write(in_w, b'{"jsonrpc":"2.0","method":"ping","id":1}\n' * frames)
    while holds(in_r):  # poll for the state: the reader has taken every byte
        threading.Event().wait(0.01)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        runner.get_loop().close()  # the handover scheduled on it never runs
        gc.collect()
    os.close(in_w)
    os.close(stop_w)
    assert [str(w.message) for w in caught if w.category is RuntimeWarning] == []
