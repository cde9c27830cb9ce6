"""A process forked from a supervisor owns none of its workers or cpu cgroups.

The sandbox is a library: a program that holds a Sandbox may fork (os.fork, a fork-started
multiprocessing helper that ends by sys.exit). Main's exit handler ran in such a child too
(atexit is inherited): it SIGKILLed every live worker of the parent (`launch._LIVE`) and tried
to remove the parent's groups (cgroup v2: turned `cpu` off under them and moved itself out);
the parent's next cell then found its worker dead and its namespace lost (session 40,
NOTES-SBX16); and a sandbox the child started itself waited forever for the spawner thread,
which was not forked with it; and the child's copy of the parent's Sandbox sent its cells to
the parent's worker and killed it when closed (leaving a `with` block): it is refused there
now, and closing it closes only the child's descriptors. Real supervisors in subprocesses,
every tier; the child ends normally."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sandbox import probe

ROOT = Path(__file__).resolve().parents[2]
TIERS = [t for t in probe().available if "unsafe" not in t]

SUPERVISOR = textwrap.dedent("""
    import os, signal, sys
    from sandbox import Sandbox, SandboxConfig, SandboxError
    sb = Sandbox(SandboxConfig(tier=sys.argv[1]), {})
    print(sb.exec("x = 41").ok, flush=True)
    group = sb._proc.group
    for how in sys.argv[2:]:
        pid = os.fork()
        if pid == 0:
            if how == "exit":
                sys.exit(0)  # atexit handlers run
            if how == "inherited":  # the parent's Sandbox: refused, and closing it is harmless
                try:
                    sb.exec("x = 0")
                    os._exit(3)
                except SandboxError:
                    sb.close()
                    os._exit(0)
            if how == "sandbox":  # one of its own (the test fails, not hangs, where it cannot)
                signal.alarm(60)
                with Sandbox(SandboxConfig(tier=sys.argv[1]), {}) as own:
                    os._exit(0 if own.exec("x = 1; x").value == "1" else 1)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        result = sb.exec("x += 1; x")
        alive = group is None or group.path.is_dir()
        print(how, os.waitstatus_to_exitcode(status), result.ok, result.value, result.state_lost,
              alive, flush=True)
    sb.close()
""")


@pytest.mark.parametrize("tier_name", TIERS)
def test_a_forked_child_that_exits_leaves_the_parents_worker_alone(tier_name: str) -> None:
    run = subprocess.run([sys.executable, "-c", SUPERVISOR, tier_name, "exit", "_exit", "sandbox",
                          "inherited", "exit"],
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd="/",
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.splitlines() == ["True", "exit 0 True 42 False True",
                                       "_exit 0 True 43 False True", "sandbox 0 True 44 False True",
                                       "inherited 0 True 45 False True",
                                       "exit 0 True 46 False True"]
