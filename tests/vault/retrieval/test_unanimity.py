"""The note BM25 and dense both rank first is the search's first hit (unanimity.py): generated
vaults and questions through the whole pipeline, the rule by hand, and where it stands aside
(a named note)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.synthetic_encoder import SyntheticEncoder
from vault.retrieval.pipeline import SearchEngine, SearchParams
from vault.retrieval.unanimity import first, first_of_both

from ..retrieval_fixtures import make_corpus

WORDS = ("auth outage monday rollout billing latency friday gateway crash payments queue "
         "deploy cache token expiry retry storm pager night database index").split()
ENCODER = SyntheticEncoder()

notes = st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12), min_size=2,
                 max_size=14)
questions = st.lists(st.sampled_from(WORDS), min_size=2, max_size=5)


def first_by(scores: np.ndarray, paths: list[str]) -> int | None:
    """The slow twin of a channel's first note: best positive score, ties by path."""
    cand = [i for i in range(len(paths)) if scores[i] > 0]
    return min(cand, key=lambda i: (-scores[i], paths[i])) if cand else None


@settings(max_examples=150, deadline=None)
@given(notes, questions)
def test_the_common_first_of_bm25_and_dense_is_first(bodies: list[list[str]],
                                                      question: list[str]) -> None:
    # identifier titles: the query names no note, and the encoder reads the body alone
    corpus = make_corpus([(f"n{i:03d}", " ".join(b)) for i, b in enumerate(bodies)])
    query = " ".join(question)
    engine = SearchEngine(SearchParams(), encoder=ENCODER)  # a fresh one: its own derived
    s = engine.score(corpus, query)
    paths = list(corpus.paths)
    b, d = first_by(s.signals["bm25"], paths), first_by(s.signals["dense"], paths)
    got = engine.search(corpus, query, 10)
    if b is not None and b == d:
        assert got.hits[0].note == paths[b], (got.stages, [h.note for h in got.hits])
        assert got.stages["unanimity"].startswith("ran")


def test_the_rule_by_hand() -> None:
    none = np.zeros(6, dtype=np.bool_)
    assert first([4, 2, 5], 5, none) == ([5, 4, 2], "ran: bm25's and dense's first, from 3")
    assert first([5, 4], 5, none) == ([5, 4], "ran: bm25's and dense's first is first")
    assert first([4, 2], None, none)[0] == [4, 2]
    assert first([4, 2], 5, none) == ([4, 2], "skipped: their first is not in the head")
    named = none.copy()
    named[4] = True  # a named (or learned, or dated) note above it: the rule stands aside
    assert first([4, 2, 5], 5, named)[0] == [4, 2, 5]
    named[:] = False
    named[1] = True  # below it: no matter
    assert first([4, 2, 5, 1], 5, named)[0] == [5, 4, 2, 1]
    sig = {"bm25": np.array([0.0, 2.0, 2.0, 1.0]), "dense": np.array([0.1, 0.9, 0.8, 0.95])}
    every = np.ones(4, dtype=np.bool_)
    paths = ["d.md", "c.md", "b.md", "a.md"]
    assert first_of_both(sig, every, paths=paths) is None  # bm25: b.md (tie by path); dense: a
    sig["dense"][:] = [0.1, 0.8, 0.9, 0.5]
    assert first_of_both(sig, every, paths=paths) == 2  # both b.md
    every[2] = False  # b.md archived: bm25's first eligible is c.md, dense's too
    assert first_of_both(sig, every, paths=paths) == 1
    assert first_of_both({"bm25": sig["bm25"]}, every) is None  # no dense channel
