"""rmh.toml [search] reaches the engine's SearchParams, and its defaults are the engine's."""

from __future__ import annotations

from pathlib import Path

from harness.compose import search_params
from harness.config import SearchSection, load
from vault import SearchParams


def test_defaults_are_the_engines() -> None:
    section, params = SearchSection(), SearchParams()
    assert section.cooccurrence == params.beta
    assert section.rrf_k == params.rrf_k and section.max_note_units == params.max_note_units


def test_cooccurrence_weight_is_configurable(tmp_path: Path) -> None:
    (tmp_path / "rmh.toml").write_text("[search]\ncooccurrence = 0.0\n", encoding="utf-8")
    cfg = load(vault=str(tmp_path), env={})
    assert search_params(cfg).beta == 0.0
