"""The topic-free part of the learned prior (v5): it lifts a note used for other questions,
but never past a note the query names (retrieval/scope.py `free_prior_stage`,
learning/replay.py `free_of`)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault.learning.formulas import LearningParams
from vault.learning.replay import free_of, prior_of, query_weights
from vault.learning.state import LearnedState, NoteState
from vault.retrieval.pipeline import SearchEngine, SearchParams
from vault.retrieval.scope import free_prior_stage

from ..retrieval_fixtures import NAMED_NOTES, NAMED_QUERY, make_corpus, titles

NOTES = NAMED_NOTES
QUERY = NAMED_QUERY


def test_a_free_lift_moves_a_note_but_not_past_a_named_note() -> None:
    c = make_corpus(NOTES, [])
    eng = SearchEngine(SearchParams())
    base = eng.search(c, QUERY).hits
    assert titles(base) == ["Turn 1", "Ilse", "Turn 2", "Turn 3"]
    assert base[2].score * 1.2 > base[1].score  # x1.2 would take Turn 2 past "Ilse"...
    lift = np.array([0.0, 0.0, 1.0, 0.0, 0.0])
    topical = eng.search(c, QUERY, prior=lift).hits
    assert titles(topical)[:2] == ["Turn 1", "Turn 2"]  # ...as the topical prior does
    hits = eng.search(c, QUERY, free_prior=lift).hits
    assert titles(hits) == titles(base)  # the free part: held just below the named note
    assert base[2].score < hits[2].score < hits[1].score == base[1].score
    assert hits[2].receipt["prior_factor"] > 1.0
    free3 = eng.search(c, QUERY, free_prior=np.array([0.0, 0.0, 0.0, 0.0, 1.0])).hits
    assert free3[3].score == pytest.approx(base[3].score * 1.2)  # nothing named in the way
    off = SearchEngine(SearchParams(prior_scale=0.0)).search(c, QUERY, free_prior=lift).hits
    assert [h.score for h in off] == [h.score for h in base]  # prior_scale 0: no learning
    for h in hits:  # the receipt still sums to the score
        r = h.receipt
        assert r["fused"] + r["context"] + r["named"] + r["warmth"] + r["prior"] == \
            pytest.approx(h.score)


def test_without_a_named_note_the_free_lift_is_the_plain_factor() -> None:
    final = np.array([1.0, 0.9, 0.0, 0.5])
    free = np.array([0.0, 0.5, 1.0, 2.0])  # clipped to [0, 1]; a score 0 stays 0
    report, out = free_prior_stage(final, free, 0.2, np.zeros(4, dtype=np.bool_))
    assert out.tolist() == pytest.approx([1.0, 0.99, 0.0, 0.6]) and "scale 0.2" in report
    assert free_prior_stage(final, None, 0.2, np.zeros(4, dtype=np.bool_)) == ("", final)
    assert free_prior_stage(final, np.zeros(4), 0.2, np.zeros(4, dtype=np.bool_))[1] is final
    with pytest.raises(ValueError):
        free_prior_stage(final, np.ones(3), 0.2, np.zeros(4, dtype=np.bool_))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(0.01, 1.0), st.floats(0.0, 1.0), st.booleans()),
                min_size=1, max_size=30),
       st.floats(0.01, 1.0))
def test_no_note_passes_a_holder_that_ranked_above_it(
        rows: list[tuple[float, float, bool]], scale: float) -> None:
    final = np.array([r[0] for r in rows])
    free = np.array([r[1] for r in rows])
    holders = np.array([r[2] for r in rows], dtype=np.bool_)
    _, out = free_prior_stage(final, free, scale, holders)
    assert np.all(out >= final) and np.all(out <= final * (1.0 + scale * free) + 1e-15)
    for h in np.flatnonzero(holders):
        for d in np.flatnonzero(~holders):
            if final[h] > final[d]:
                assert out[d] < out[h]
    assert np.array_equal(out[holders], (final * (1.0 + scale * free))[holders])


def test_free_part_is_what_the_gate_left_out_of_a_positive_score() -> None:
    state = LearnedState(searches=4, query_df={"children melanie": 2, "melanie family": 1,
                                               "family roadtrip": 1})
    used = NoteState(q=0.6, use_terms={"children melanie": 2})
    passed = NoteState(q=-0.1, skip_terms={"children melanie": 1})
    other = query_weights(state, "When did Melanie's family go on a roadtrip?")
    same = query_weights(state, "How many children does Melanie have?")
    assert prior_of(used, other) == 0.0 and free_of(used, other) == pytest.approx(0.6)
    assert prior_of(used, same) == pytest.approx(0.6) and free_of(used, same) == 0.0
    assert free_of(passed, other) == 0.0  # a pass-over acts only on its own topic
    assert free_of(used, None) == 0.0  # no query: prior_of is the whole, ungated score
    assert LearningParams().use_mean > 0  # the defaults build
