"""`rmh status`, `rmh doctor` and `rmh serve`'s `status` say how far the dense IVF is from a
fresh build (vault/retrieval/dense_health.py): the chunk rows changed since its training, their
share, a level ("stale" up to `[search] dense_retrain_share`, "warning" past it) and the
remedy, `rmh index`, which brings it back to "ok"; a running server trains again itself once
the share passes `dense_retrain_share`. Real processes, the real ONNX embedder; the IVF made
cheap through the config (`dense_approx_above = 10`, `dense_retrain_max_rows = 0`: every
IVF keeps its lists at a change)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .test_cli_notes import rmh
from .test_server_e2e import Server

pytestmark = pytest.mark.slow

NOTES = 40  # one chunk each: an edit changes 2 rows (the old one masked, the new one added)


def _vault(tmp_path: Path, share: float) -> Path:
    root = tmp_path / "v"
    root.mkdir()
    for i in range(NOTES):  # before init: its index is the base later processes catch up from
        (root / f"N{i}.md").write_text(f"Note {i} is about topic {i % 7} and the word w{i}.\n",
                                       encoding="utf-8")
    (root / "rmh.toml").write_text(
        "[search]\ndense_approx_above = 10\ndense_retrain_max_rows = 0\n"
        f"dense_retrain_share = {share}\n", encoding="utf-8")
    assert rmh("--vault", str(root), "init", "--json").returncode == 0
    done = rmh("--vault", str(root), "index", "--json")
    assert done.returncode == 0, done.stderr
    return root


def _edit(root: Path, notes: range) -> None:
    for i in notes:
        (root / f"N{i}.md").write_text(f"Edited note {i} about lighthouses and keepers.\n",
                                       encoding="utf-8")


def _status(root: Path) -> dict[str, Any]:
    r = rmh("--vault", str(root), "status", "--json")
    assert r.returncode == 0, r.stderr
    dense: dict[str, Any] = json.loads(r.stdout)["dense"]
    return dense


def _doctor(root: Path) -> dict[str, Any]:
    r = rmh("--vault", str(root), "doctor", "--json")
    assert r.returncode == 0, r.stderr
    dense: dict[str, Any] = json.loads(r.stdout)["dense"]
    return dense


def test_status_and_doctor_report_rows_changed_since_training(tmp_path: Path) -> None:
    root = _vault(tmp_path, 0.2)
    fresh = _status(root)
    assert fresh["layout"] == "int8 IVF" and fresh["rows"] == NOTES
    assert fresh["untrained_rows"] == 0 and fresh["level"] == "ok" and "remedy" not in fresh
    _edit(root, range(3))  # 6 rows of 40: 0.15, under the share
    stale = _status(root)
    assert stale["untrained_rows"] == 6 and stale["share"] == 0.15
    assert stale["level"] == "stale" and stale["remedy"] == "rmh index"
    assert _doctor(root)["untrained_rows"] == 6 and _doctor(root)["level"] == "stale"
    shown = rmh("--vault", str(root), "status").stdout
    assert "6 changed since its training (15.0% of its rows" in shown and "rmh index" in shown
    assert "WARNING" not in shown
    _edit(root, range(3, 5))  # 10 rows: 0.25, past the share
    warned = _status(root)
    assert warned["untrained_rows"] == 10 and warned["level"] == "warning"
    assert "WARNING dense int8 IVF" in rmh("--vault", str(root), "status").stdout
    doctor = rmh("--vault", str(root), "doctor")
    assert doctor.returncode == 0 and "WARNING (dense): int8 IVF" in doctor.stdout
    assert rmh("--vault", str(root), "index", "--json").returncode == 0
    again = _status(root)
    assert again["untrained_rows"] == 0 and again["level"] == "ok"
    assert _doctor(root)["level"] == "ok"


def test_a_small_vault_is_never_stale_and_doctor_loads_no_embedder(tmp_path: Path) -> None:
    """Under the bounds the IVF is trained at every change (status: "trained at every
    change"); a vault whose notes x max_note_units cannot reach the bounds is reported by
    doctor without the embedder."""
    root = _vault(tmp_path, 0.2)
    (root / "rmh.toml").write_text("[search]\ndense_approx_above = 10\n", encoding="utf-8")
    _edit(root, range(20))
    dense = _status(root)
    assert dense["untrained_rows"] == 0 and dense["level"] == "ok"
    (root / "rmh.toml").write_text("[search]\nmax_note_units = 1\ndense_approx_above = 100\n"
                                   "dense_retrain_max_rows = 0\n", encoding="utf-8")
    doc = _doctor(root)
    assert doc["level"] == "ok" and doc["rows_at_most"] == NOTES


def test_serve_reports_its_index_and_trains_again_past_the_share(tmp_path: Path) -> None:
    root = _vault(tmp_path, 0.2)
    srv = Server(root, tmp_path, dense=True)
    rid = iter(range(1, 100))
    try:
        def searched_status() -> dict[str, Any]:
            hits = srv.call("vault.search", {"query": "lighthouse keepers", "k": 3},
                            rid=next(rid))
            assert "result" in hits, hits
            held: dict[str, Any] = srv.call("status", None, rid=next(rid))["result"]
            return held["index"]["dense"]  # type: ignore[no-any-return]

        assert searched_status()["level"] == "ok"
        for i in range(3):  # 6 rows of 40: 0.15, kept
            r = srv.call("vault.write", {"note": f"N{i}",
                                         "content": f"Rewritten {i}: lighthouse keepers.",
                                         "overwrite": True},
                         rid=next(rid))
            assert "result" in r, r
        held = searched_status()
        assert held["untrained_rows"] == 6 and held["level"] == "stale"
        for i in range(3, 5):  # 10 rows: 0.25 > 0.2, so the server trains again itself
            r = srv.call("vault.write", {"note": f"N{i}", "content": f"Rewritten {i}.",
                                         "overwrite": True}, rid=next(rid))
            assert "result" in r, r
        held = searched_status()
        assert held["untrained_rows"] == 0 and held["level"] == "ok"
    finally:
        assert srv.finish() == 0
