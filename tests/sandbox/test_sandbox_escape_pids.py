"""Escape suite, cases 26 and 27 (the attacker's findings): acting on another process by pid
without a signal syscall, and reaching the supervisor through /proc. Run on every real tier;
asserted on the host: the supervisor's and a bystander's /proc/PID/limits, nice value and
affinity unchanged, the bystander alive, no forged bytes on the supervisor's stdout."""

from __future__ import annotations

import ast
import os
import subprocess
from collections.abc import Iterator

import pytest

from .conftest import Host, run_attack

_ATTEMPT = """
    import ctypes, fcntl, os, platform, resource, signal, time
    def attempt(fn):
        try:
            return "OK " + repr(fn())[:80]
        except BaseException as exc:
            return type(exc).__name__
    libc = ctypes.CDLL(None, use_errno=True)
    def raw(number, *args):
        r = libc.syscall(number, *args)
        return r if r != -1 else (_ for _ in ()).throw(OSError(ctypes.get_errno(), "denied"))
    IOPRIO_SET = {"x86_64": 251, "aarch64": 30}[platform.machine()]
"""

_PID_ATTACKS = """
    def sigio(pid, fd_end):  # the worker makes no pipe: its stdin and stdout are given
        r, w = 0, 1
        fd = r if fd_end == "r" else w
        fcntl.fcntl(fd, fcntl.F_SETOWN, pid)
        fcntl.fcntl(fd, 10, 9)  # F_SETSIG = SIGKILL
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_ASYNC)
        os.write(w, b"x")
        return "armed"
    def ioctl_owner(pid):
        return fcntl.ioctl(0, 0x8901, ctypes.c_int(pid))  # FIOSETOWN
    def pidfd_kill(pid):
        return signal.pidfd_send_signal(os.pidfd_open(pid), 9)
    out = {}
    for who, pid in (("sup", @SUPPID@), ("bys", @BYSTANDER@)):
        out[who + "_cpu"] = attempt(lambda: resource.prlimit(pid, resource.RLIMIT_CPU, (1, 1)))
        out[who + "_nofile"] = attempt(
            lambda: resource.prlimit(pid, resource.RLIMIT_NOFILE, (3, 3)))
        out[who + "_nice"] = attempt(lambda: os.setpriority(os.PRIO_PROCESS, pid, 19))
        out[who + "_affinity"] = attempt(lambda: os.sched_setaffinity(pid, {0}))
        out[who + "_ioprio"] = attempt(lambda: raw(IOPRIO_SET, 1, pid, (3 << 13) | 7))
        out[who + "_sigio_r"] = attempt(lambda: sigio(pid, "r"))
        out[who + "_sigio_w"] = attempt(lambda: sigio(pid, "w"))
        out[who + "_fiosetown"] = attempt(lambda: ioctl_owner(pid))
        out[who + "_pidfd"] = attempt(lambda: pidfd_kill(pid))
        out[who + "_kill"] = attempt(lambda: os.kill(pid, 0))
    out["self_limit"] = attempt(lambda: resource.setrlimit(resource.RLIMIT_CORE, (0, 0)))
    out["self_prlimit"] = attempt(lambda: resource.prlimit(0, resource.RLIMIT_NOFILE))
    time.sleep(0.2)
    out
"""

_PROC_ATTACKS = """
    def scan_mem(pid):
        maps = open(f"/proc/{pid}/maps").read().splitlines()
        with open(f"/proc/{pid}/mem", "rb") as mem:
            for line in maps[:200]:
                lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                try:
                    mem.seek(lo)
                    if b"@SECRET@" in mem.read(min(hi - lo, 1 << 22)):
                        return "@SECRET@"
                except OSError:
                    pass
        return "not found"
    def forge(pid):
        with open(f"/proc/{pid}/fd/1", "w") as out:
            out.write('{"jsonrpc": "2.0", "id": 1, "result": "FORGED-BY-CELL"}\\n')
        return "written"
    out = {}
    for pid in (@SUPPID@, os.getppid()):
        out[f"environ{pid}"] = attempt(lambda: open(f"/proc/{pid}/environ", "rb").read())
        out[f"mem{pid}"] = attempt(lambda: scan_mem(pid))
        out[f"fd1_{pid}"] = attempt(lambda: forge(pid))
        out[f"cwd{pid}"] = attempt(lambda: os.readlink(f"/proc/{pid}/cwd"))
        out[f"fdlink{pid}"] = attempt(lambda: os.readlink(f"/proc/{pid}/fd/1"))
    out
"""


def _state(pid: int) -> tuple[str, int, frozenset[int]]:
    with open(f"/proc/{pid}/limits", encoding="ascii") as f:
        limits = f.read()
    return limits, os.getpriority(os.PRIO_PROCESS, pid), frozenset(os.sched_getaffinity(pid))


@pytest.fixture
def bystander() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(["sleep", "120"])
    yield proc
    proc.kill()
    proc.wait()


def test_case26_act_on_other_processes_by_pid(host: Host,
                                              bystander: subprocess.Popen[bytes]) -> None:
    sup_before, bys_before = _state(os.getpid()), _state(bystander.pid)
    cell = (_ATTEMPT + _PID_ATTACKS).replace("@BYSTANDER@", str(bystander.pid))
    res = run_attack(host, cell)
    assert res.ok and res.value is not None, res.to_json()
    outcomes = ast.literal_eval(res.value)
    for key, outcome in outcomes.items():
        if "self_" in key:
            assert "OK" in outcome, (key, res.value)  # limits on itself still work
        else:
            assert "OK" not in outcome, (key, res.value)
    assert bystander.poll() is None, "the bystander was killed"
    assert _state(os.getpid()) == sup_before, "the supervisor's limits or priority changed"
    assert _state(bystander.pid) == bys_before, "the bystander's limits or priority changed"


def test_case27_supervisor_through_proc(host: Host, capfd: pytest.CaptureFixture[str]) -> None:
    cell = (_ATTEMPT + _PROC_ATTACKS).replace("@SECRET@", host.secret)
    res = run_attack(host, cell)  # I3: the secret appears in no result
    assert res.ok and res.value is not None, res.to_json()
    assert "OK" not in res.value, res.value
    assert "FORGED-BY-CELL" not in capfd.readouterr().out


_PI_FUTEX = """
    import ctypes, errno
    word = ctypes.c_uint32()
    def pi_futex(op, pid):  # FUTEX_LOCK_PI (6) waits at most 50 ms
        word.value = pid
        limit = (ctypes.c_long * 2)(0, 50_000_000) if op == 6 else None
        libc.syscall.restype = ctypes.c_long
        r = libc.syscall(202 if platform.machine() == "x86_64" else 98, ctypes.byref(word),
                         op | 128, 0, limit, None, 0)
        return errno.errorcode.get(ctypes.get_errno(), "?") if r < 0 else "OK"
    out = {}
    for op in (8, 6):  # FUTEX_TRYLOCK_PI, FUTEX_LOCK_PI
        for who, pid in (("sup", @SUPPID@), ("bys", @BYSTANDER@), ("none", 0x3FFFFFFF)):
            out[f"{op}_{who}"] = pi_futex(op, pid)
    out
"""


def test_no_pi_futex_says_which_host_pids_exist(host: Host,
                                               bystander: subprocess.Popen[bytes]) -> None:
    """A priority-inheritance futex looks up the task whose pid is in the futex word: before,
    EPERM for a live pid and ESRCH for none told a cell on the Landlock or seccomp tier every
    host pid (all of them in 0.15 s), though getpgid/getsid of another pid are refused for
    that reason; LOCK_PI also lent the waiter's priority to that task. Now every PI operation
    is refused by the filter, whatever the pid."""
    cell = (_ATTEMPT + _PI_FUTEX).replace("@BYSTANDER@", str(bystander.pid))
    res = run_attack(host, cell)
    assert res.ok and res.value is not None, res.to_json()
    answers = ast.literal_eval(res.value)
    assert set(answers.values()) == {"EPERM"}, answers
    assert bystander.poll() is None


_CPU_CLOCKS = """
    import errno, threading, time
    def cpu_clock(call, pid):  # clock_getcpuclockid(3): the CPU clock of process `pid`
        try:
            return "OK " + repr(call((~pid << 3) | 2))
        except OSError as exc:
            return errno.errorcode.get(exc.errno, "?")
    out = {}
    for who, pid in (("sup", @SUPPID@), ("bys", @BYSTANDER@), ("none", 0x3FFFFFF)):
        out["get_" + who] = cpu_clock(time.clock_gettime, pid)
        out["res_" + who] = cpu_clock(time.clock_getres, pid)
    own = (time.process_time(), time.thread_time(), time.clock_gettime(time.CLOCK_BOOTTIME),
           time.get_clock_info("monotonic").resolution, time.sleep(0.01),
           threading.Event().wait(0.01))
    (out, len(own))
"""


def test_no_cpu_clock_of_another_process(host: Host,
                                         bystander: subprocess.Popen[bytes]) -> None:
    """clock_gettime on the CPU clock of a pid needs no permission: before, a cell read the
    supervisor's CPU time (a side channel on what it does) and listed every host pid by it
    (EINVAL for none) on the Landlock and seccomp tiers. Now only fixed clocks (ids 0 to 15)
    pass the filter; the cell's own clocks and sleeps work."""
    cell = (_ATTEMPT + _CPU_CLOCKS).replace("@BYSTANDER@", str(bystander.pid))
    res = run_attack(host, cell)
    assert res.ok and res.value is not None, res.to_json()
    answers, own = ast.literal_eval(res.value)
    assert set(answers.values()) == {"EPERM"}, answers
    assert own == 6
