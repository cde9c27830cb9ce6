"""Every tier the probe lists (what `rmh doctor` shows, and what "auto" picks from) starts a
worker that runs a cell; every tier it leaves out is refused before any worker starts.

Where the kernel refuses the worker the mount namespace of its private root (a container's
root without CAP_SYS_ADMIN; a container profile refusing unshare(2) to a user whom the
sysctls allow user namespaces; a profile predating mount_setattr(2)), `rmh doctor` listed
`landlock+seccomp` and `seccomp` and "auto" chose the Landlock tier, whose worker then refused
to start (SBX5_listed_tiers.py.txt). Simulated here as in test_sandbox_device_nodes.py: the
supervisor's own process loads a seccomp filter refusing one syscall, which every worker
inherits; as root also the real thing, CAP_SYS_ADMIN dropped from the bounding set by capsh.
Root and the unprivileged user (test_sandbox_nonroot.py's subset).
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_CHILD = """
import errno, sys
sys.path.insert(0, sys.argv[1])
refused, err = sys.argv[2], int(sys.argv[3])
if refused != "-":
    import pyseccomp as sc
    filt = sc.SyscallFilter(sc.ALLOW)  # what a container's profile does (the worker inherits it)
    filt.add_rule(sc.ERRNO(err), refused)
    filt.load()
from sandbox import TIERS, TIER_UNSAFE, Sandbox, SandboxConfig, SandboxError, identity_limits, probe
listed = probe().available
guards = {}
outcome = {}
for tier in ["auto", *(t for t in TIERS if t != TIER_UNSAFE)]:
    try:
        sb = Sandbox(SandboxConfig(tier=tier, memory_mb=256, lint=False), {})
    except SandboxError as exc:
        outcome[tier] = ("refused", str(exc)[:300])
        continue
    try:
        result = sb.exec("6 * 7")
        guards[sb.tier] = list(sb.guards)
        outcome[tier] = ("ran", sb.tier) if result.ok and result.value == "42" else (
            "failed", str(result.to_json())[:300])
    finally:
        sb.close()
print(repr((listed, outcome, guards, identity_limits("auto"))))
"""

# (syscall the supervisor's profile refuses, errno): none; unshare as in a container's
# default profile (EPERM) or a kernel built without namespaces (ENOSYS); mount_setattr as in
# a profile that predates it
REFUSALS = [("-", 0), ("unshare", 1), ("unshare", 38), ("mount_setattr", 1),
            ("mount_setattr", 38)]


def _check(argv: list[str]) -> None:
    child = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    assert child.returncode == 0, child.stderr[-3000:]
    listed, outcome, guards, identity = ast.literal_eval(child.stdout.strip().splitlines()[-1])
    # what doctor says of the worker's identity: its own user namespace only where it has one
    for tier, names in guards.items():
        if tier != "bwrap+seccomp" and os.geteuid() != 0 and "userns" not in names:
            assert "in its own user namespace" not in " ".join(identity), (tier, names, identity)
    for tier, (what, detail) in outcome.items():
        if tier == "auto":
            assert what == "ran" or not any(t in listed for t in ("bwrap+seccomp",
                                                                  "landlock+seccomp")), outcome
            assert what != "ran" or detail in listed, outcome
            continue
        assert (what == "ran") == (tier in listed), (tier, listed, outcome)
        if tier not in listed:
            assert "not available here" in detail, outcome


@pytest.mark.parametrize(("refused", "err"), REFUSALS, ids=[f"{r}-{e}" for r, e in REFUSALS])
def test_listed_tiers_run_where_the_profile_refuses(refused: str, err: int) -> None:
    _check([sys.executable, "-c", _CHILD, str(ROOT), refused, str(err)])


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("capsh") is None,
                    reason="needs root and capsh to drop CAP_SYS_ADMIN")
def test_listed_tiers_run_without_cap_sys_admin() -> None:
    """A container's root: CAP_SYS_ADMIN gone from the bounding set (NEWUSER2's case)."""
    inner = " ".join("'" + a.replace("'", "'\\''") + "'"
                     for a in [sys.executable, "-c", _CHILD, str(ROOT), "-", "0"])
    _check([str(shutil.which("capsh")), "--drop=cap_sys_admin", "--", "-c", inner])
