"""Retrieval that can decline (retrieval/relevance.py): the evidence by hand, the decision's
monotonicity, and the judgement carried by every search result."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from vault import SearchEngine, SearchParams
from vault.retrieval import covered as rel
from vault.retrieval import relevance

from ..retrieval_fixtures import make_corpus


def test_coverage_by_hand() -> None:
    n = 10
    terms, dfs = ["tungsten", "melting", "point"], [0, 2, 5]
    w = [rel.idf(df, n) for df in dfs]
    got = rel.coverage(terms, dfs, n, ["the melting point of ice", "tungsten point"])
    assert math.isclose(got, max(w[1] + w[2], w[0] + w[2]) / sum(w))
    assert rel.coverage([], [], n, ["x"]) == 0.0
    assert rel.coverage(terms, dfs, n, []) == 0.0


def test_a_weekday_counts_only_in_a_text_that_says_it() -> None:
    """"on Monday" is a time to the date reader but a word a note can hold: it covers where
    the text says the day and is left out of the sum where it does not."""
    assert rel.query_terms("what broke on Monday?") == ["broke"]
    assert rel.day_words("what broke on Monday?") == ["monday"]
    assert rel.day_words("Monday plans") == []  # no date expression: a term already
    n, w = 9, [rel.idf(0, 9), rel.idf(2, 9)]
    said = rel.coverage(["broke"], [0], n, ["On Monday the auth service failed."],
                        ["monday"], [2])
    assert math.isclose(said, w[1] / sum(w))
    assert rel.coverage(["broke"], [0], n, ["The auth service failed."], ["monday"], [2]) == 0.0
    assert rel.coverage(["failed"], [1], n, ["The auth service failed."], ["monday"], [2]) == 1.0


def test_coverage_compares_stems_as_bm25_matches() -> None:
    """"failing" is covered by "fails", as BM25 (which stems) found it; a word and its
    inflection in one query count once."""
    assert rel.query_terms("why are the tests failing? the test fails") == ["tests", "failing"]
    assert rel.coverage(["tests", "failing"], [1, 1], 2,
                        ["The test fails when the cache is cold."]) == 1.0
    engine = SearchEngine.lexical(SearchParams())
    corpus = make_corpus([("Flaky", "The test fails when the cache is cold."),
                          ("Garden", "Tomatoes need sun and water.")])
    assert engine.search(corpus, "why are the tests failing?", 5).relevant
    assert not engine.search(corpus, "melting point of tungsten", 5).relevant


@given(st.floats(0, 1), st.floats(0, 1), st.floats(0, 0.5), st.floats(0, 0.5))
def test_more_evidence_never_turns_relevant_into_not(dense: float, cover: float,
                                                     dd: float, dc: float) -> None:
    a = relevance.judge(dense, cover)
    b = relevance.judge(min(1.0, dense + dd), min(1.0, cover + dc))
    assert b.probability >= a.probability
    assert not (a.relevant and not b.relevant)
    lex_a, lex_b = relevance.judge(None, cover), relevance.judge(None, min(1.0, cover + dc))
    assert lex_b.probability >= lex_a.probability


def test_every_search_says_whether_it_found_anything() -> None:
    corpus = make_corpus([("Billing", "Billing charges customers every month."),
                          ("Alice", "Alice owns the billing service and reviews invoices."),
                          ("Lunch", "Lunch on Tuesday with Bob at the noodle bar.")])
    engine = SearchEngine.lexical(SearchParams())
    found = engine.search(corpus, "who owns the billing service", 5)
    assert found.relevance is not None and found.relevant
    assert found.to_json()["relevant"] is True
    assert "relevance" in found.to_json(receipt=True)
    absent = engine.search(corpus, "melting point of tungsten", 5)
    assert absent.relevance is not None and not absent.relevant
    assert absent.to_json()["relevant"] is False
    assert absent.to_json(receipt=True)["relevance"]["gap"] < 0
    empty = engine.search(make_corpus([]), "anything", 5)
    assert empty.relevant is False


def test_a_note_found_by_its_alias_is_relevant() -> None:
    """The words of an alias are searched (BM25, conjunctive) as the note's own: a query that
    is one of its aliases is covered by them, not declined as if the vault lacked the topic."""
    corpus = make_corpus([("Hub", "Links to the rest of the vault."),
                          ("Lunch", "Lunch on Tuesday with Bob at the noodle bar."),
                          ("Billing", "Billing charges customers every month.")],
                         aliases=[("Central Station",), (), ()])
    found = SearchEngine.lexical(SearchParams()).search(corpus, "Central Station", 3)
    assert [corpus.paths[corpus.position(h.id)] for h in found.hits[:1]] == ["Hub.md"]
    assert found.relevant


PHRASES = ("what happened in {m}?", "what did we do in {m} 2024", "what was decided on 3 {m}, "
           "2023?", "what did we ship on {m} 13, 2023")


def test_a_month_counts_as_a_weekday_does() -> None:
    """"what happened in March?": the date reader takes "in March" out of the query as a
    time, and coverage was 0 even for the note saying "In March we moved the office", so the
    search declined (HOUSE40; the weekday rule of DEMO40 did not know months). Every month and
    phrasing: the month counts where a note says it, nowhere else; "may" is left out (the
    modal verb "we may paint" would count as the month)."""
    engine = SearchEngine.lexical(SearchParams())
    for month in ("january", "february", "march", "april", "june", "july", "august",
                  "september", "october", "november", "december"):
        said = make_corpus([("Office", f"In {month.title()} we moved the office to Leeds."),
                            ("Garden", "Tomatoes need sun and water."),
                            ("Kiln", "The kiln was fixed on Friday.")])
        unsaid = make_corpus([("Office", "We moved the office to Leeds."),
                              ("Garden", "Tomatoes need sun and water.")])
        for phrase in PHRASES:
            query = phrase.format(m=month.title())
            assert rel.day_words(query) == [month], query
            assert engine.search(said, query, 5).relevant, query
            assert not engine.search(unsaid, query, 5).relevant, query
    assert rel.day_words("what happened in May?") == []
    may = make_corpus([("Fence", "We may paint the fence later."),
                       ("Garden", "Tomatoes need sun and water.")])
    assert not engine.search(may, "what happened in May?", 5).relevant
