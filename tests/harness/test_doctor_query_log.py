"""`rmh doctor` shows how full the learned query log's bounded df tables are (learning v13,
vault/learning/query_log.py): keys held, the capacity each is cut back to, keys forgotten."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vault.learning.formulas import LearningParams

from .test_cli_notes import make_vault, rmh

pytestmark = pytest.mark.slow


def test_doctor_reports_the_query_log_against_its_capacity(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    for query in ("billing invoices overdue", "auth tokens expire"):
        assert rmh("--vault", str(root), "search", query, "--no-dense").returncode == 0
    doc = json.loads(rmh("--vault", str(root), "doctor", "--json").stdout)
    assert doc["learning"]["query_log"] == {
        "phrases": 4, "words": 6, "capacity": LearningParams().query_log_capacity,
        "forgotten": 0}
    shown = rmh("--vault", str(root), "doctor")
    assert "query_log" in shown.stdout
