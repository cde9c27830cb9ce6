"""Nothing of a cell runs once its answer is given: a thread the worker's own count misses (a raw
`_thread` thread, a patched `threading.active_count`) restarts the worker like any thread left
running, since the host counts the worker's threads itself. Per real tier, lint off."""

from __future__ import annotations

import pytest

from .conftest import Host, run_attack

_SPIN = """
import _thread
def spin():
    while True:
        pass
_thread.start_new_thread(spin, ())
"""


@pytest.mark.parametrize("cell", [
    _SPIN,
    _SPIN.replace("import _thread", "import _thread, threading\n"
                  "threading.active_count = lambda: 1"),
    "import threading, time\nthreading._active.clear()\n"
    "threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
    "threading._active.clear()",
], ids=["raw-thread", "patched-count", "cleared-registry"])
def test_a_thread_the_worker_does_not_report_restarts_it(host: Host, cell: str) -> None:
    res = run_attack(host, cell)
    assert res.error is not None and res.error.type == "ThreadsLeftRunning", res.to_json()
    assert res.state_lost


def test_threads_joined_before_the_answer_keep_the_state(host: Host) -> None:
    for _ in range(20):  # a joined thread may still be leaving the kernel: never a restart
        res = run_attack(host, "import threading\nts = [threading.Thread(target=sum, "
                         "args=(range(1000),)) for _ in range(8)]\n[t.start() for t in ts]\n"
                         "[t.join() for t in ts]\nkept = 1")
        assert res.ok and not res.state_lost, res.to_json()
        assert host.sb.exec("kept").value == "1"
