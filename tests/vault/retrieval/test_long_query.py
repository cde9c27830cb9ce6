"""A query longer than the vault's typical note (fusion.long_query): the conjunctive channel
stands aside. The rule by hand, the length-weighted median as an exact statistic of the index
(kept through edits and saved with it), the pipeline where it acts and where it does not, and
a vault of stub notes where a short question keeps the channel."""

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
    assert report == (", conjunctive x0: the query's 12 content terms are more than the "
                      "typical note's 11")
    assert long_query(W, 11, 11.0) == (W, "")  # as long as the typical note: kept
    assert long_query(W, 3, 10.5) == (W, "")
    assert long_query(W, 11, 10.5)[1].endswith("the typical note's 10.5")
    assert long_query({"bm25": 1.0}, 50, 1.0) == ({"bm25": 1.0}, "")  # no channel: nothing
    assert long_query({"conjunctive": 0.0}, 50, 1.0) == ({"conjunctive": 0.0}, "")


TEXTS = ["alpha beta gamma", "the of", "delta epsilon", "zeta eta theta iota", "kappa"]


def test_the_median_is_exact_and_follows_every_edit() -> None:
    def slow(texts: list[str]) -> float:  # each note's length counted once per term it holds
        counts = [len(content_terms(tokenize(t))) for t in texts]
        return float(statistics.median_low([k for k in counts for _ in range(k)]))

    idx = ConjunctiveIndex.from_texts(TEXTS)
    assert idx.terms.tolist() == [3, 0, 2, 4, 1] and idx.occurrence_median == slow(TEXTS) == 3.0
    new = ["one two three four five six", "seven"]  # position 1 replaced, a sixth note
    edited = idx.updated({1: (TEXTS[1], new[0]), 5: (None, new[1])}, 6)
    texts = [TEXTS[0], new[0], *TEXTS[2:], new[1]]
    assert edited.occurrence_median == slow(texts) == 4.0
    assert edited.terms.tolist() == ConjunctiveIndex.from_texts(texts).terms.tolist()
    gone = edited.removed(Shift((0, 3), 6), [texts[0], texts[3]])
    rest = [texts[1], texts[2], texts[4], texts[5]]
    assert gone.occurrence_median == slow(rest) == 6.0
    assert ConjunctiveIndex.from_texts([]).occurrence_median == 0.0


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
    assert loaded.conj.occurrence_median == fresh.conj.occurrence_median > 0


LONG = ("which report tells of the auth service outage on Monday during the rollout and of the "
        "billing latency on Friday before the payments gateway crash")


@pytest.mark.parametrize("query,acts", [(LONG, True), ("auth outage on Monday", False)])
def test_the_pipeline_where_it_acts_and_where_not(query: str, acts: bool) -> None:
    corpus = make_corpus(incident_reports())
    engine = SearchEngine.lexical()
    median = engine._view(corpus).conj.occurrence_median
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


def stubs(n: int) -> list[tuple[str, str]]:
    """n stub notes as Obsidian vaults hold them: empty placeholders (a dangling link
    followed), daily notes of one line, tag hubs."""
    kinds = [("placeholder {i}", ""), ("2024-03-{d:02d}", "standup"), ("hub {i}", "#incident #ops")]
    return [(kinds[i % 3][0].format(i=i, d=1 + i % 28), kinds[i % 3][1]) for i in range(n)]


def test_stub_notes_do_not_take_the_channel_from_a_short_question() -> None:
    """A vault of 125 reports (10 content terms each) and 250 stubs (2-4): the plain median
    note is a stub of 4 terms, so a question of 5 would lose the channel (main, session 38);
    the length-weighted median is a report's length: the stubs hold a third of the terms."""
    notes = incident_reports() + stubs(250)
    corpus = make_corpus(notes)
    terms = [len(content_terms(tokenize(f"{t} {b}"))) for t, b in notes]
    query = "auth service outage on Monday rollout"
    q = len(content_terms(tokenize(query)))
    assert statistics.median(terms) < q <= min(terms[:125])
    engine = SearchEngine.lexical()
    assert engine._view(corpus).conj.occurrence_median >= q
    got = engine.search(corpus, query, 10)
    assert "conjunctive x0" not in got.stages["fusion"]
    assert any(h.receipt["signals"]["conjunctive"]["contribution"] > 0 for h in got.hits)


def test_the_occurrence_median_by_hand() -> None:
    """[3, 0, 2, 4, 1] terms: 10 occurrences; the notes of at most 3 terms hold 6 >= 5."""
    assert ConjunctiveIndex.from_texts(TEXTS).occurrence_median == 3.0
    eight = "apple banana cherry damson elder fig grape hazel"
    idx = ConjunctiveIndex.from_texts([eight, "", "", "", "kiwi"])  # 8 of the 9 in one note
    assert idx.terms.tolist() == [8, 0, 0, 0, 1] and idx.occurrence_median == 8.0
    assert ConjunctiveIndex.from_texts(["", "the of"]).occurrence_median == 0.0
