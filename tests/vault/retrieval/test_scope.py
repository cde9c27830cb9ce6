"""Warmth and co-occurrence act only near the query's own top hits (retrieval/scope.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault.learning.edges import WeightedEdges
from vault.retrieval.pipeline import SearchEngine, SearchParams
from vault.retrieval.scope import near
from vault.retrieval.signals.graph import adjacency
from vault.retrieval.stages import incident

from ..retrieval_fixtures import make_corpus

# position 0 is the query's best hit; 1 is linked to it; 2 and 3 are found too, linked to
# nothing the query found first
NOTES = [
    ("Kestrel", "kestrel migration survey report"),
    ("Ridge", "kestrel sightings on the ridge"),
    ("Harbour", "kestrel seen near the harbour once"),
    ("Orchard", "kestrel mentioned in the orchard notes"),
]
EDGES = [(1, 0)]
QUERY = "kestrel migration survey"


def engine(scope: int, beta: float = 0.0) -> SearchEngine:
    weights = {"warmth": 0.5, "bm25": 1.0, "graph": 0.0 if beta == 0 else 0.5}
    return SearchEngine(SearchParams(weights=weights, scope=scope, beta=beta))


def test_only_a_note_linked_to_a_top_hit_is_warmed() -> None:
    c = make_corpus(NOTES, EDGES)
    warm = np.array([0.0, 1.0, 1.0, 1.0])
    scoped = {h.title: h.receipt for h in engine(1).search(c, QUERY, warmth=warm).hits}
    assert scoped["Ridge"]["warmth_raw"] == 1.0  # linked to the top hit "Kestrel"
    assert scoped["Harbour"]["warmth_raw"] == 0.0  # found, warm, but about other things
    assert scoped["Orchard"]["warmth_raw"] == 0.0
    everywhere = {h.title: h.receipt for h in engine(0).search(c, QUERY, warmth=warm).hits}
    assert everywhere["Harbour"]["warmth_raw"] == 1.0  # scope 0: the old global boost


def test_a_top_hit_alone_is_not_warmed_and_the_stage_says_why() -> None:
    c = make_corpus(NOTES, EDGES)
    res = engine(1).search(c, QUERY, warmth=np.array([1.0, 0.0, 0.0, 0.0]))
    assert res.stages["warmth"] == "skipped: nothing warm near the top 1"
    assert all(h.receipt["warmth"] == 0.0 for h in res.hits)
    base = SearchEngine(SearchParams(weights={"bm25": 1.0, "graph": 0.0})).search(c, QUERY)
    assert [(h.title, h.score) for h in res.hits] == [(h.title, h.score) for h in base.hits]


def test_a_co_occurrence_partner_of_a_top_hit_is_near() -> None:
    c = make_corpus(NOTES, ())  # no links: only the learned edge makes Orchard near
    cooc = WeightedEdges.of([(0, 3, 0.4)])
    warm = np.array([0.0, 1.0, 1.0, 1.0])
    hits = {h.title: h.receipt for h in engine(1).search(c, QUERY, warmth=warm,
                                                          cooccurrence=cooc).hits}
    assert hits["Orchard"]["warmth_raw"] == 1.0
    assert hits["Ridge"]["warmth_raw"] == hits["Harbour"]["warmth_raw"] == 0.0


def test_co_occurrence_edges_reach_pagerank_only_from_a_seed() -> None:
    c = make_corpus([("A", "alpha topic"), ("B", "unrelated words"), ("C", "more filler"),
                     ("D", "other filler")])
    far = WeightedEdges.of([(2, 3, 1.0)])  # neither end is a seed of "alpha"
    scoped = engine(5, beta=0.5).search(c, "alpha", cooccurrence=far)
    assert scoped.stages["graph"] == "skipped: no links"
    assert engine(0, beta=0.5).search(c, "alpha", cooccurrence=far).stages["graph"] \
        .startswith("ran")
    touching = WeightedEdges.of([(0, 1, 1.0), (2, 3, 1.0)])
    res = engine(5, beta=0.5).search(c, "alpha", cooccurrence=touching)
    assert res.stages["graph"].startswith("ran")
    assert [h.title for h in res.hits] == ["A", "B"]  # B through A's edge; C, D never


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7), st.floats(0.0, 1.0)),
                max_size=12),
       st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=10),
       st.sets(st.integers(0, 7), max_size=4))
def test_near_and_incident_by_definition(
    raw: list[tuple[int, int, float]], links: list[tuple[int, int]], tops: set[int]
) -> None:
    pairs = {(min(a, b), max(a, b)): w for a, b, w in raw if a != b}
    cooc = WeightedEdges.of([(a, b, w) for (a, b), w in sorted(pairs.items())])
    adj = adjacency(8, [(a, b) for a, b in links if a != b])
    t = np.array(sorted(tops), dtype=np.int64)
    got = near(adj, cooc, t, 8)
    linked = {b for a, b in links if a in tops and a != b} | {
        a for a, b in links if b in tops and a != b}
    partners = {b for (a, b), w in pairs.items() if a in tops and w > 0} | {
        a for (a, b), w in pairs.items() if b in tops and w > 0}
    assert set(np.flatnonzero(got).tolist()) == linked | partners
    seeds = np.zeros(8)
    seeds[t] = 1.0
    kept = incident(cooc, seeds, 5)
    assert kept is not None
    assert sorted(zip(kept.a.tolist(), kept.b.tolist(), strict=True)) == sorted(
        (a, b) for (a, b) in pairs if a in tops or b in tops)
    assert incident(cooc, seeds, 0) is cooc


def test_negative_weight_still_refused() -> None:
    c = make_corpus(NOTES, EDGES)
    with pytest.raises(ValueError):
        SearchEngine(SearchParams(weights={"warmth": -1.0})).search(
            c, QUERY, warmth=np.ones(4))


HOLD_NOTES = [("Vidal Works", "Vidal Works is an organisation founded in 1901."),
              ("Meeting 1", "They met at [[Vidal Works]] about the archive."),
              ("Meeting 2", "Another meeting at [[Vidal Works]] about the survey."),
              ("Filler", "nothing here")]
HOLD_QUERY = "When was Vidal Works set up?"


@pytest.mark.parametrize("learned", ["prior", "warmth"])
def test_a_learned_factor_cannot_lift_a_note_past_a_stronger_named_note(learned: str) -> None:
    c = make_corpus(HOLD_NOTES, [(1, 0), (2, 0)])
    boost = np.array([0.0, 1.0, 0.0, 0.0])  # Meeting 1: the strongest learned factor
    kw = {"prior": boost} if learned == "prior" else {"warmth": boost}
    for ratio, first in ((1.0, "Vidal Works"), (0.0, "Meeting 1")):  # 0: the hold is off
        eng = SearchEngine(SearchParams(weights={"protect": ratio, "warmth": 0.5}, scope=0))
        base = eng.search(c, HOLD_QUERY)
        assert [h.title for h in base.hits][:2] == ["Vidal Works", "Meeting 1"]
        hits = eng.search(c, HOLD_QUERY, **kw).hits  # type: ignore[arg-type]
        assert hits[0].title == first
        assert hits[1].title == ("Meeting 1" if first == "Vidal Works" else "Vidal Works")
        for h in hits:  # the receipt still sums to the score
            r = h.receipt
            parts = r["fused"] + r["context"] + r["named"] + r["warmth"] + r["prior"]
            assert parts == pytest.approx(h.score)


def test_a_named_note_agents_passed_over_holds_nothing_back() -> None:
    c = make_corpus(HOLD_NOTES, [(1, 0), (2, 0)])
    eng = SearchEngine(SearchParams())  # the defaults: protect ratio 1
    held = eng.search(c, HOLD_QUERY, prior=np.array([0.0, 1.0, 0.0, 0.0])).hits
    assert held[0].title == "Vidal Works"
    passed = eng.search(c, HOLD_QUERY, prior=np.array([-0.2, 1.0, 0.0, 0.0])).hits
    assert [h.title for h in passed][:2] == ["Meeting 1", "Vidal Works"]
