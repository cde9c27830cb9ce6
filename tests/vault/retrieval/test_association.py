"""Query-dependent association (retrieval/association.py, issue 31 item 6): co-use and spreading
activation start from THIS query's top hits; a note linked or co-used only with other notes
gets nothing; weight 0 changes nothing; the result does not depend on input order."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault.learning.edges import WeightedEdges
from vault.retrieval.association import (
    association_stage,
    couse_values,
    seeds_of,
    spread_values,
)
from vault.retrieval.csr import Csr
from vault.retrieval.pipeline import SearchEngine, SearchParams

from ..retrieval_fixtures import make_corpus


def links_of(n: int, pairs: list[tuple[int, int]]) -> Csr:
    """An undirected link matrix over positions."""
    from scipy import sparse

    a = [p for p, _ in pairs] + [q for _, q in pairs]
    b = [q for _, q in pairs] + [p for p, _ in pairs]
    m = sparse.csr_matrix((np.ones(len(a)), (a, b)), shape=(n, n))
    m.sum_duplicates()
    m.sort_indices()
    return Csr.from_scipy(m)


def test_only_the_seeds_neighbours_get_co_use_credit() -> None:
    # positions 0, 1 are this query's hits; 4-5 share an edge, but neither is a seed
    score = np.array([1.0, 0.5, 0.0, 0.0, 0.1, 0.05])
    t, sigma = seeds_of(score, np.ones(6, np.bool_), 2)
    assert t.tolist() == [0, 1] and sigma.tolist() == [1.0, 0.5]
    edges = WeightedEdges.of([(0, 2, 0.8), (1, 3, 0.4), (4, 5, 1.0)])
    useful = np.ones(6)
    x = couse_values(edges, t, sigma, useful)
    assert np.flatnonzero(x).tolist() == [2, 3]
    assert x[2] == 1.0 * 0.8 / 1.5 and x[3] == 0.5 * 0.4 / 1.5
    assert x[5] == 0.0  # co-used with a different query's hits: nothing
    # a neighbour that was never used (q+ = 0) gets nothing either
    assert couse_values(edges, t, sigma, np.array([1, 1, 0, 1, 1, 1.0]))[2] == 0.0


def test_spread_needs_a_link_to_a_seed_and_an_activation() -> None:
    links = links_of(5, [(0, 2), (3, 4)])
    t, sigma = np.array([0, 1]), np.array([1.0, 1.0])
    act = np.array([0.0, 0.0, 0.6, 0.9, 0.9])  # 3 and 4 are warm but linked only to each other
    x = spread_values(links, t, sigma, act)
    assert np.flatnonzero(x).tolist() == [2] and x[2] == 0.5 * 0.6


def test_determinism_under_permuted_edges() -> None:
    rng = np.random.default_rng(7)
    n = 40
    triples = sorted({(int(min(a, b)), int(max(a, b))) for a, b in rng.integers(0, n, (120, 2))
                      if a != b})
    weighted = [(a, b, float(w)) for (a, b), w in zip(triples, rng.random(len(triples)),
                                                        strict=True)]
    score = rng.random(n)
    useful = rng.random(n)
    links = links_of(n, [(a, b) for a, b, _ in weighted[:30]])
    runs = []
    for seed in range(4):
        order = np.random.default_rng(seed).permutation(len(weighted))
        edges = WeightedEdges.of([weighted[i] for i in order])
        runs.append(association_stage(score, np.ones(n, np.bool_), np.zeros(n, np.bool_),
                                      {"couse": 0.5, "spread": 0.5}, 5, 60, edges, links,
                                      useful, None, useful))
    for report, out, assoc in runs[1:]:
        assert report == runs[0][0]
        assert out.tobytes() == runs[0][1].tobytes()
        assert assoc is not None and runs[0][2] is not None
        assert [assoc.via(i) for i in range(n)] == [runs[0][2].via(i) for i in range(n)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=8, max_size=8),
       st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7), st.floats(0.0, 1.0)),
                max_size=20),
       st.permutations(list(range(8))))
def test_relabelled_notes_get_the_same_values(score: list[float],
                                              raw: list[tuple[int, int, float]],
                                              perm: list[int]) -> None:
    """Moving every note to another position (distinct scores) moves its value with it."""
    s = np.array(score) + np.arange(8) * 1e-6  # distinct, so the seeds do not hang on ties
    pairs = {(min(a, b), max(a, b)): w for a, b, w in raw if a != b}
    edges = WeightedEdges.of([(a, b, w) for (a, b), w in sorted(pairs.items())])
    useful = np.linspace(0.1, 0.8, 8)
    t, sigma = seeds_of(s, np.ones(8, np.bool_), 3)
    x = couse_values(edges, t, sigma, useful)
    p = np.array(perm)  # note at position i moves to p[i]
    s2, u2 = np.empty(8), np.empty(8)
    s2[p], u2[p] = s, useful
    e2 = WeightedEdges.of([(int(p[a]), int(p[b]), w) for (a, b), w in sorted(pairs.items())])
    t2, sig2 = seeds_of(s2, np.ones(8, np.bool_), 3)
    x2 = couse_values(e2, t2, sig2, u2)
    assert np.allclose(x2[p], x)
    assert np.all((x >= 0) & (x <= 1))


NOTES = [("Ilse", "Ilse lives by the river."),
         ("Walk", "The spring walk by the river was cold. See [[Ducks]]."),
         ("Ducks", "Ducks came in the spring."),
         ("Filler", "nothing here about anything"),
         ("Garden", "the garden by the river was dug in autumn")]
QUERY = "spring walk by the river"


def test_through_the_engine_weight_0_is_identical_and_on_lifts_only_neighbours() -> None:
    c = make_corpus(NOTES, [(1, 2)])  # Walk -> Ducks (positions)
    prior = np.array([0.0, 0.0, 0.3, 0.0, 0.9])  # Garden was used, but for other queries
    edges = WeightedEdges.of([(1, 2, 0.9), (3, 4, 1.0)])  # Walk-Ducks; Filler-Garden
    warmth = np.array([0.0, 0.0, 0.5, 0.0, 1.0])
    off = SearchEngine(SearchParams())
    base = off.search(c, QUERY, prior=prior, cooccurrence=edges, warmth=warmth)
    assert "association" not in base.stages
    zero = SearchEngine(SearchParams(weights={"couse": 0.0, "spread": 0.0}))
    same = zero.search(c, QUERY, prior=prior, cooccurrence=edges, warmth=warmth)
    assert [(h.title, h.score) for h in same.hits] == [(h.title, h.score) for h in base.hits]
    on = SearchEngine(SearchParams(weights={"couse": 1.0, "spread": 1.0}, scope=2))
    got = on.search(c, QUERY, prior=prior, cooccurrence=edges, warmth=warmth)
    assert got.stages["association"].startswith("ran (seeds")
    by = {h.title: h for h in got.hits}
    was = {h.title: h for h in base.hits}
    assert by["Ducks"].score > was["Ducks"].score
    r = by["Ducks"].receipt["association"]
    assert r["via"] == [2]  # the note id of "Walk", the seed that credited it
    assert r["couse"]["contribution"] > 0 and r["spread"]["contribution"] > 0
    total = r["couse"]["contribution"] + r["spread"]["contribution"]
    assert abs(by["Ducks"].receipt["warmth"] - total) < 1e-12  # booked as the learned lift
    assert "association" not in by["Garden"].receipt  # used, but co-used with a non-seed
    for h in got.hits:
        if h.title != "Ducks":
            assert "association" not in h.receipt


def test_nothing_lifted_passes_a_named_note_ranked_above() -> None:
    notes = [("Ilse", "Ilse walked."), ("Turn", "Ilse: the spring walk by the river."),
             ("Other", "the river")]
    c = make_corpus(notes, [])
    q = "Ilse spring walk river"
    base = SearchEngine(SearchParams()).search(c, q)
    order = [h.title for h in base.hits]
    named = order.index("Ilse")
    below = order[named + 1:]
    assert below, order
    edges = WeightedEdges.of([(0, 1, 1.0), (0, 2, 1.0), (1, 2, 1.0)])
    free = np.array([0.0, 1.0, 1.0])  # used for other topics: q+ = 1, held like the channel
    got = SearchEngine(SearchParams(weights={"couse": 5.0})).search(c, q, free_prior=free,
                                                                     cooccurrence=edges)
    assert "0 held" not in got.stages["association"], got.stages
    titles = [h.title for h in got.hits]
    for t in below:
        assert titles.index(t) > titles.index("Ilse")


def test_bad_input_is_a_clear_error() -> None:
    score, ok = np.array([1.0, 0.5, 0.2]), np.ones(3, np.bool_)
    args = (score, ok, ~ok, {"couse": 1.0}, 2, 60, WeightedEdges.empty(), links_of(3, []))
    with pytest.raises(ValueError, match="warmth has 2 entries for 3 notes"):
        association_stage(*args, None, None, np.zeros(2))
    with pytest.raises(ValueError, match="learned vectors have 4 entries"):
        association_stage(*args, np.zeros(4), None, None)
    with pytest.raises(ValueError, match=">= 0"):
        association_stage(score, ok, ~ok, {"couse": -1.0}, 2, 60, None, links_of(3, []),
                          None, None, None)
