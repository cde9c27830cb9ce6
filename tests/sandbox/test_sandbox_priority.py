"""A cell cannot raise its CPU priority above the one its worker started with (SBX13).

The filter allows setpriority(PRIO_PROCESS, 0) (a thread's own nice value), and the worker
inherited the supervisor's RLIMIT_NICE: under a supervisor given one (pam_limits' `nice`
item, systemd's LimitNICE=, the -19 some distributions give the audio group) each of a cell's
threads could lower its nice value and take the CPU ahead of the host's own processes. The
worker now sets RLIMIT_NICE to 0 (soft and hard) with its other rlimits, so it may only raise
its nice value. Here root's hard RLIMIT_NICE is already 0 and cannot be raised (no
CAP_SYS_RESOURCE), so the per-tier case holds on main too; the plan case fails on main.
"""

from __future__ import annotations

import ast
import errno
import os

from sandbox import TIER_BWRAP, TIER_LANDLOCK, TIER_SECCOMP, SandboxConfig
from sandbox.registry import tier

from .conftest import Host, run_attack


def test_every_sandboxed_tiers_plan_sets_rlimit_nice_to_zero() -> None:
    config = SandboxConfig(lint=False)
    for name in (TIER_BWRAP, TIER_LANDLOCK, TIER_SECCOMP):
        rlimits = tier(name).guard_plan(config, None)["rlimits"]
        assert rlimits.get("NICE") == 0, (name, rlimits)  # main: no NICE (inherited)


_NICE = """
import errno, os, resource, threading
start = os.getpriority(os.PRIO_PROCESS, 0)
def lower(to):
    try:
        os.setpriority(os.PRIO_PROCESS, 0, to)
        return 0
    except OSError as exc:
        return exc.errno
seen = []
def thread():
    seen.append(lower(start - 1))
t = threading.Thread(target=thread)
t.start()
t.join()
raised = lower(min(start + 1, 19))
(resource.getrlimit(resource.RLIMIT_NICE), start, lower(start - 1), seen[0], raised,
 lower(start))
"""


def test_a_cell_cannot_lower_its_nice_value(host: Host) -> None:
    res = run_attack(host, _NICE)
    assert res.ok and res.value is not None, res.to_json()
    limit, start, main_thread, other_thread, raised, back = ast.literal_eval(res.value)
    assert tuple(limit) == (0, 0), (host.tier, res.value)
    assert start == os.getpriority(os.PRIO_PROCESS, 0), (host.tier, res.value)  # inherited
    if start > -20:
        assert main_thread == other_thread == errno.EACCES, (host.tier, res.value)
    assert raised == 0, (host.tier, res.value)  # raising stays allowed
    if start < 19:
        assert back == errno.EACCES, (host.tier, res.value)  # and is not undone
