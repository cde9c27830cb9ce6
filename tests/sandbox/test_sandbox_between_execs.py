"""Nothing of a cell runs once its answer is given: a thread the worker's own count misses (a raw
`_thread` thread, a patched `threading.active_count`) restarts the worker like any thread left
running, since the host counts the worker's threads itself; and the worker is stopped between
cells, so a signal handler on a timer or a patched exec loop cannot spin on after the answer.
Per real tier, lint off."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from sandbox import CancelToken, Sandbox, SandboxConfig, launch, probe

from .conftest import REAL_TIERS, Host, run_attack

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


_AFTER_THE_ANSWER = {
    "timer": "import signal\ndef spin(*_):\n    while True:\n        pass\n"
             "signal.signal(signal.SIGALRM, spin)\nsignal.setitimer(signal.ITIMER_REAL, 0.1)",
    "patched-loop": "import gc\nchannel = [o for o in gc.get_objects() "
                    "if type(o).__name__ == '_Channel'][0]\n"
                    "def spin():\n    while True:\n        pass\nchannel.recv = spin",
}


def _descendants_cpu_s() -> float:
    """CPU seconds of every live process below this one, read from /proc. Not RUSAGE_CHILDREN:
    the bwrap tier's worker is a grandchild in a PID namespace, reaped by no process of ours
    when bwrap is killed, so its CPU time never reaches this process's children's count."""
    stats: dict[int, tuple[int, float]] = {}
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):  # not a process, or gone
            continue
        stats[int(name)] = (int(fields[1]), (int(fields[11]) + int(fields[12]))
                            / os.sysconf("SC_CLK_TCK"))
    below, todo = 0.0, [os.getpid()]
    while todo:
        parent = todo.pop()
        for pid, (ppid, cpu) in stats.items():
            if ppid == parent:
                below += cpu
                todo.append(pid)
    return below


@pytest.mark.parametrize("cancel_next", [False, True], ids=["idle", "next-cancelled"])
@pytest.mark.parametrize("cell", sorted(_AFTER_THE_ANSWER))
@pytest.mark.parametrize("tier", REAL_TIERS)
def test_nothing_of_a_cell_runs_after_its_answer(tier: str, cell: str, cancel_next: bool) -> None:
    if tier not in probe().available:
        pytest.skip(f"tier {tier} is not available here")
    sb = Sandbox(SandboxConfig(tier=tier, deadline_s=5, memory_mb=256, lint=False), {})
    try:
        res = sb.exec(_AFTER_THE_ANSWER[cell])
        assert res.ok and not res.state_lost, res.to_json()
        if cancel_next:  # a cell cancelled before it starts leaves the worker as it was
            token = CancelToken()
            token.cancel()
            res = sb.exec("1", cancel=token)
            assert res.error is not None and res.error.type == "Cancelled", res.to_json()
        before = _descendants_cpu_s()
        time.sleep(2.0)  # idle: a worker still running would spin all this time
        spent = _descendants_cpu_s() - before
    finally:
        sb.close()
    assert spent < 0.5, f"{spent:.2f} CPU-s while idle"


@pytest.mark.parametrize("tier", REAL_TIERS)
def test_the_next_cell_runs_where_proc_does_not_say(tier: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Where /proc does not say (not mounted, hidden, a descriptor limit), `pause` stops the
    process the host started all the same, so `resume` must continue it: it is the host's own
    unreaped child, its pid no other process's. Else every other cell ran to its deadline."""
    if tier not in probe().available:
        pytest.skip(f"tier {tier} is not available here")
    monkeypatch.setattr(launch, "_proc_stat", lambda pid: None)
    sb = Sandbox(SandboxConfig(tier=tier, deadline_s=5, memory_mb=256, lint=False), {})
    try:
        for n in range(3):
            res = sb.exec(f"n = {n}")
            assert res.ok and not res.state_lost, res.to_json()
    finally:
        sb.close()



@pytest.mark.parametrize("children_files", [True, False], ids=["children-files", "full-scan"])
def test_the_worker_tree_is_its_descendants_whichever_way_proc_is_read(
        children_files: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tree `pause`, `resume` and the thread count act on (bwrap's processes and the worker
    below them) is read from /proc/PID/task/TID/children, a few reads where scanning every
    process costs milliseconds a cell on a busy host; a kernel without those files falls back
    to the scan. Both give the same tree: a process and its two children, no other."""
    if not children_files:
        monkeypatch.setattr(launch, "_children", lambda pid: None)
    script = ("import subprocess, sys, time\n"
              "kids = [subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])"
              " for _ in range(2)]\nprint('up', flush=True)\ntime.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            start_new_session=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"up\n"
        worker = launch.WorkerProcess(proc, -1, -1, -1, -1)
        tree = worker._tree(descendants=True)
        assert len(tree) == 3 and proc.pid in tree, tree
        # the children's parent is the process; the process's own parent (pytest) is not
        # compared by size: pids wrap, so pytest's may be above or below it
        assert tree[proc.pid][0] == os.getpid()
        assert [parent for pid, (parent, _) in tree.items() if pid != proc.pid] == [proc.pid] * 2
        assert worker._tree(descendants=False) == {proc.pid: tree[proc.pid]}
        assert worker.threads(descendants=True) == 1
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


@pytest.mark.parametrize("which", ["ITIMER_VIRTUAL", "ITIMER_PROF", "ITIMER_REAL"])
@pytest.mark.parametrize("tier", REAL_TIERS)
def test_a_cell_s_interval_timer_ends_with_it(tier: str, which: str) -> None:
    """SBX8 (session 33): a cell that armed ITIMER_VIRTUAL (no handler) got its answer, and
    the timer's SIGVTALRM killed the worker during the *next* cell (WorkerCrashed, state
    lost). The worker disarms its interval timers at each cell's end, as README says nothing
    of a cell runs after its answer."""
    if tier not in probe().available:
        pytest.skip(f"tier {tier} is not available here")
    sb = Sandbox(SandboxConfig(tier=tier, deadline_s=120, memory_mb=256, lint=False), {})
    try:
        res = sb.exec(f"import signal\nkept = 1\nsignal.setitimer(signal.{which}, 0.3)")
        assert res.ok and not res.state_lost, res.to_json()
        # The next cell spends 0.6 s of user CPU, read from the kernel (so also at least 0.6
        # s of wall): a timer left armed (0.3 s of user, user + system or wall time) fires
        # inside it on any machine. Not a fixed loop: 15 million additions took 10.7 s of
        # wall at a load average of 27 on 2 cores (past a 10 s deadline), and a fast machine
        # runs them in under 0.3 s of CPU.
        res = sb.exec("import os\nu0 = os.times().user\nwhile os.times().user - u0 < 0.6:\n"
                      "    for _ in range(100_000):\n        pass\nkept")
        assert res.ok and not res.state_lost and res.value == "1", res.to_json()
    finally:
        sb.close()
