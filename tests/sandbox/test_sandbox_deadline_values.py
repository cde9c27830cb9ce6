"""Deadlines no wait can honour (SBX11, session 36): `rmh exec --deadline nan`, `inf` or `3e6`
ended in a traceback instead of an answer (select(2) refused NaN and infinity, the host's
epoll wait overflows past ~24.8 days), and a NaN deadline would never have passed. They are
refused before a cell runs: by `--deadline` (a usage error), `SandboxConfig` and
`Sandbox.exec` (a ValueError), and the sandbox answers its next cell."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox import SandboxConfig

from .conftest import Host

ROOT = Path(__file__).resolve().parents[2]
UNUSABLE = ("nan", "inf", "3e6", "0")


@pytest.mark.parametrize("seconds", UNUSABLE)
def test_rmh_exec_refuses_a_deadline_it_cannot_keep_in_one_line(tmp_path: Path,
                                                                 seconds: str) -> None:
    vault = tmp_path / "v"
    (vault / ".rmh").mkdir(parents=True)
    (vault / "a.md").write_text("# a\n", "utf-8")
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    run = subprocess.run(
        [sys.executable, "-m", "harness", "--vault", str(vault), "exec", "--no-dense",
         "--deadline", seconds, "-c", "1 + 1"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
        env={**env, "PYTHONPATH": str(ROOT)}, check=False)
    assert run.returncode == 2, (seconds, run.returncode, run.stderr[-2000:])
    assert "Traceback" not in run.stderr and "--deadline" in run.stderr, run.stderr[-2000:]
    assert run.stdout == "", run.stdout


def test_a_sandbox_refuses_a_deadline_it_cannot_keep_and_answers_the_next_cell(
        host: Host) -> None:
    for seconds in (math.nan, math.inf, 3e6, 0.0, -1.0):
        with pytest.raises(ValueError, match="deadline_s"):
            host.sb.exec("1 + 1", deadline_s=seconds)
        with pytest.raises(ValueError, match="deadline_s"):
            SandboxConfig(deadline_s=seconds, tier=host.tier)
    res = host.sb.exec("1 + 1", deadline_s=10)
    assert res.ok and res.value == "2" and not res.state_lost, res.to_json()
