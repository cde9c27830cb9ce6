"""bench/bench_learning_agents.py: the search parameters it ranks with, from its flags and an
rmh.toml read as `rmh serve` reads it (`--config`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.bench_learning_agents import search_params
from vault import ASKED_FLOOR, ASKED_WALK, SearchParams


def flags(config: Path | None = None, **given: float | int | None) -> argparse.Namespace:
    values: dict[str, object] = {"warmth": 0.0, "cooccurrence": 0.0, "couse": 0.0,
                                 "spread": 0.0, "passed": 0.0, "scope": None, "asked": 0.0,
                                 "asked_floor": ASKED_FLOOR, "asked_walk": int(ASKED_WALK),
                                 "dense_weight": None, "config": config}
    values.update(given)
    return argparse.Namespace(**values)


def test_no_flags_and_no_config_rank_with_the_defaults() -> None:
    assert search_params(flags()) == SearchParams()


def test_an_empty_search_section_is_the_default_too(tmp_path: Path) -> None:
    (tmp_path / "rmh.toml").write_text("[search]\n", encoding="utf-8")
    assert search_params(flags(tmp_path / "rmh.toml")) == SearchParams()


def test_the_config_sets_the_prior_scale_and_weights_and_flags_add_to_them(
        tmp_path: Path) -> None:
    (tmp_path / "rmh.toml").write_text(
        "[search]\nprior_scale = 0.4\nscope = 7\ncooccurrence = 0.3\n"
        "[search.weights]\nwarmth = 0.2\n", encoding="utf-8")
    got = search_params(flags(tmp_path / "rmh.toml"))
    assert (got.prior_scale, got.scope, got.beta) == (0.4, 7, 0.3)
    assert dict(got.weights) == {"warmth": 0.2}
    both = search_params(flags(tmp_path / "rmh.toml", warmth=0.1, passed=1.0, scope=0,
                               cooccurrence=0.5))
    assert (both.prior_scale, both.scope, both.beta) == (0.4, 0, 0.5)
    assert dict(both.weights) == {"warmth": 0.1, "passed": 1.0}
