"""The prompt hook's recall bench (bench/bench_hooks_recall.py) on a small LoCoMo-shaped
conversation written here: the evidence note's path, and a real ingest, index and recall."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.bench_hooks_recall import evidence_note, main
from tests.harness.test_bench_cli import LOCOMO

pytestmark = pytest.mark.slow


def test_evidence_note_is_where_ingest_writes_the_turn() -> None:
    assert evidence_note("conv-26", "D12:7") == "conversations/conv-26/S12/conv-26 D12-7.md"


@pytest.mark.parametrize("path", ["fts", "engine"])
def test_a_real_ingest_recalled_through_the_hook(tmp_path: Path, path: str) -> None:
    data, vault, out = tmp_path / "locomo.json", tmp_path / "v", tmp_path / "r.json"
    data.write_text(json.dumps(LOCOMO), encoding="utf-8")
    assert main(["--locomo", str(data), "--vault", str(vault), "--path", path,
                 "--json", str(out)]) == 0
    assert (vault / evidence_note("conv-x", "D1:2")).is_file()
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["answerable"]["n"] == 4 and report["adversarial"]["n"] == 1
    assert report["answerable"]["evidence_shown"] >= 0.5  # paint, camp: their words are there
    assert report["absent"] == {"n": 40, "injected": 0.0}  # no absent topic shares a word
    assert report["config"]["path"] == path
