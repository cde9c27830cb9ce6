"""[rerank] from rmh.toml to a search: any standard export reranks, a model that fails on a
query leaves `rmh search` answering (and --explain says why), a model no export has stops the
command with one line; `timeout_s` bounds each run (session 28)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from harness.config import ConfigError, RerankSection, load
from harness.run_bound import TIMEOUT_S
from tests.harness.test_cli_notes import make_vault, rmh
from tests.vault.retrieval.cross_encoder_exports import Export, build


def test_timeout_defaults_to_the_engines_and_must_be_positive(tmp_path: Path) -> None:
    assert RerankSection().timeout_s == TIMEOUT_S
    for bad in ("0", "0.0"):
        (tmp_path / "rmh.toml").write_text(f"[rerank]\ntimeout_s = {bad}\n", encoding="utf-8")
        with pytest.raises(ConfigError, match="timeout_s"):
            load(vault=str(tmp_path), env={})


def _search(root: Path, model: Path | str, home: Path | None = None) -> tuple[int, str, str]:
    env = {"RMH_RERANK_MODEL": str(model)} | ({"HOME": str(home)} if home else {})
    r = rmh("--vault", str(root), "search", "--json", "--explain", "Billing", env=env)
    return r.returncode, r.stdout, r.stderr


@pytest.mark.parametrize("ex, stage", [(Export(int32=True, batch=1, seq=64, types=False), "ran"),
                                      (Export(head="n2"), "ran"),
                                      (Export(poison=math.nan), "failed: ")])
def test_search_reranks_or_keeps_the_fused_order(tmp_path: Path, ex: Export, stage: str
                                                 ) -> None:
    root = make_vault(tmp_path)
    model = tmp_path / "model"
    model.mkdir()
    build(model, ex)
    (root / "Car.md").write_text("Billing car car.\n", encoding="utf-8")  # "car": the NaN
    code, out, err = _search(root, model)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["stages"]["rerank"].startswith(stage)
    assert doc["hits"]


def test_a_model_no_export_has_stops_with_one_line(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    model = tmp_path / "model"
    model.mkdir()
    build(model, Export(head="n3"))
    code, out, err = _search(root, model)
    assert code == 1 and "Traceback" not in err
    assert json.loads(out)["error"] == {
        "kind": "model_unavailable", "what": "cross-encoder",
        "reason": "output 'logits' has 3 labels; a reranker has 1 (or 2)",
        "message": "model unavailable: cross-encoder (output 'logits' has 3 labels; a reranker "
                   "has 1 (or 2))"}


def test_a_model_dir_under_home_is_found(tmp_path: Path) -> None:
    """`model_dir = "~/models/x"` (as graph_cache and --vault take `~`) was read as a folder
    named "~" in the working directory: "missing model.onnx"."""
    root = make_vault(tmp_path)
    home = tmp_path / "home"
    (home / "models" / "x").mkdir(parents=True)
    build(home / "models" / "x")
    code, out, err = _search(root, "~/models/x", home)
    assert code == 0, err
    assert json.loads(out)["stages"]["rerank"].startswith("ran")
