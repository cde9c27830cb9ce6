"""`rmh doctor` shows the learned state's bounded per-session rows and tombstones (learning
v14, vault/learning/ended.py): session rows held, their capacity, the ended ones forgotten,
and the deleted notes' tombstones held (none once no open session was shown them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vault.learning.formulas import LearningParams

from .test_cli_notes import make_vault, rmh

pytestmark = pytest.mark.slow


def test_doctor_reports_session_rows_and_tombstones(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    for sid in ("one", "two"):
        r = rmh("--vault", str(root), "search", "billing", "--no-dense", "--session", sid)
        assert r.returncode == 0, r.stderr
        assert rmh("--vault", str(root), "end-session", sid).returncode == 0
    assert rmh("--vault", str(root), "delete", "Billing").returncode == 0
    doc = json.loads(rmh("--vault", str(root), "doctor", "--json").stdout)
    assert doc["learning"]["rows"] == {
        "sessions": 2, "session_capacity": LearningParams().session_capacity,
        "sessions_forgotten": 0, "tombstones": 0}
    assert "sessions_forgotten" in rmh("--vault", str(root), "doctor").stdout
