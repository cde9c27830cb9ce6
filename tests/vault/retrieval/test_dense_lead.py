"""The dense channel's first hit is not outvoted when it stands clearer of its head than every
lexical channel's first hit (lead.py): the statistic against a slow twin, the rule by hand,
the fused order it changes, and the pipeline where it acts (the real MiniLM encoder) and
where it does not."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault import MiniLmEncoder
from vault.retrieval.fusion import by_fused, fuse
from vault.retrieval.lead import dense_lead, first_gap
from vault.retrieval.pipeline import SearchEngine, SearchParams
from vault.storage.embeddings import MemoryEmbeddingCache

from ..retrieval_fixtures import make_corpus

W = {"bm25": 0.5, "dense": 1.0, "conjunctive": 1.0}


def slow_gap(x: list[float], m: int = 20) -> float:
    head = sorted((v for v in x if v > 0), reverse=True)[:m]
    if len(head) < 3 or head[0] == head[-1]:
        return 0.0
    return (head[0] - head[1]) / (head[0] - head[-1])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-1.0, 30.0, allow_nan=False), max_size=60))
def test_first_gap_equals_a_slow_twin(x: list[float]) -> None:
    assert first_gap(np.array(x, dtype=np.float64)) == pytest.approx(slow_gap(x), abs=1e-12)


def test_the_rule_by_hand() -> None:
    clear = np.array([0.9, 0.3, 0.25, 0.2, 0.1])  # gap (0.9 - 0.3) / 0.8 = 0.75
    flat = np.array([5.0, 4.8, 4.0, 2.0, 1.0])  # gap 0.2 / 4 = 0.05
    sig = {"bm25": flat, "dense": clear, "conjunctive": flat}
    out, report = dense_lead(W, sig)
    assert out == {"bm25": 0.5, "dense": 1.5, "conjunctive": 1.0}
    assert report == (", dense x1.50: its first hit stands clearer (0.75 of its head's range) "
                      "than bm25 0.05, conjunctive 0.05")
    assert dense_lead(W, {**sig, "conjunctive": clear}) == (W, "")  # a tie is not clearer
    assert dense_lead(W, {"bm25": flat, "dense": clear}) == (W, "")  # 0.5 does not outvote 1
    no_conj = {**W, "conjunctive": 0.0}  # a channel weighted 0 for this query is not counted
    assert dense_lead(no_conj, sig) == (no_conj, "")
    assert dense_lead({**W, "dense": 0.0}, sig) == ({**W, "dense": 0.0}, "")
    assert dense_lead(W, {"bm25": flat, "conjunctive": flat}) == (W, "")  # no dense channel


def test_the_lexical_side_no_longer_outvotes_a_clear_dense_first_hit() -> None:
    # note 0: dense's clear first hit, second in both lexical lists; note 1: first in both
    # lexical lists, far below in dense's
    dense = np.array([0.9, 0.2, 0.15, 0.1, 0.05])
    lex = np.array([1.5, 5.0, 1.0, 0.5, 0.2])  # gap 3.5 / 4.8 = 0.73 < dense's 0.82
    sig = {"bm25": lex, "dense": dense, "conjunctive": lex}
    main = fuse(sig, W, normalize="range", depth=1000)
    assert by_fused(main)[:2].tolist() == [1, 0]  # outvoted: 1.5 of lexical votes against 1
    weights, _ = dense_lead(W, sig)
    led = fuse(sig, weights, normalize="range", depth=1000)
    assert by_fused(led)[:2].tolist() == [0, 1]


NOTES = [
    ("Charging", "The handset's cell drains by noon: dim the screen and carry a power bank."),
    ("Bike", "How can I fix my bike life? Any tips on a flat tyre, a patch kit, a pump?"),
    ("Desk", "How can I fix my desk life? Any tips on a wobbly leg?"),
    ("Garden", "Tomatoes need sun and water every morning."),
    ("Cooking", "Bake the bread at two hundred degrees for forty minutes."),
    ("Travel", "The train to Lyon leaves at nine from platform four."),
    ("Music", "Practice scales on the piano for twenty minutes a day."),
    ("Books", "A novel about a lighthouse keeper and his daughter."),
]


@pytest.mark.parametrize("query,acts", [("How can I fix my phone battery life? Any tips?", True),
                                        ("the train to Lyon at nine", False)])
def test_the_pipeline_where_it_acts_and_where_not(query: str, acts: bool) -> None:
    corpus = make_corpus(NOTES)
    enc, cache = MiniLmEncoder(), MemoryEmbeddingCache()
    got = SearchEngine(SearchParams(), encoder=enc, cache=cache).search(corpus, query, 8)
    fixed = SearchEngine(SearchParams(weights={"dense": 1.5} if acts else {}), encoder=enc,
                         cache=cache).search(corpus, query, 8)
    assert ("dense x1.50: its first hit stands clearer" in got.stages["fusion"]) is acts
    # acting, the query ranks as with dense weighted 1.5 throughout; else as configured
    assert [(h.id, h.score) for h in got.hits] == [(h.id, h.score) for h in fixed.hits]
