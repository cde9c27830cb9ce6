"""The shell's wall clock bounds a reranker's runs (harness/run_bound.py, rmh.toml
`[rerank] timeout_s`): vault is handed the bound and reads no clock itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.run_bound import WallClock
from tests.vault.retrieval.cross_encoder_exports import build_slow
from tests.vault.retrieval_fixtures import make_corpus
from vault import OnnxCrossEncoder, SearchEngine, SearchParams
from vault.errors import ModelUnavailable

QUERY = "fruit"


def test_a_slow_model_is_stopped_and_search_answers(tmp_path: Path) -> None:
    """Slow on "car" only: the test pair (no "car") runs in milliseconds, the query's 120
    "car"s would run for minutes; the run is stopped at the timeout and the query keeps the
    fused order."""
    ce = OnnxCrossEncoder.load(build_slow(tmp_path, "car", 10**5), bound=WallClock(2.0))
    long = " ".join(["fruit apple"] * 200)
    corpus = make_corpus([(f"n{j}", f"{long} {'car ' * j}") for j in range(16)])
    plain = SearchEngine(SearchParams()).search(corpus, QUERY, k=16)
    res = SearchEngine(SearchParams(rerank_top_n=16, rerank_keep=16),
                       reranker=ce).search(corpus, QUERY, k=16)
    assert res.stages["rerank"] == "failed: the model ran over 2 s; fused order kept"
    assert [h.note for h in res.hits] == [h.note for h in plain.hits]


def test_a_model_slow_on_the_test_pair_is_refused_at_load(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable, match=r"over 0\.001 s"):
        # the test pair holds the tokenizer's largest id, "red", once in each of its 2 rows
        OnnxCrossEncoder.load(build_slow(tmp_path, "red", 10**9), bound=WallClock(0.001))


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan")])
def test_a_bound_must_be_above_zero(bad: float) -> None:
    with pytest.raises(ValueError, match="above 0"):
        WallClock(bad)
