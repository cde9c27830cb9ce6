"""The plain baselines (bm25, dense, rrf) do not depend on the weights of the engine under
test: an engine that weights a baseline's channel 0 (and so never runs it) still reports the
same baseline rankings, in `rmh bench locomo|longmemeval` and in `rmh bench beir`. Before,
`--weights dense=0` was a KeyError in one and a silent dense baseline of zeros in the other."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.beir import load_beir, rankings
from bench.datasets import Haystack, Question
from bench.runner import score_haystack
from bench.synthetic_encoder import SyntheticEncoder
from vault import SearchEngine, SearchParams

from .test_beir import write_beir

TOPICS = ("billing invoices refund", "auth outage monday", "hiking trails denver",
          "sourdough bread yeast", "cardiac progenitors heart")


def _engine(**weights: float) -> SearchEngine:
    return SearchEngine(SearchParams(weights=weights), encoder=SyntheticEncoder())


def _haystack() -> Haystack:
    from bench.beir import corpus_of
    docs = [{"_id": f"d{i}", "title": t.split()[0], "text": f"{t} note {i} " + t[::-1]}
            for i, t in enumerate(TOPICS * 3)]
    questions = tuple(Question(f"q{i}", t.split()[1] + " " + t.split()[2], "c",
                               frozenset({i, i + len(TOPICS)}))
                      for i, t in enumerate(TOPICS))
    return Haystack("h", corpus_of(docs), questions)


@pytest.mark.parametrize("off", ["dense", "bm25"])
def test_bench_baselines_ignore_a_channel_weighted_zero(off: str) -> None:
    hay = _haystack()
    plain, _ = score_haystack(hay, _engine(), len(hay.questions))
    without, _ = score_haystack(hay, _engine(**{off: 0.0}), len(hay.questions))
    for m in ("bm25", "dense", "rrf"):
        assert without.per_method[m] == plain.per_method[m], m
    assert any(r["recall@10"] > 0 for r in plain.per_method["dense"])  # dense found something


@pytest.mark.parametrize("off", ["dense", "bm25"])
def test_beir_baselines_ignore_a_channel_weighted_zero(off: str, tmp_path: Path) -> None:
    data = load_beir(write_beir(tmp_path), "test")
    for q in data.queries:
        plain = rankings(_engine(), data.corpus, q.text)
        without = rankings(_engine(**{off: 0.0}), data.corpus, q.text)
        assert {m: without[m] for m in ("bm25", "dense", "rrf")} == \
            {m: plain[m] for m in ("bm25", "dense", "rrf")}, q.text
        assert plain["dense"], q.text  # the synthetic encoder scores every note
