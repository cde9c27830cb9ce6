"""`rmh serve`'s bounds must be at least 1 (`--max-frame` at least 1024: a smaller cap refused
every request, the error answer over the cap too; REVIEW42, session 42): anything else is a
usage error before serving (exit 2, one usage line, nothing on stdout), never a traceback.

Before (MCPRPC, session 28): `--max-in-flight 0` (or negative) was a ValueError traceback
with exit 1; `--max-frame 0` (or negative) opened the vault, began serving, then died of an
ExceptionGroup traceback with no answer to the frames the client had sent.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .test_server_e2e import CHILD_ENV, REPO, make_vault

PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'


@pytest.mark.parametrize("option", ["--max-frame", "--max-in-flight"])
@pytest.mark.parametrize("value", ["0", "-1", "-4096", "x"])
def test_a_bound_below_one_is_a_usage_error(tmp_path: Path, option: str, value: str) -> None:
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
    env["PYTHONPATH"] = str(REPO)
    vault = make_vault(tmp_path / "v")
    run = subprocess.run(
        [sys.executable, "-m", "harness", "--vault", str(vault), "serve", "--no-dense",
         f"{option}={value}"],
        input=PING, capture_output=True, cwd=REPO, env=env, timeout=120, check=False)
    err = run.stderr.decode()
    assert run.returncode == 2, (run.returncode, err[-2000:])
    assert "Traceback" not in err and "usage: rmh serve" in err and option in err, err
    assert run.stdout == b""


@pytest.mark.parametrize(("value", "served"), [("10", False), ("1023", False), ("1024", True)])
def test_a_frame_cap_below_an_answer_is_a_usage_error(
        tmp_path: Path, value: str, served: bool) -> None:
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
    env["PYTHONPATH"] = str(REPO)
    run = subprocess.run(
        [sys.executable, "-m", "harness", "--vault", str(make_vault(tmp_path / "v")), "serve",
         "--no-dense", "--max-frame", value],
        input=PING, capture_output=True, cwd=REPO, env=env, timeout=120, check=False)
    err = run.stderr.decode()
    if served:
        assert (run.returncode, run.stdout) == (0, b'{"jsonrpc":"2.0","result":{},"id":1}\n'), err
    else:
        assert run.returncode == 2 and run.stdout == b"", (run.returncode, err[-2000:])
        assert "--max-frame: must be at least 1024" in err, err
