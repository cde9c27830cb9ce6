"""[rerank] from rmh.toml to a search: any standard export reranks, a model that fails on a
query leaves `rmh search` answering (and --explain says why), a model no export has stops the
command with one line; `timeout_s` bounds each run (session 28)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from harness.compose import RERANK_FIX
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
        "fix": RERANK_FIX,
        "message": "model unavailable: cross-encoder (output 'logits' has 3 labels; a reranker "
                   f"has 1 (or 2)); {RERANK_FIX}"}


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


@pytest.mark.parametrize("where", ["vault", "RMH_CONFIG"])
def test_a_relative_model_dir_is_taken_from_rmh_tomls_folder(tmp_path: Path, where: str
                                                             ) -> None:
    """`model_dir = "../model"` was read from the working directory (session 28: an `rmh
    serve` an agent client started elsewhere found no model); now from rmh.toml's folder."""
    root = make_vault(tmp_path)
    (tmp_path / "model").mkdir()
    build(tmp_path / "model")
    conf = root if where == "vault" else tmp_path / "conf"
    conf.mkdir(exist_ok=True)
    (conf / "rmh.toml").write_text('[rerank]\nmodel_dir = "../model"\n', encoding="utf-8")
    assert load(vault=root, config_file=conf / "rmh.toml", env={}).rerank.model_dir == str(
        tmp_path / "conf" / ".." / "model" if where != "vault" else root / ".." / "model")
    env = {} if where == "vault" else {"RMH_CONFIG": str(conf / "rmh.toml")}
    r = rmh("--vault", str(root), "search", "--json", "--explain", "Billing", env=env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["stages"]["rerank"].startswith("ran")


def test_paths_in_rmh_toml_are_from_its_folder_and_the_environment_from_the_cwd(
        tmp_path: Path) -> None:
    """Every path rmh.toml sets (model_dir and the two caches) is taken from its folder; `~`,
    absolute paths, "" (off) and environment variables are kept as given."""
    text = ('[rerank]\nmodel_dir = "m"\n[embed]\nshared_cache = "c/e.sqlite"\n'
            'graph_cache = ""\n')
    (tmp_path / "rmh.toml").write_text(text, encoding="utf-8")
    cfg = load(vault=tmp_path, env={})
    assert (cfg.rerank.model_dir, cfg.embed.shared_cache, cfg.embed.graph_cache) == (
        str(tmp_path / "m"), str(tmp_path / "c" / "e.sqlite"), "")
    for value in ("~/m", str(tmp_path.parent / "elsewhere" / "m")):  # "~", an absolute path
        (tmp_path / "rmh.toml").write_text(f'[rerank]\nmodel_dir = "{value}"\n', "utf-8")
        assert load(vault=tmp_path, env={}).rerank.model_dir == value
    env = {"RMH_RERANK_MODEL": "rel", "RMH_EMBED_CACHE": "rel.sqlite"}
    cfg = load(vault=tmp_path, env=env)
    assert (cfg.rerank.model_dir, cfg.embed.shared_cache) == ("rel", "rel.sqlite")


def test_explain_says_which_column_a_two_label_model_was_read_by(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    model = tmp_path / "model"
    model.mkdir()
    build(model, Export(head="n2"))
    code, out, err = _search(root, model)
    assert code == 0, err
    assert json.loads(out)["stages"]["rerank"].endswith(
        "relevant: column 1 by convention (no 2-label id2label in config.json))")
    (model / "config.json").write_text('{"id2label": {"0": "relevant", "1": "other"}}', "utf-8")
    code, out, err = _search(root, model)
    assert json.loads(out)["stages"]["rerank"].endswith(
        "relevant: column 0 'relevant' (config.json))")


@pytest.mark.parametrize("where", ["rmh.toml", "RMH_RERANK_MODEL"])
@pytest.mark.parametrize("broken", ["missing", "no export", "not onnx"])
def test_a_reranker_that_cannot_load_says_how_to_search_without_it(
        tmp_path: Path, where: str, broken: str) -> None:
    """Every command that opens the vault refuses while the reranker cannot load; the line said
    what was wrong with the model but not which setting named it, nor how to go on searching
    (a user who set `[rerank] model_dir` a month ago, or exported RMH_RERANK_MODEL in a shell
    profile). Following the line's advice makes the same command answer."""
    root = make_vault(tmp_path)
    model = tmp_path / "models" / "rr"
    if broken != "missing":
        model.mkdir(parents=True)
        if broken == "no export":
            build(model, Export(head="n3"))
        else:
            (model / "model.onnx").write_bytes(b"not an onnx graph")
            (model / "tokenizer.json").write_text("{}", encoding="utf-8")
    env = {"RMH_RERANK_MODEL": str(model)} if where == "RMH_RERANK_MODEL" else {}
    if where == "rmh.toml":
        (root / "rmh.toml").write_text(f'[rerank]\nmodel_dir = "{model}"\n', encoding="utf-8")
    for argv in (["search", "Billing"], ["read", "Billing"], ["list"]):
        r = rmh("--vault", str(root), *argv, env=env)
        assert r.returncode == 1 and r.stdout == "", (argv, r.stdout, r.stderr)
        line = r.stderr.strip()
        assert line.startswith("rmh: model unavailable: cross-encoder (") and "\n" not in line
        assert line.endswith(RERANK_FIX), line
        assert 'set [rerank] model_dir = "" in rmh.toml' in line and "RMH_RERANK_MODEL" in line
    # the advice, followed: the setting emptied, the command answers
    (root / "rmh.toml").write_text('[rerank]\nmodel_dir = ""\n', encoding="utf-8")
    r = rmh("--vault", str(root), "search", "--json", "Billing", env={})
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["hits"]
