"""The SearchEngine pipeline: stages, receipts, archive, prior bounds, caching, determinism."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from vault.learning.edges import WeightedEdges
from vault.retrieval.pipeline import SearchEngine, SearchParams
from vault.retrieval.signals.dense import DenseParams
from vault.storage.corpus import Corpus, CorpusDelta

from ..retrieval_fixtures import make_corpus
from .dense_history import Counting

NOTES = [
    ("Caroline", "Caroline is a counsellor."),
    ("Support group", "[[Caroline]] went to the LGBTQ support group on Monday."),
    ("Painting", "Melanie painted a sunrise by the lake."),
    ("Auth outage", "On Monday the auth service suffered an outage during the rollout."),
    ("Auth latency", "On Tuesday the auth service suffered latency during the rollout."),
    ("Old", "An archived note about the support group."),
]
EDGES = [(1, 0), (2, 0)]


def corpus(generation: int = 1) -> Corpus:
    return make_corpus(NOTES, EDGES, archived=[False] * 5 + [True], generation=generation)


def test_lexical_engine_stages_and_receipts() -> None:
    c = corpus()
    warm_on = SearchParams(weights={"warmth": 0.1})  # warmth is off by default; on, it is zero
    res = SearchEngine.lexical(warm_on).search(c, "When did Caroline go to the support group?",
                                               k=3)
    assert res.hits[0].title == "Support group"
    assert res.stages["dense"] == "skipped: no encoder"
    assert res.stages["warmth"] == "skipped: zero"
    assert res.stages["prior"] == "skipped: zero"
    assert res.stages["rerank"] == "skipped: no model"
    assert res.stages["graph"].startswith("ran (2 named")
    r = res.hits[0].receipt
    assert set(r["signals"]) == {"bm25", "conjunctive", "graph"}
    assert r["signals"]["bm25"]["rank"] == 0 and r["signals"]["bm25"]["raw"] > 0
    total = sum(s["contribution"] for s in r["signals"].values())
    assert abs(total - r["fused"]) < 1e-12
    assert res.stages["named"] == "ran (2 named, 3 linked, scale 0.5)"
    assert r["named"] == pytest.approx(0.5 * (r["fused"] + r["context"]))  # linked to Caroline
    assert r["fused"] + r["context"] + r["named"] == pytest.approx(res.hits[0].score)
    assert r["prior"] == 0
    assert r["warmth"] == 0 and r["warmth_raw"] == 0
    assert all(h.title != "Old" for h in res.hits)  # archived never ranked by default
    json.dumps(res.to_json())  # receipts are JSON-safe


def test_include_archived_and_external_archive_mask() -> None:
    c = corpus()
    q = "archived support group"
    assert "Old" in [h.title for h in
                     SearchEngine(SearchParams(include_archived=True)).search(c, q).hits]
    mask = np.array([False, True, False, False, False, False])
    hits = SearchEngine.lexical().search(c, q, archived=mask).hits
    assert "Support group" not in [h.title for h in hits]


def test_notes_no_signal_found_are_not_hits() -> None:
    c = corpus()
    assert SearchEngine.lexical().search(c, "zebra").hits == ()
    hits = SearchEngine.lexical().search(c, "painted sunrise", k=10).hits
    assert hits and all(h.score > 0 for h in hits) and hits[0].title == "Painting"
    assert len(hits) < 5  # the notes without "painted"/"sunrise" (and unlinked) are not hits


def test_context_two_hops_by_hand() -> None:
    # A chain a - b - c - d plus an archived hub h linked to a and d. Only "a" matches.
    notes = [("a", "zebra stripes"), ("b", "one"), ("c", "two"), ("d", "three"), ("h", "hub")]
    c = make_corpus(notes, [(1, 0), (2, 1), (3, 2), (4, 0), (4, 3)],
                    archived=[False] * 4 + [True])
    # the unprotected lending (protect 0); stage 5b is checked in test_link_stages.py
    eng = SearchEngine.lexical(SearchParams(weights={"graph": 0.0, "context": 0.4,
                                                     "protect": 0.0}))
    s = eng.score(c, "zebra")
    f, g = s.fusion.fused, 0.4
    assert f[0] > 0 and not f[1:].any()
    # ctx = f + g N(f) + g^2 N(N(f)); the archived hub lends at neither hop, so "d" (two
    # hops from a through the hub, three along the chain) gets nothing. The hub itself
    # receives (a neighbour of a) but, archived, is never a hit.
    want = np.array([g * g * f[0], g * f[0], g * g * f[0], 0.0, g * f[0]])
    np.testing.assert_allclose(s.context, want, rtol=1e-12, atol=0)
    assert s.stages["context"] == "ran (weight 0.4, two hops)"
    hits = eng.search(c, "zebra", k=5).hits
    assert [h.title for h in hits] == ["a", "b", "c"]
    assert all(h.receipt["fused"] + h.receipt["context"] == h.score for h in hits)


def test_conjunctive_separates_days() -> None:
    res = SearchEngine.lexical().search(corpus(), "auth problem on Tuesday", k=2)
    assert res.hits[0].title == "Auth latency"


def test_weight_zero_skips_and_warmth_and_prior_enter() -> None:
    c = corpus()
    # scope 0: warmth everywhere (the boost's arithmetic; tests/vault/retrieval/test_scope.py
    # for warmth scoped to the query's top hits)
    eng = SearchEngine(SearchParams(weights={"graph": 0.0, "warmth": 0.3, "bm25": 1.0}, scope=0))
    base = eng.search(c, "auth rollout", k=5)
    assert [h.title for h in base.hits] == ["Auth latency", "Auth outage"]  # a near tie
    res = eng.search(c, "auth rollout", k=5, warmth=np.array([0, 0, 0, 0.5, 0, 0]))
    assert res.stages["graph"] == "skipped: weight 0"
    assert res.stages["warmth"] == "ran (scale 0.3, everywhere)"
    assert res.hits[0].title == "Auth outage"  # the warm found note moves up
    prior = np.array([0, 0, 0, 5.0, -5.0, 0])  # clipped to [-1, 1]
    res = eng.search(c, "auth rollout", k=5, prior=prior)
    fused = {h.title: h.receipt["fused"] for h in base.hits}
    for h in res.hits:
        assert abs(h.receipt["prior"]) <= 0.2 * fused[h.title] + 1e-15
    assert res.stages["prior"].startswith("ran")


def test_warm_note_no_query_signal_found_is_not_a_hit() -> None:
    c = corpus()
    eng = SearchEngine(SearchParams(weights={"warmth": 1.0}))
    hot = np.ones(6)  # every note as warm as it can be
    assert eng.search(c, "zebra", warmth=hot).hits == ()
    q = "painted sunrise"
    cold = [h.title for h in eng.search(c, q, k=10).hits]
    warm = eng.search(c, q, k=10, warmth=np.array([1.0, 1.0, 0, 1.0, 1.0, 1.0]))
    assert warm.stages["warmth"].startswith("ran")
    assert sorted(h.title for h in warm.hits) == sorted(cold)  # the hit set is unchanged
    assert "Auth outage" not in cold


def test_warm_found_note_moves_up_by_a_bounded_boost() -> None:
    c = corpus()
    eng = SearchEngine(SearchParams(weights={"graph": 0.0, "warmth": 0.3, "bm25": 1.0}, scope=0))
    q = "auth rollout Monday"
    base = {h.title: h for h in eng.search(c, q, k=5).hits}
    assert list(base)[:2] == ["Auth outage", "Auth latency"]
    a = np.array([0, 0, 0, 0, 0.8, 0])
    res = eng.search(c, q, k=5, warmth=a)
    hits = {h.title: h for h in res.hits}
    lat = hits["Auth latency"]
    assert lat.receipt["warmth_raw"] == 0.8
    assert lat.score == pytest.approx(base["Auth latency"].score * (1 + 0.3 * 0.8))
    assert lat.receipt["warmth"] == pytest.approx(0.3 * 0.8 * base["Auth latency"].score)
    assert hits["Auth outage"].score == base["Auth outage"].score  # cold notes keep their score
    for h in res.hits:
        r = h.receipt
        assert r["fused"] + r["context"] + r["warmth"] + r["prior"] == pytest.approx(h.score)
    # bounded: even full warmth (x1.3) does not lift a note over a much stronger match (x1.7)
    full = eng.search(c, q, k=5, warmth=np.array([0, 0, 0, 0, 1.0, 0]))
    assert [h.title for h in full.hits][:2] == ["Auth outage", "Auth latency"]
    with pytest.raises(ValueError):
        SearchEngine(SearchParams(weights={"warmth": -1.0})).search(c, "auth", warmth=a)


def test_derived_structures_cached_per_generation() -> None:
    eng = SearchEngine.lexical()
    c1 = corpus(1)
    eng.search(c1, "auth")
    first = eng._derived
    eng.search(c1, "support")
    assert eng._derived is first
    eng.search(corpus(2), "auth")
    assert eng._derived is not first


def test_cooccurrence_edges_reach_the_graph() -> None:
    c = make_corpus([("A", "alpha topic"), ("B", "unrelated words"), ("C", "more filler")])
    eng = SearchEngine.lexical(SearchParams(beta=0.5))  # co-occurrence is off by default
    assert eng.search(c, "alpha").stages["graph"] == "skipped: no links"
    res = eng.search(c, "alpha", cooccurrence=WeightedEdges.of([(0, 1, 1.0)]))
    assert res.stages["graph"].startswith("ran")
    assert [h.title for h in res.hits[:2]] == ["A", "B"]


def test_empty_corpus() -> None:
    res = SearchEngine.lexical().search(make_corpus([]), "anything")
    assert res.hits == ()


SCRIPT = """
import json, sys
sys.path.insert(0, {root!r})
sys.path.insert(0, {tests!r})
from vault.retrieval.encoders import MiniLmEncoder
from vault.retrieval.pipeline import SearchEngine
from retrieval_fixtures import incident_reports, make_corpus
c = make_corpus(incident_reports()[:40], [(i, (i * 7) % 40) for i in range(40)])
eng = SearchEngine(encoder=MiniLmEncoder())
for q in ("auth outage on Monday", "What went wrong with billing?", "rollout"):
    print(json.dumps(eng.search(c, q, k=10).to_json(receipt=True), sort_keys=True))
"""


@pytest.mark.slow
def test_byte_identical_under_two_hash_seeds() -> None:
    root = str(Path(__file__).resolve().parents[3])
    code = SCRIPT.format(root=root, tests=str(Path(__file__).resolve().parents[1]))
    outs = []
    for seed in ("1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             timeout=120, check=True)
        outs.append(run.stdout)
    assert outs[0] == outs[1]
    assert outs[0].count(b'"dense": {') >= 10  # the dense stage ran inside


def test_named_stage_lifts_named_notes_and_their_links_only() -> None:
    notes = [
        ("Alice", "Alice leads the platform team."),
        ("Standup 1", "[[Alice]] said the deploy pipeline is flaky."),
        ("Standup 2", "Bob said the deploy pipeline is flaky."),
        ("Lunch", "Nothing about deploys here, just noodles."),
    ]
    c = make_corpus(notes, [(1, 0)])
    on = SearchEngine.lexical().score(c, "what did Alice say about the deploy pipeline")
    off = SearchEngine.lexical(SearchParams(weights={"named": 0.0})).score(
        c, "what did Alice say about the deploy pipeline"
    )
    assert on.stages["named"] == "ran (1 named, 2 linked, scale 0.5)"
    assert off.stages["named"] == "skipped: weight 0"
    lifted = on.final / np.where(off.final > 0, off.final, 1.0)
    np.testing.assert_allclose(lifted[[0, 1]], 1.5)  # Alice and the note linking her
    np.testing.assert_allclose(lifted[[2]], 1.0)  # Bob's identical sentence is not lifted
    assert on.final[3] == off.final[3]
    none = SearchEngine.lexical().score(c, "deploy pipeline")
    assert none.stages["named"] == "skipped: nothing named"
    with pytest.raises(ValueError, match="boost scale"):
        SearchEngine.lexical(SearchParams(weights={"named": -1.0})).score(c, "Alice")


def test_a_removal_keeps_the_dense_index_and_ranks_as_a_fresh_engine() -> None:
    """Notes removed (and one edited) between two searches: the engine's dense index follows
    the delta in place (signals/dense_update.py: only the query and the edited note are
    embedded, the base is the same array) and every score equals a fresh engine's."""
    notes = [(f"note {i}", f"the {w} team fixed the {v} on day {i % 7}")
             for i, (w, v) in enumerate(zip(["auth", "billing", "cache", "deploy"] * 5,
                                            ["queue", "schema", "outage", "rollback"] * 5,
                                            strict=True))]
    enc = Counting()
    params = SearchParams(dense=DenseParams(compact_fraction=0.5))  # no compaction here
    engine = SearchEngine(params, encoder=enc, cache=None)
    first = make_corpus(notes)
    engine.score(first, "billing schema")
    dense = engine._derived.dense if engine._derived else None
    assert dense is not None
    kept = [n for i, n in enumerate(notes) if i not in (0, 7, 19)]
    kept[3] = ("note 4", "a zebra rollout broke billing")
    nxt = replace(make_corpus(kept, generation=2),
                  delta=CorpusDelta(1, 20, (3,), (3,), removed=(0, 7, 19)))
    enc.encoded = 0
    got = engine.score(nxt, "zebra billing")
    assert enc.encoded == 2  # the query and the edited note's one chunk
    now = engine._derived.dense if engine._derived else None
    assert now is not None and now.matrix is dense.matrix
    fresh = SearchEngine(params, encoder=Counting(), cache=None).score(nxt, "zebra billing")
    assert set(got.signals) == set(fresh.signals) and "dense" in got.signals
    for name in got.signals:
        assert np.array_equal(got.signals[name], fresh.signals[name]), name
    assert np.array_equal(got.final, fresh.final)
    assert int(np.argmax(got.final)) == 3
