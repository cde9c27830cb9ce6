"""The conjunctive redundancy gate (fusion.overlap, fusion.gate): a slow obvious twin over
generated score vectors, a hand-computed case, and its place in the pipeline's report."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault.retrieval.fusion import gate, overlap, top


def slow_overlap(a: list[float], b: list[float], m: int) -> float:
    def head(x: list[float]) -> list[int]:
        ranked = sorted((i for i in range(len(x)) if x[i] > 0), key=lambda i: (-x[i], i))
        return ranked[:m]

    ha, hb = head(a), head(b)
    if not ha or not hb:
        return 0.0
    return len(set(ha) & set(hb)) / min(m, len(ha), len(hb))


scores = st.lists(st.sampled_from([0.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.25, -1.0]), min_size=1,
                  max_size=60)


@settings(max_examples=200, deadline=None)
@given(scores, scores, st.integers(1, 25))
def test_overlap_matches_the_slow_twin(a: list[float], b: list[float], m: int) -> None:
    n = min(len(a), len(b))
    x, y = np.asarray(a[:n]), np.asarray(b[:n])
    assert overlap(x, y, m) == slow_overlap(a[:n], b[:n], m)
    assert overlap(x, y, m, top(x, m + 7)) == slow_overlap(a[:n], b[:n], m)  # a longer head


def test_hand_case() -> None:
    bm25 = np.array([5.0, 4.0, 3.0, 0.0, 2.0, 0.0])  # head of 3: {0, 1, 2}
    conj = np.array([0.9, 0.0, 0.1, 0.8, 0.7, 0.0])  # head of 3: {0, 3, 4}
    assert overlap(bm25, conj, 3) == pytest.approx(1 / 3)
    w, report = gate({"bm25": 0.5, "dense": 1.0, "conjunctive": 1.0},
                     {"bm25": bm25, "conjunctive": conj, "dense": bm25}, 3)
    assert w == {"bm25": 0.5, "dense": 1.0, "conjunctive": pytest.approx(2 / 3)}
    assert "conjunctive x0.67" in report and "0.33" in report
    # the same heads: the pair channel says nothing BM25 does not, and gets no weight
    assert gate({"conjunctive": 1.0}, {"bm25": bm25, "conjunctive": bm25 / 10}, 3)[0] == {
        "conjunctive": 0.0}
    # off, or a channel missing: the weights as given
    assert gate({"conjunctive": 1.0}, {"bm25": bm25, "conjunctive": conj}, 0) == (
        {"conjunctive": 1.0}, "")
    assert gate({"bm25": 1.0}, {"bm25": bm25}, 3) == ({"bm25": 1.0}, "")
    assert overlap(np.zeros(4), conj[:4], 3) == 0.0  # an empty head shares nothing
    # fewer positive scores than m: divided by the shorter head
    assert overlap(np.array([1.0, 0, 0, 0]), np.array([2.0, 1.0, 0, 0]), 3) == 1.0


def test_the_pipeline_reports_the_gate_and_is_deterministic() -> None:
    from vault.retrieval.pipeline import SearchEngine, SearchParams

    from ..retrieval_fixtures import incident_reports, make_corpus

    corpus = make_corpus(incident_reports())
    off = SearchEngine.lexical()
    on = SearchEngine.lexical(SearchParams(redundancy_head=20))
    q = "auth outage on Monday"
    assert "conjunctive x" not in off.search(corpus, q, 5).stages["fusion"]
    a, b = on.search(corpus, q, 5), on.search(corpus, q, 5)
    assert "conjunctive x" in a.stages["fusion"] and "with bm25's" in a.stages["fusion"]
    assert [(h.id, h.score) for h in a.hits] == [(h.id, h.score) for h in b.hits]
    conj = [h.receipt["signals"]["conjunctive"] for h in a.hits]  # the gated contribution
    assert all(c["contribution"] >= 0 for c in conj)
