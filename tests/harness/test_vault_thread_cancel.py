"""A vault job whose caller was cancelled before it started is dropped (PROTO3, session 30).

Before: a queued job ran whatever happened to its caller, so SIGTERM with the in-flight slots'
searches queued held `rmh serve` for minutes (each search run for nobody, the session end
queued behind them). A started job still runs to its end; a shielded caller's job (a change,
harness/binding.py) still runs and answers.
"""

from __future__ import annotations

import threading

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.vault_ops import VaultThread


@settings(max_examples=10, deadline=None)
@given(plan=st.lists(st.booleans(), min_size=1, max_size=6))
def test_a_cancelled_callers_queued_job_never_runs(plan: list[bool]) -> None:
    """`plan[i]`: whether caller i (queued behind a blocked job) is cancelled."""
    ran: list[int] = []
    release = threading.Event()
    started = threading.Event()

    def blocker() -> None:
        started.set()
        release.wait(30)

    async def main() -> dict[int, object]:
        thread = VaultThread()
        got: dict[int, object] = {}
        scopes: list[anyio.CancelScope] = []

        async def caller(i: int) -> None:
            with anyio.CancelScope() as scope:
                scopes.append(scope)
                got[i] = await thread.acall(ran.append, i)

        async with anyio.create_task_group() as tg:
            tg.start_soon(thread.acall, blocker)
            await anyio.to_thread.run_sync(started.wait, 30)
            for i in range(len(plan)):
                tg.start_soon(caller, i)
            while len(scopes) < len(plan):  # every caller has queued its job
                await anyio.sleep(0)
            for i, cancel in enumerate(plan):
                if cancel:
                    scopes[i].cancel()
            await anyio.sleep(0)
            release.set()
        thread.close()
        return got

    got = anyio.run(main)
    kept = [i for i, cancel in enumerate(plan) if not cancel]
    assert ran == kept  # in order, the cancelled callers' jobs never run
    assert sorted(got) == kept
