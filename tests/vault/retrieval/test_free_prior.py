"""The topic-free part of the learned prior (v5): it lifts a note used for other questions,
but never past a note the query names (retrieval/scope.py `free_prior_stage`,
learning/replay.py `free_of`)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault.learning.evidence import score
from vault.learning.expansion import coverage
from vault.learning.formulas import LearningParams
from vault.learning.replay import free_of, prior_of, query_weights, word_query
from vault.learning.state import LearnedState, NoteState
from vault.retrieval.pipeline import SearchEngine, SearchParams
from vault.retrieval.scope import PASSED_FLOOR, free_prior_stage, passed_over_stage

from ..retrieval_fixtures import NAMED_NOTES, NAMED_QUERY, make_corpus, titles
from ..retrieval_fixtures import conjunctive_kept as conjunctive_kept

pytestmark = pytest.mark.usefixtures("conjunctive_kept")

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
                                               "family roadtrip": 1},
                         word_df={"children": 2, "melani": 4, "famili": 1, "roadtrip": 1})
    used = NoteState(q=0.6, use_terms={"children melanie": 2},
                     use_words={"children": 2, "melani": 2})
    passed = NoteState(q=-0.1, skip_terms={"children melanie": 1})
    surely = NoteState(q=score(0.0, 20.0, LearningParams()), skipped=20.0,
                       skip_terms={"children melanie": 1})
    roadtrip = "When did Melanie's family go on a roadtrip?"
    other, words = query_weights(state, roadtrip), word_query(state, roadtrip)
    children = "How many children does Melanie have?"
    same, same_words = query_weights(state, children), word_query(state, children)
    # v8: the topic-free part acts by the share of the query's words the note was used for
    assert words is not None
    share = coverage(words, used.use_words)
    assert 0.0 < share < 1.0
    assert prior_of(used, other) == 0.0
    assert free_of(used, other, words) == pytest.approx(0.6 * share)
    assert prior_of(used, same) == pytest.approx(0.6) and free_of(used, same, same_words) == 0.0
    assert prior_of(passed, other) == 0.0  # the gated prior: a pass-over on its own topic...
    assert free_of(passed, other, words) == 0.0  # ...topic-free, only a confident pass-over:
    assert free_of(surely, other) == free_of(surely, same) == pytest.approx(-0.176, abs=5e-4)
    assert free_of(surely, other, params=LearningParams(neg_scale=0.5)) == pytest.approx(
        -0.352, abs=1e-3)
    assert free_of(NoteState(q=0.0), other, words) == 0.0  # no evidence: nothing
    assert free_of(used, None, words) == 0.0  # no query: prior_of is the whole, ungated score
    assert LearningParams().use_mean > 0  # the defaults build


def test_free_part_leaves_a_question_sharing_no_word_with_its_use_untouched() -> None:
    """v8 (NOTES-LRN.md): a turn used for other questions lifted, by its whole score, the
    turns above the evidence of LoCoMo questions it shared no word with (before v8 this was
    q = 0.6 here)."""
    state = LearnedState(searches=6, query_df={"caroline walk": 1, "mel husband": 1},
                         word_df={"carolin": 3, "neighborhood": 1, "walk": 1, "long": 2,
                                  "mel": 1, "husband": 1, "marri": 1})
    used = NoteState(q=0.6, use_terms={"mel husband": 1},
                     use_words={"long": 1, "mel": 1, "husband": 1})
    walk = "What did Caroline find in her neighborhood during her walk?"
    assert free_of(used, query_weights(state, walk), word_query(state, walk)) == 0.0
    assert free_of(used, query_weights(state, walk), None) == 0.0


def test_a_note_passed_over_is_demoted_whatever_the_query_only_with_weights_passed() -> None:
    c = make_corpus(NOTES, [])
    base = SearchEngine(SearchParams()).search(c, QUERY).hits
    assert titles(base)[:2] == ["Turn 1", "Ilse"]  # the named note, above the other turns
    ilse = np.array([-0.22, 0.0, 0.0, 0.0, 0.0])  # q of a speaker's note no agent read
    off = SearchEngine(SearchParams()).search(c, QUERY, free_prior=ilse).hits
    assert [(h.title, h.score) for h in off] == [(h.title, h.score) for h in base]  # default
    eng = SearchEngine(SearchParams(weights={"passed": 1.0}))
    got = {h.title: h for h in eng.search(c, QUERY, free_prior=ilse).hits}
    assert got["Ilse"].score == pytest.approx(base[1].score * 0.78)
    assert got["Turn 1"].score == base[0].score  # no evidence: untouched
    assert "passed over: 1 note (scale 1.0)" in eng.search(c, QUERY, free_prior=ilse
                                                            ).stages["prior"]
    r = got["Ilse"].receipt  # the demotion is booked as the prior's
    assert r["fused"] + r["context"] + r["named"] + r["warmth"] + r["prior"] == \
        pytest.approx(got["Ilse"].score)
    # a named note surely passed over holds nothing back, demoted or not (v20): a turn's
    # topic-free lift may pass it; without weights.passed its own score is untouched
    lift = np.array([-0.22, 0.0, 1.0, 0.0, 0.0])
    freed = {h.title: h for h in SearchEngine(SearchParams()).search(c, QUERY,
                                                                   free_prior=lift).hits}
    assert [h.title for h in sorted(freed.values(), key=lambda h: -h.score)][:3] == \
        ["Turn 1", "Turn 2", "Ilse"]
    assert freed["Ilse"].score == pytest.approx(base[1].score)  # not demoted
    assert titles(eng.search(c, QUERY, free_prior=lift).hits)[:3] == ["Turn 1", "Turn 2", "Ilse"]
    used = np.array([0.0, 0.0, 1.0, 0.0, 0.0])  # the named note not passed over: it holds
    assert titles(SearchEngine(SearchParams()).search(c, QUERY, free_prior=used).hits)[:3] == \
        ["Turn 1", "Ilse", "Turn 2"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(0.0, 1.0), st.floats(-0.25, 1.0)), min_size=1, max_size=30),
       st.floats(0.0, 4.0))
def test_the_passed_over_factor_only_lowers_a_negative_score_and_never_below_the_floor(
        rows: list[tuple[float, float]], scale: float) -> None:
    final = np.array([r[0] for r in rows])
    free = np.array([r[1] for r in rows])
    _, out = passed_over_stage(final, free, scale)
    neg = free < 0
    assert np.array_equal(out[~neg], final[~neg])  # used or unknown notes: untouched
    expected = final * np.maximum(PASSED_FLOOR, 1.0 + scale * free)
    assert out[neg] == pytest.approx(expected[neg])
    assert np.all(out <= final) and np.all(out >= PASSED_FLOOR * final)
    assert passed_over_stage(final, free, 0.0) == ("", final)  # weight 0: off
    assert passed_over_stage(final, None, scale) == ("", final)
    with pytest.raises(ValueError):
        passed_over_stage(final, np.zeros(len(rows) + 1), 1.0)
