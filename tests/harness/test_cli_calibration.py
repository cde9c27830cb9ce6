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
    # 3 notes give fewer pseudo-queries than a calibration needs: the configured weights
    assert "as configured: 0 pseudo-queries of 3 notes, fewer than 16" in fusion, fusion
    saved = root / ".rmh" / "fusion-calibration.json"
    before = saved.read_bytes()
    status = json.loads(rmh(*v, "status", "--json", "--no-dense").stdout)
    assert status["index"]["calibration"].startswith("as configured: 0 pseudo-queries")
    doctor = json.loads(rmh(*v, "doctor", "--json").stdout)
    assert doctor["fusion"]["calibration"] == status["index"]["calibration"]
    assert rmh(*v, "search", "certificates", "--no-dense").returncode == 0
    assert saved.read_bytes() == before  # reused, not made again


@pytest.mark.parametrize(("toml", "flags", "why"), [
    ("cloze = true\n", ("--no-dense",), "dense is off here"),
    ("cloze = true\n[search.weights]\nconjunctive = 0\n", (), "one is weighted 0"),
], ids=["no-dense", "no-conjunctive"])
def test_a_cloze_calibration_that_no_search_makes_says_why(
        tmp_path: Path, toml: str, flags: tuple[str, ...], why: str) -> None:
    """Cloze weighs the conjunctive channel by how dense search compares with BM25: without
    either, no search makes it. Status said "not made yet" before and after every search."""
    root = make_vault(tmp_path)
    v = ("--vault", str(root))
    (root / "rmh.toml").write_text("[search]\n" + toml, encoding="utf-8")
    assert rmh(*v, "search", "billing", *flags).returncode == 0
    status = json.loads(rmh(*v, "status", "--json", *flags).stdout)
    assert status["index"]["calibration"].startswith("none: cloze") and why in status[
        "index"]["calibration"], status["index"]["calibration"]
    assert not (root / ".rmh" / "fusion-calibration.json").exists()
