"""Host calls and the cell's deadline and cancel (issue 26 item 5, issue 27 item 8): a cell
ends at its deadline or at a cancel while a host function runs for it; the host call is
abandoned (its result discarded), at most one runs per sandbox, a later cell that calls no
host function is not slowed, and a later host call is never queued behind the abandoned one.
A `CancelToken` cancels its own exec whenever the cancel comes, even before the exec starts.
Real sandboxes; the host functions block on events the test controls (no sleeps)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import pytest

from sandbox import CancelToken, ExecResult, HostFunction, Sandbox, SandboxConfig, probe


class Gate:
    """Host functions that block until released, counting what runs at once."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.entered = threading.Event()
        self.lock = threading.Lock()
        self.running = 0
        self.most = 0
        self.calls: list[str] = []

    def _run(self, name: str, block: bool) -> str:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
            self.calls.append(name)
        self.entered.set()
        try:
            if block:
                self.release.wait(120)
            return name
        finally:
            with self.lock:
                self.running -= 1

    def functions(self) -> dict[str, HostFunction]:
        return {
            "slow": HostFunction(lambda: self._run("slow", True), "Block until released.", "()"),
            "quick": HostFunction(lambda: self._run("quick", False), "Return at once.", "()"),
        }


@pytest.fixture
def gate() -> Iterator[tuple[Sandbox, Gate]]:
    tier = probe().best
    if tier is None:
        pytest.skip(f"no sandbox tier here: {probe().to_json()}")
    g = Gate()
    sb = Sandbox(SandboxConfig(deadline_s=30, lint=False, tier=tier), g.functions())
    yield sb, g
    g.release.set()
    sb.close()


def _poll(condition: Callable[[], bool], timeout_s: float = 60.0) -> None:
    end = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < end, "condition never held"
        time.sleep(0.01)


def test_cell_ends_at_its_deadline_while_a_host_call_runs(gate: tuple[Sandbox, Gate]) -> None:
    sb, g = gate
    res = sb.exec("slow()", deadline_s=2)
    assert res.error is not None and res.error.type == "DeadlineExceeded", res.to_json()
    assert "slow" in res.error.message and res.state_lost
    assert res.duration_s < 2 + 3  # the host call would block for 120 s
    assert sb.host_busy == "slow"  # abandoned, still running
    # a cell without host calls is not slowed by it
    assert sb.exec("sum(range(10))", deadline_s=30).value == "45"
    # a host call never queues behind the abandoned one: it waits within its own deadline
    late = sb.exec("quick()", deadline_s=1)
    assert late.error is not None and late.error.type == "DeadlineExceeded", late.to_json()
    assert "quick never ran" in late.error.message
    assert g.calls == ["slow"] and sb.host_busy == "slow"
    g.release.set()
    _poll(lambda: sb.host_busy is None)
    assert sb.exec("quick()").value == "'quick'"
    assert g.most == 1  # never two host calls at once


def test_waiting_host_call_starts_when_the_abandoned_one_ends(
        gate: tuple[Sandbox, Gate]) -> None:
    sb, g = gate
    assert sb.exec("slow()", deadline_s=1).error is not None
    results: list[ExecResult] = []
    runner = threading.Thread(target=lambda: results.append(sb.exec("quick()", deadline_s=60)))
    runner.start()
    g.release.set()  # the abandoned call returns; the waiting one then runs
    runner.join(90)
    assert results and results[0].value == "'quick'", results[0].to_json()
    assert g.calls == ["slow", "quick"] and g.most == 1


def test_cancel_ends_a_cell_during_a_host_call(gate: tuple[Sandbox, Gate]) -> None:
    sb, g = gate
    token = CancelToken()
    results: list[ExecResult] = []
    runner = threading.Thread(target=lambda: results.append(
        sb.exec("slow()", deadline_s=120, cancel=token)))
    runner.start()
    assert g.entered.wait(60)  # the host call runs
    token.cancel()
    runner.join(30)  # a cancel that was ignored would block for 120 s
    assert results and results[0].error is not None
    assert results[0].error.type == "Cancelled", results[0].to_json()
    assert sb.host_busy == "slow"
    g.release.set()
    _poll(lambda: sb.host_busy is None)
    assert sb.exec("1 + 1").value == "2"


def test_token_cancelled_before_the_exec_starts_never_runs_it(
        gate: tuple[Sandbox, Gate]) -> None:
    sb, g = gate
    token = CancelToken()
    token.cancel()
    res = sb.exec("quick()", cancel=token)
    assert res.error is not None and res.error.type == "Cancelled" and not res.state_lost
    assert g.calls == []
    assert sb.exec("x = 5\nx").value == "5"


def test_token_of_a_finished_exec_cancels_nothing_later(gate: tuple[Sandbox, Gate]) -> None:
    sb, g = gate
    old = CancelToken()
    assert sb.exec("1", cancel=old).ok
    results: list[ExecResult] = []
    runner = threading.Thread(target=lambda: results.append(sb.exec("slow()", deadline_s=60)))
    runner.start()
    assert g.entered.wait(60)
    old.cancel()  # belongs to the finished exec
    g.release.set()
    runner.join(60)
    assert results and results[0].value == "'slow'", results[0].to_json()
