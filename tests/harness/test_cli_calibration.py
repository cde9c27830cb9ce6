"""`[search] calibrate = true` as a user meets it: real `rmh` processes. The first search
makes the calibration and persists it beside the index; `rmh status` and `rmh doctor` in
new processes show it; `search --explain --json` names it in the fusion stage; off, every
report says "off"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .test_cli_notes import make_vault, rmh

pytestmark = pytest.mark.slow


def test_calibration_is_made_once_persisted_and_shown(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    v = ("--vault", str(root))
    status = json.loads(rmh(*v, "status", "--json", "--no-dense").stdout)
    assert status["index"]["calibration"] == "off"
    (root / "rmh.toml").write_text("[search]\ncalibrate = true\n", encoding="utf-8")
    status = json.loads(rmh(*v, "status", "--json", "--no-dense").stdout)
    assert status["index"]["calibration"] == "not made yet"
    found = rmh(*v, "search", "billing", "--no-dense", "--explain", "--json")
    assert found.returncode == 0, found.stderr
    fusion = json.loads(found.stdout)["stages"]["fusion"]
    assert "calibrated on" in fusion and "of 3 notes" in fusion
    saved = root / ".rmh" / "fusion-calibration.json"
    before = saved.read_bytes()
    status = json.loads(rmh(*v, "status", "--json", "--no-dense").stdout)
    assert status["index"]["calibration"].startswith("calibrated on")
    doctor = json.loads(rmh(*v, "doctor", "--json").stdout)
    assert doctor["fusion"]["calibration"] == status["index"]["calibration"]
    assert rmh(*v, "search", "certificates", "--no-dense").returncode == 0
    assert saved.read_bytes() == before  # reused, not made again
