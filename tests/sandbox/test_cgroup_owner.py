"""Whose a worker's cpu cgroup is (sandbox/cgroup_owner.py), judged from any PID namespace,
with real supervisors racing on the real cgroup hierarchy.

Promises (session 40, SBX16): no live supervisor's group is removed or entered by another; no
worker process runs outside its group; once every supervisor is gone (killed -9 or exited) and
one more starts, no group of theirs is left, whichever PID namespace each ran in. Main judged a
group by its name (pid, start time, PID namespace): a supervisor could only judge names of its
own namespace, so a supervisor killed -9 in one namespace (a container's rmh as pid 1, or the
host's) left groups no supervisor of another namespace ever removed. A group is now judged by
a lock its supervisor holds on it for the group's life (flock(2): released by the kernel at
the holder's death, seen from every namespace that shares the hierarchy)."""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from sandbox import probe
from tests.sandbox.test_sandbox_cpu_group import NO_CGROUP, _cpu_cgroup

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
TIERS = [t for t in probe().available if "unsafe" not in t]
needs_namespaces = pytest.mark.skipif(
    NO_CGROUP is not None or os.geteuid() != 0 or shutil.which("unshare") is None or not TIERS,
    reason=f"needs root, unshare(1) and cpu cgroups ({NO_CGROUP})")

# A supervisor: prints the tag its groups' names begin with (pid, start time, PID namespace:
# the test's own reading of /proc), then per sandbox (argv[2] of them, one after another) two cells,
# each followed by "CHECK group alive outside ok": its group still there, the worker processes
# /proc lists that are not in it, the cell's outcome; "HOLD" then waits on stdin (argv[3]).
SUPERVISOR = textwrap.dedent("""
    import os, sys
    from pathlib import Path
    from sandbox import Sandbox, SandboxConfig
    start = Path("/proc/self/stat").read_bytes().rsplit(b")", 1)[1].split()[19].decode()
    pidns = os.stat("/proc/self/ns/pid").st_ino
    print("TAG", f"rmh-sandbox.{os.getpid()}.{start}.{pidns}", flush=True)
    for i in range(int(sys.argv[2])):
        sb = Sandbox(SandboxConfig(tier=sys.argv[1]), {})
        for _ in range(2):
            ok = sb.exec("sum(range(1000))").ok
            w = sb._proc
            group = w.group.path
            pids = sorted(w._tree(True)) or [w.proc.pid]
            procs = (group / "cgroup.procs").read_text().split() if group.is_dir() else []
            print("CHECK", group.name, group.is_dir(),
                  [p for p in pids if str(p) not in procs], ok, flush=True)
        if sys.argv[3] == "hold":
            print("HOLD", flush=True)
            sys.stdin.readline()
        sb.close()
    print("DONE", flush=True)
""")


def _argv(namespace: bool, *args: str) -> list[str]:
    argv = [sys.executable, "-c", SUPERVISOR, *args]
    return ["unshare", "-p", "-f", "--mount-proc", "--kill-child", *argv] if namespace else argv


def _start(namespace: bool, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(_argv(namespace, *args), env=ENV, cwd="/", text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            start_new_session=True)


def _mine(tags: set[str]) -> list[str]:
    found = _cpu_cgroup()
    assert found is not None
    return sorted(name for name in os.listdir(found[1])
                  if any(name.startswith(f"{tag}.") for tag in tags))


def _emptied(tags: set[str]) -> list[str]:
    """Wait (up to 30 s, for a loaded machine) until no process is left in their groups: the
    workers of a supervisor that is gone die with it (PDEATHSIG, the PID namespace's end);
    the groups still holding one after that."""
    found = _cpu_cgroup()
    assert found is not None
    end = time.monotonic() + 30.0
    while True:
        busy = []
        for name in _mine(tags):
            with contextlib.suppress(FileNotFoundError):
                if (found[1] / name / "cgroup.procs").read_text().split():
                    busy.append(name)
        if not busy or time.monotonic() > end:
            return busy
        time.sleep(0.1)


def _checks_hold(out: str) -> list[str]:
    """The CHECK lines that found the group gone, a process outside it or a failed cell."""
    return [line for line in out.splitlines()
            if line.startswith("CHECK") and not line.endswith(" True [] True")]


@needs_namespaces
@pytest.mark.parametrize(("killed_in", "next_in"), [("host", "pidns"), ("pidns", "host"),
                                                     ("pidns", "pidns")])
def test_a_killed_supervisors_group_goes_at_the_next_start_in_any_namespace(
        killed_in: str, next_in: str) -> None:
    """A supervisor with a live sandbox is killed -9; the next supervisor starts in another PID
    namespace (or a fresh one) and its sweep removes the group (main: a namespace's group was
    left for good; a host group waited for a later host start, here often another suite's)."""
    proc = _start(killed_in == "pidns", TIERS[0], "1", "hold")
    assert proc.stdout is not None
    tag = proc.stdout.readline().split()[1]
    lines = [proc.stdout.readline() for _ in range(3)]
    assert lines[-1].strip() == "HOLD", lines
    assert _checks_hold("".join(lines)) == []
    assert len(_mine({tag})) == 1
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert _emptied({tag}) == []
    nxt = subprocess.run(_argv(next_in == "pidns", TIERS[0], "1", "go"), env=ENV, cwd="/",
                         capture_output=True, text=True, timeout=120)
    assert nxt.stdout.rstrip().endswith("DONE"), nxt.stderr[-2000:]
    assert _checks_hold(nxt.stdout) == []
    assert _mine({tag}) == []


@needs_namespaces
@pytest.mark.parametrize("seed", [40, 41])
def test_supervisors_racing_in_several_namespaces(seed: int) -> None:
    """Eight supervisors at once, half as pid 1 of PID namespaces of their own, half killed -9
    at a seeded point (start, probe, cell, close), the others exiting after one to three
    sandboxes; every check of a live one finds its group there and every worker process in
    it; no worker outlives its supervisor; once all are gone and one more starts, none of
    their groups is left."""
    rng = random.Random(seed)
    plan = [(rng.random() < 0.5, rng.randint(1, 3), rng.uniform(0.3, 5.0) if k % 2 else None)
            for k in range(8)]
    procs = [(_start(namespace, TIERS[0], str(count), "go"), kill_at)
             for namespace, count, kill_at in plan]
    started = time.monotonic()
    for proc, kill_at in sorted(procs, key=lambda p: p[1] or 0.0):
        if kill_at is not None:
            time.sleep(max(0.0, started + kill_at - time.monotonic()))
            os.killpg(proc.pid, signal.SIGKILL)
    tags: set[str] = set()
    for proc, kill_at in procs:
        out, _ = proc.communicate(timeout=300)
        tags |= {line.split()[1] for line in out.splitlines() if line.startswith("TAG")}
        assert _checks_hold(out) == []
        assert kill_at is not None or out.rstrip().endswith("DONE"), out
    assert _emptied(tags) == []
    subprocess.run(_argv(False, TIERS[0], "1", "go"), env=ENV, cwd="/", check=True,
                   capture_output=True, timeout=120)
    assert _mine(tags) == []
