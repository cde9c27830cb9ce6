"""`rmh archive`, `rmh restore`, `rmh replay`, `rmh learning` as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.forks import run_cli

ROOT = Path(__file__).resolve().parents[2]


def rmh(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env["PYTHONPATH"] = str(ROOT)
    return run_cli(["--vault", str(root), *args], env=env, cwd=ROOT, timeout=120)


@pytest.mark.slow
def test_archive_restore_replay_and_audit(tmp_path: Path) -> None:
    root = tmp_path / "v"
    root.mkdir()
    (root / "Zebra.md").write_text("zebra crossing notes, see [[Other]]\n", encoding="utf-8")
    (root / "Other.md").write_text("nothing to see\n", encoding="utf-8")
    assert rmh(root, "init").returncode == 0
    r = rmh(root, "archive", "Zebra", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["archived"] is True
    assert (root / "Zebra.md").is_file()
    # (search exclusion of archived notes is tested through the facade in
    # tests/vault/test_ledger_facade.py; the CLI search sees it once compose wires the ledger)
    assert json.loads(rmh(root, "restore", "Zebra", "--json").stdout)["restored"] is True
    check = rmh(root, "replay", "--check", "--json")
    assert check.returncode == 0 and json.loads(check.stdout)["matched"] is True
    audit = json.loads(rmh(root, "learning", "--json").stdout)
    assert audit["missing_rows"] == 0 and audit["replay_matches"] is True
    assert audit["events"] == {"archive": 1, "restore": 1}
    assert rmh(root, "archive", "NoSuchNote").returncode == 1


@pytest.mark.slow
@pytest.mark.parametrize("seq", ["-5", "x"])
def test_replay_until_takes_an_event_number(tmp_path: Path, seq: str) -> None:
    root = tmp_path / "v"
    root.mkdir()
    assert rmh(root, "init", "--no-dense").returncode == 0
    r = rmh(root, "replay", "--until", seq, "--json")
    assert r.returncode == 2
    assert json.loads(r.stdout)["error"]["kind"] == "usage" and "--until" in r.stderr
