"""rmh.toml [search] reaches the engine's SearchParams, and its defaults are the engine's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.compose import search_params
from harness.config import SIGNALS, ConfigError, SearchSection, load
from tests.harness.test_cli_notes import make_vault, rmh
from vault import DEFAULT_WEIGHTS, SearchParams


def test_defaults_are_the_engines() -> None:
    section, params = SearchSection(), SearchParams()
    assert section.cooccurrence == params.beta
    assert section.rrf_k == params.rrf_k and section.max_note_units == params.max_note_units
    assert section.push_above == params.push_above and section.rrf_depth == params.rrf_depth
    assert section.dense_approx_above == params.dense.approx_above
    assert section.dense_nprobe == params.dense.ivf.nprobe
    assert section.dense_retrain_max_rows == params.dense.retrain_max_rows
    assert section.dense_retrain_share == params.dense.retrain_share
    assert section.redundancy_head == params.redundancy_head == 0
    assert section.scope == params.scope and section.prior_scale == params.prior_scale
    assert section.calibrate == params.calibrate is False
    assert section.second_pass == params.second_pass is True


def test_scale_switches_are_configurable(tmp_path: Path) -> None:
    (tmp_path / "rmh.toml").write_text(
        "[search]\npush_above = 0\ndense_approx_above = 1000\ndense_nprobe = 8\n"
        "dense_retrain_max_rows = 5000\ndense_retrain_share = 0.25\n",
        encoding="utf-8")
    params = search_params(load(vault=str(tmp_path), env={}))
    assert params.push_above == 0
    assert params.dense.approx_above == 1000 and params.dense.ivf.nprobe == 8
    assert params.dense.retrain_max_rows == 5000 and params.dense.retrain_share == 0.25


def test_cooccurrence_weight_is_configurable(tmp_path: Path) -> None:
    (tmp_path / "rmh.toml").write_text("[search]\ncooccurrence = 0.0\n", encoding="utf-8")
    cfg = load(vault=str(tmp_path), env={})
    assert search_params(cfg).beta == 0.0


def test_the_conjunctive_gate_is_configurable(tmp_path: Path) -> None:
    (tmp_path / "rmh.toml").write_text("[search]\nredundancy_head = 20\n", encoding="utf-8")
    assert search_params(load(vault=str(tmp_path), env={})).redundancy_head == 20


def test_the_learning_switches_are_configurable(tmp_path: Path) -> None:
    (tmp_path / "rmh.toml").write_text("[search]\nscope = 0\nprior_scale = 0\n",
                                       encoding="utf-8")
    params = search_params(load(vault=str(tmp_path), env={}))
    assert params.scope == 0 and params.prior_scale == 0.0
    (tmp_path / "rmh.toml").write_text("[search]\nscope = 12\nprior_scale = 0.4\n",
                                       encoding="utf-8")
    params = search_params(load(vault=str(tmp_path), env={}))
    assert params.scope == 12 and params.prior_scale == 0.4


@pytest.mark.parametrize("line", ["scope = -1", "prior_scale = -0.5", "scope = 2.5",
                                  "prior_scale = true", "scope = \"5\""])
def test_bad_learning_switches_are_config_errors(tmp_path: Path, line: str) -> None:
    (tmp_path / "rmh.toml").write_text(f"[search]\n{line}\n", encoding="utf-8")
    with pytest.raises(ConfigError):
        load(vault=str(tmp_path), env={})


def test_calibration_and_the_second_pass_are_configurable(tmp_path: Path) -> None:
    (tmp_path / "rmh.toml").write_text("[search]\ncalibrate = true\nsecond_pass = false\n",
                                       encoding="utf-8")
    params = search_params(load(vault=str(tmp_path), env={}))
    assert params.calibrate and not params.second_pass


W = "[search].weights.{} must be between 0 and 1000000"


@pytest.mark.parametrize(("body", "says"), [
    ('[search]\nweights = { bm25 = "x" }', "[search].weights.bm25 has the wrong type"),
    ("[search]\nweights = { bm25 = [1] }", "[search].weights.bm25 has the wrong type"),
    ("[search]\nweights = { bm25 = nan }", W.format("bm25") + ", not nan"),
    ("[search]\nweights = { dense = inf }", W.format("dense") + ", not inf"),
    ("[search]\nweights = { graph = -1.0 }", W.format("graph")),
    ("[search]\nrrf_k = -60", "[search].rrf_k must be between 0 and 2^53"),
    ("[search]\nprior_scale = inf", "[search].prior_scale must be between 0 and 1000000"),
    ("[search]\nk = 0", "[search].k must be between 1 and 100"),
    ("[search]\nk = 500", "[search].k must be between 1 and 100"),
    ("[llm]\ntimeout_s = nan", "[llm].timeout_s must be above 0 and at most 86400"),
    ("[sandbox]\nmemory_mb = -1", "[sandbox].memory_mb must be between 64 and"),
    ("[hooks]\ndaemon_wait_s = 61", "[hooks].daemon_wait_s must be between 0 and 60"),
    # tomllib takes an integer of any length (TOML's are 64-bit): past a float, no number
    (f"[search]\nrrf_k = 1{'0' * 400}", "[search].rrf_k must be between 0 and 2^53"),
    (f"[llm]\ntimeout_s = 1{'0' * 400}", "[llm].timeout_s must be above 0 and at most 86400"),
    (f"[search]\nweights = {{ bm25 = 1{'0' * 400} }}", W.format("bm25")),
])
def test_numbers_out_of_any_meaning_are_config_errors(
        tmp_path: Path, body: str, says: str) -> None:
    """No setting means anything below 0 or not finite: such a value used to reach the
    engine (NaN scores, Infinity in --json, no hits for rrf_k < 0), a weight that is no
    number was a traceback, and a k out of bounds failed every search as a usage error of
    a -k nobody typed."""
    (tmp_path / "rmh.toml").write_text(body + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as got:
        load(vault=str(tmp_path), env={})
    assert says in str(got.value)


def test_a_weight_of_no_signal_is_a_config_error(tmp_path: Path) -> None:
    """README: unknown keys are errors; a misspelt signal weight (`bm52`) was accepted and
    meant nothing."""
    (tmp_path / "rmh.toml").write_text("[search]\nweights = { bm52 = 1.0 }\n", encoding="utf-8")
    with pytest.raises(ConfigError) as got:
        load(vault=str(tmp_path), env={})  # at load: the prompt hook builds no engine
    assert "weights.bm52 is no signal" in str(got.value) and "bm25" in str(got.value)
    (tmp_path / "rmh.toml").write_text("[search]\nweights = { bm25 = 1.0 }\n", encoding="utf-8")
    assert search_params(load(vault=str(tmp_path), env={})).weights["bm25"] == 1.0


@pytest.mark.slow
@pytest.mark.parametrize("weight", ['bm25 = "x"', "bm52 = 1"], ids=["no-number", "no-signal"])
def test_a_bad_weight_is_one_config_error_line(tmp_path: Path, weight: str) -> None:
    root = make_vault(tmp_path)
    (root / "rmh.toml").write_text(f"[search]\nweights = {{ {weight} }}\n", encoding="utf-8")
    r = rmh("--vault", str(root), "search", "billing", "--json")
    assert r.returncode == 1 and r.stderr.count("\n") == 1, r.stderr
    assert json.loads(r.stdout)["error"]["kind"] == "config_error"


def test_the_config_knows_every_signal_the_engine_weighs() -> None:
    assert tuple(sorted(DEFAULT_WEIGHTS)) == SIGNALS
