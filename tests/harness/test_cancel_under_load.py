"""Cancellation is honoured under load (issue 27 item 8): through a real `rmh serve`, with
CPU burner processes loading every core, 20 rounds of `$/cancelRequest` for a running exec
are each answered -32800, no round finishes normally, and each cancelled cell really stopped:
the ordinary exec sent after it is answered long before the cell's 120 s deadline (a cancel
that only answered -32800 while the cell ran on would hold the REPL until then). Rounds
alternate the two races: a cancel sent right behind its exec (it may arrive before the exec
has started: it must still stop it), and a cancel sent once the cell has shown it runs
(polled: the cell writes a note through the vault API) while the cell keeps the vault thread
busy with searches."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from .test_server_e2e import Server, make_vault

pytestmark = pytest.mark.slow

ROUNDS = 20


@pytest.fixture
def burners() -> Iterator[None]:
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
             for _ in range(os.cpu_count() or 2)]
    yield
    for proc in procs:
        proc.kill()
        proc.wait()


def _poll(condition: Callable[[], bool], timeout_s: float = 120.0) -> None:
    end = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < end, "the cell never showed it runs"
        time.sleep(0.02)


def test_every_cancel_is_honoured_under_load(tmp_path: Path, burners: None) -> None:
    root = make_vault(tmp_path / "v")
    srv = Server(root, tmp_path)
    latencies: list[float] = []
    try:
        assert srv.call("repl.exec", {"code": "1"}, rid="warm")["result"]["ok"]
        for i in range(ROUNDS):
            rid = f"r{i}"
            if i % 2 == 0:  # the cancel races the exec's start
                srv.send("repl.exec", {"code": "while True: pass", "deadline_s": 120}, rid)
            else:  # the cancel comes while the cell keeps the vault thread busy
                code = (f"write('started{i}', 'x')\n"
                        "while True: search('noodle bar', learn=False)")
                srv.send("repl.exec", {"code": code, "deadline_s": 120}, rid)
                _poll((root / f"started{i}.md").exists)
            sent = time.monotonic()
            srv.send("$/cancelRequest", {"id": rid})
            answer = srv.recv()
            latencies.append(time.monotonic() - sent)
            assert answer["id"] == rid, answer
            assert "error" in answer and answer["error"]["code"] == -32800, answer
            t0 = time.monotonic()
            nxt = srv.call("repl.exec", {"code": f"{i} + 1"}, rid=f"n{i}")["result"]
            assert nxt["value"] == str(i + 1), nxt
            assert time.monotonic() - t0 < 60, f"round {i}: the cancelled cell ran on"
        after = srv.call("repl.exec", {"code": "1 + 1"}, rid="after")["result"]
        assert after["value"] == "2", after
    finally:
        exit_code = srv.finish()
    assert exit_code == 0
    # the cell would otherwise run to its 120 s deadline; the bound is generous for a loaded
    # machine (BENCHMARKS: the measured latencies)
    assert max(latencies) < 30, latencies
    print("cancel latencies (s):", sorted(round(x, 3) for x in latencies))
