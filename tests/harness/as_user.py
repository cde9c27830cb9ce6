"""Running the real CLI as the unprivileged test user (`rmhtest`, created by .ci/run): root
reads and writes any file whatever its mode, so permission promises are checked as this user.
`unprivileged_home()` skips, saying why, where that cannot be done (not root, no runuser, no
user, or the user cannot run this interpreter and checkout)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.harness.test_cli_notes import ROOT

USER = "rmhtest"


def as_user(home: Path, *args: str, stdin: str = "",
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`rmh ARGS` run by `USER` with HOME=home and a minimal environment."""
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "PYTHONPATH": str(ROOT),
           "RMH_EMBED_CACHE": "", "LANG": "C.UTF-8"}
    return subprocess.run(["runuser", "-u", USER, "--", sys.executable, "-m", "harness", *args],
                          input=stdin, capture_output=True, text=True, env=env, cwd=str(home),
                          timeout=timeout, check=False)


def unprivileged_home(parent: Path | None = None) -> Path:
    """A fresh folder owned by `USER` (under `parent`, else a new temporary folder) from which
    `USER` can run this checkout; the caller removes it."""
    if os.geteuid() != 0 or shutil.which("runuser") is None:
        pytest.skip("needs root and runuser to run the CLI as the unprivileged user")
    if subprocess.run(["id", "-u", USER], capture_output=True, check=False).returncode != 0:
        pytest.skip(f"no user {USER} (.ci/run creates it)")
    if parent is None:
        home = Path(tempfile.mkdtemp(prefix="rmh-user-"))
    else:
        home = parent / "home"
        home.mkdir()
    os.chown(home, int(subprocess.check_output(["id", "-u", USER])), -1)
    probe = as_user(home, "--version")
    if probe.returncode != 0:
        shutil.rmtree(home, ignore_errors=True)
        pytest.skip(f"{USER} cannot run this interpreter and checkout: {probe.stderr[:200]}")
    return home
