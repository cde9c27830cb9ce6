"""Root without CAP_SYS_ADMIN (a container's root): the tiers whose worker needs a mount
namespace of its own refuse to start with one line saying why, not a worker traceback (and,
since SBX5, before any worker starts: the probe tries the private root, root_probe.py).

Run through the real CLI under `capsh --drop=cap_sys_admin`, as a user of such a container
would (the bounding set loses CAP_SYS_ADMIN, so the worker's unshare(CLONE_NEWNS) is EPERM).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox import TIER_LANDLOCK, TIER_SECCOMP, probe
from vault import Vault

REPO = Path(__file__).resolve().parents[2]

# (the tier's CLI name, its registry name, what its one-line refusal names)
CASES = [
    ("seccomp", TIER_SECCOMP, "the kernel refuses the worker's private root: unshare"),
    ("landlock", TIER_LANDLOCK, "the kernel refuses the worker's private root: unshare"),
]


@pytest.mark.parametrize(("cli_tier", "tier", "reason"), CASES, ids=[c[0] for c in CASES])
def test_refusal_is_one_line_without_traceback(tmp_path: Path, cli_tier: str, tier: str,
                                               reason: str) -> None:
    capsh = shutil.which("capsh")
    if os.geteuid() != 0 or capsh is None:
        pytest.skip("needs root and capsh to drop CAP_SYS_ADMIN")
    if tier not in probe().available:
        pytest.skip(f"tier {tier} is not available here")
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "a.md").write_text("# a\n", encoding="utf-8")
    Vault.init(vault).close()
    inner = [sys.executable, "-m", "harness", "--vault", str(vault), "exec", "--no-dense",
             "--tier", cli_tier, "-c", "print('cell ran')"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("RMH_")}
    env["PYTHONPATH"] = str(REPO)
    proc = subprocess.run([capsh, "--drop=cap_sys_admin", "--", "-c",
                           " ".join(_quote(a) for a in inner)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode != 0, proc.stdout
    assert "cell ran" not in proc.stdout
    assert reason in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr


def _quote(arg: str) -> str:
    return "'" + arg.replace("'", "'\\''") + "'"
