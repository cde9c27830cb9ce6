"""Hostile argument values on the command line (session 28, CLIFUZZ): each is a usage error
(exit 2, a JSON `usage` error under --json) or an operational one (exit 1), never a
traceback, and a refused command writes nothing: not in the vault, not beside it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.forks import run_cli
from tests.harness.test_cli_notes import ROOT

pytestmark = pytest.mark.slow


def cli(cwd: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    base = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    base.update(PYTHONPATH=str(ROOT), HOME=str(cwd), **(env or {}))
    r = run_cli(args, env=base, cwd=cwd, timeout=120)
    assert "Traceback" not in r.stderr, r.stderr
    return r.returncode, r.stdout, r.stderr


@pytest.mark.parametrize("command", ["init", "demo"])
def test_an_empty_folder_argument_is_a_usage_error(tmp_path: Path, command: str) -> None:
    """`rmh init ""` initialised $RMH_VAULT, `rmh demo ""` wrote ./rmh-demo-vault: the empty
    word was read as no PATH at all."""
    other = tmp_path / "other"
    other.mkdir()
    code, out, err = cli(tmp_path, command, "", "--no-dense", "--json",
                         env={"RMH_VAULT": str(other)})
    assert code == 2, (out, err)
    assert json.loads(out)["error"]["kind"] == "usage"
    assert "must not be empty" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other"]
    assert list(other.iterdir()) == []
