"""The learned expansion channel (learning v6): fused like a signal, zero where no learned word
is shared, and never past a note the query names (retrieval/scope.py `expansion_channel`,
`hold_below`)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault.retrieval.pipeline import SearchEngine, SearchParams
from vault.retrieval.scope import hold_below

from ..retrieval_fixtures import NAMED_NOTES, NAMED_QUERY, make_corpus, titles
from ..retrieval_fixtures import conjunctive_kept as conjunctive_kept

pytestmark = pytest.mark.usefixtures("conjunctive_kept")

NOTES = NAMED_NOTES
QUERY = NAMED_QUERY


def test_the_channel_lifts_a_used_note_but_not_past_a_named_one() -> None:
    c = make_corpus(NOTES, [])
    eng = SearchEngine(SearchParams(weights={"learned": 1.0}))
    base = eng.search(c, QUERY)
    assert titles(base.hits) == ["Turn 1", "Ilse", "Turn 2", "Turn 3"]
    zero = eng.search(c, QUERY, expansion=np.zeros(5))
    assert [h.score for h in zero.hits] == [h.score for h in base.hits]  # nothing shared
    assert "learned" not in zero.stages
    x = np.array([0.0, 0.0, 1.0, 0.0, 0.0])
    hits = eng.search(c, QUERY, expansion=x).hits
    assert titles(hits)[:3] == ["Turn 1", "Ilse", "Turn 2"]  # held just below "Ilse"
    assert hits[2].score > base.hits[2].score and hits[2].score < hits[1].score
    assert hits[2].receipt["signals"]["learned"]["contribution"] == pytest.approx(1.0 / 61)
    half = SearchEngine(SearchParams()).search(c, QUERY, expansion=x).hits  # default 0.5
    assert half[2].receipt["signals"]["learned"]["contribution"] == pytest.approx(0.5 / 61)
    unnamed = "What did she see on her spring walk by the river?"  # names no note
    free = titles(eng.search(c, unnamed, expansion=x).hits)
    assert free.index("Turn 2") < free.index("Ilse")  # nothing named: the lift is whole
    x3 = np.array([0.0, 0.0, 0.0, 0.0, 0.5])
    lifted = eng.search(c, QUERY, expansion=x3).hits
    assert titles(lifted) == ["Turn 1", "Ilse", "Turn 3", "Turn 2"]  # past an unnamed note
    off = SearchEngine(SearchParams(weights={"learned": 0.0})).search(c, QUERY, expansion=x)
    assert [h.score for h in off.hits] == [h.score for h in base.hits]  # weight 0: off
    for h in hits:  # the receipt still sums to the score
        r = h.receipt
        assert r["fused"] + r["context"] + r["named"] + r["warmth"] + r["prior"] == \
            pytest.approx(h.score)


@given(st.lists(st.tuples(st.floats(0, 10), st.floats(0, 5), st.booleans()), min_size=1,
                max_size=12))
@settings(max_examples=300, deadline=None)
def test_no_mover_passes_a_holder_that_ranked_above_it(
        rows: list[tuple[float, float, bool]]) -> None:
    before = np.array([b for b, _, _ in rows])
    after = before + np.array([d for _, d, _ in rows])
    holders = np.array([h for _, _, h in rows])
    out = hold_below(before, after, after > before, holders)
    assert np.array_equal(out[holders], after[holders])  # holders keep their score
    assert np.all(out >= before) and np.all(out <= after)  # a mover never goes down
    n = len(rows)
    for d in range(n):
        if holders[d]:
            continue
        for h in np.flatnonzero(holders).tolist():
            if before[h] > before[d]:
                assert out[d] <= out[h] or out[d] == before[d]
