"""A query longer than the vault's median note (fusion.long_query): the conjunctive channel
stands aside. The rule by hand, the median as an exact statistic of the index (kept through
edits and saved with it), and the pipeline where it acts and where it does not."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from vault.notes.text import content_terms, tokenize
from vault.retrieval.derived import build_derived
from vault.retrieval.fusion import long_query
from vault.retrieval.pipeline import SearchEngine, SearchParams
from vault.retrieval.signals import conjunctive
from vault.retrieval.signals.conjunctive import ConjunctiveIndex
from vault.shift import Shift

from ..retrieval_fixtures import incident_reports, make_corpus

W = {"bm25": 0.5, "dense": 1.0, "conjunctive": 1.0}


def test_the_rule_by_hand() -> None:
    out, report = long_query(W, 12, 11.0)
    assert out == {"bm25": 0.5, "dense": 1.0, "conjunctive": 0.0}
    assert report == (", conjunctive x0: the query's 12 content terms are more than the median "
                      "note's 11")
    assert long_query(W, 11, 11.0) == (W, "")  # as long as the median note: kept
    assert long_query(W, 3, 10.5) == (W, "")
    assert long_query(W, 11, 10.5)[1].endswith("the median note's 10.5")
    assert long_query({"bm25": 1.0}, 50, 1.0) == ({"bm25": 1.0}, "")  # no channel: nothing
    assert long_query({"conjunctive": 0.0}, 50, 1.0) == ({"conjunctive": 0.0}, "")


TEXTS = ["alpha beta gamma", "the of", "delta epsilon", "zeta eta theta iota", "kappa"]


def test_the_median_is_exact_and_follows_every_edit() -> None:
    def slow(texts: list[str]) -> float:
        return float(statistics.median(len(content_terms(tokenize(t))) for t in texts))

    idx = ConjunctiveIndex.from_texts(TEXTS)
    assert idx.terms.tolist() == [3, 0, 2, 4, 1] and idx.median_terms == slow(TEXTS) == 2.0
    new = ["one two three four five six", "seven"]  # position 1 replaced, a sixth note
    edited = idx.updated({1: (TEXTS[1], new[0]), 5: (None, new[1])}, 6)
    texts = [TEXTS[0], new[0], *TEXTS[2:], new[1]]
    assert edited.median_terms == slow(texts) == 2.5
    assert edited.terms.tolist() == ConjunctiveIndex.from_texts(texts).terms.tolist()
    gone = edited.removed(Shift((0, 3), 6), [texts[0], texts[3]])
    rest = [texts[1], texts[2], texts[4], texts[5]]
    assert gone.median_terms == slow(rest) == 1.5
    assert ConjunctiveIndex.from_texts([]).median_terms == 0.0


def test_the_median_is_saved_with_the_index(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    c = make_corpus(incident_reports()[:30])
    fresh = build_derived(c)
    build_derived(c, str(tmp_path))  # builds and saves

    def no_pass(*_: object) -> None:
        raise AssertionError("the notes were read again")

    monkeypatch.setattr(conjunctive, "coded", no_pass)
    monkeypatch.setattr(conjunctive, "term_count", no_pass)
    loaded = build_derived(c, str(tmp_path))  # reads the store: no pass over the notes
    assert loaded.conj.terms.tolist() == fresh.conj.terms.tolist()
    assert loaded.conj.median_terms == fresh.conj.median_terms > 0


LONG = ("which report tells of the auth service outage on Monday during the rollout and of the "
        "billing latency on Friday before the payments gateway crash")


@pytest.mark.parametrize("query,acts", [(LONG, True), ("auth outage on Monday", False)])
def test_the_pipeline_where_it_acts_and_where_not(query: str, acts: bool) -> None:
    corpus = make_corpus(incident_reports())
    engine = SearchEngine.lexical()
    median = engine._view(corpus).conj.median_terms
    assert (len(content_terms(tokenize(query))) > median) is acts
    got = engine.search(corpus, query, 10)
    without = SearchEngine.lexical(SearchParams(weights={"conjunctive": 0.0})).search(
        corpus, query, 10)
    conj = [h.receipt["signals"]["conjunctive"]["contribution"] for h in got.hits]
    if acts:
        assert "conjunctive x0: the query's" in got.stages["fusion"]
        assert all(c == 0 for c in conj)
        assert [(h.id, h.score) for h in got.hits] == [(h.id, h.score) for h in without.hits]
    else:
        assert "conjunctive x0" not in got.stages["fusion"]
        assert any(c > 0 for c in conj)
        assert [h.id for h in got.hits] != [h.id for h in without.hits] or any(
            a.score != b.score for a, b in zip(got.hits, without.hits, strict=True))
