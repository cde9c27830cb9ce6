"""Link stages lend without burying: stage 5b (protect) by hand, and on a linked cluster."""

from __future__ import annotations

import numpy as np
import pytest

from vault.retrieval.fusion import order
from vault.retrieval.pipeline import SearchEngine, SearchParams
from vault.retrieval.stages import protect_stage

from ..retrieval_fixtures import make_corpus


def test_a_lifted_note_is_held_below_a_clearly_stronger_direct_hit() -> None:
    fused = np.array([1.0, 0.4, 0.7, 0.0])
    own = fused.copy()
    lifted = np.array([1.0, 1.6, 0.9, 0.5])  # 1 and 3 rose on their neighbourhoods
    el = np.ones(4, dtype=np.bool_)
    report, out = protect_stage(fused, own, lifted, el, 2.0, order(fused))
    # 1: the notes with fused >= 0.8 are {0}: held just below 1.0. 2: nothing >= 1.4: kept.
    # 3: fused 0, held below every found note (min 0.9): 0.5 stays.
    assert out[0] == 1.0 and out[2] == 0.9 and out[3] == 0.5
    assert out[1] == np.nextafter(1.0, -np.inf) and out[1] < out[0]
    assert report == "ran (ratio 2.0, 1 held)"
    lifted[3] = 0.95
    assert protect_stage(fused, own, lifted, el, 2.0, order(fused))[1][3] < 0.9


def test_own_evidence_is_never_taken_away_and_archived_notes_protect_nothing() -> None:
    fused = np.array([1.0, 0.4])
    own = np.array([1.0, 0.6])  # 1 is named: its own name counts in full
    lifted = np.array([1.0, 1.6])
    el = np.array([False, True])  # 0 is archived: it holds no one down
    _, out = protect_stage(fused, own, lifted, el, 2.0, order(fused))
    np.testing.assert_array_equal(out, lifted)
    el[0] = True
    _, out = protect_stage(fused, np.array([1.0, 1.2]), lifted, el, 2.0, order(fused))
    assert out[1] == 1.2  # below the stronger hit would be < own: own wins
    with pytest.raises(ValueError):
        protect_stage(fused, own, lifted, el, 0.5, order(fused))
    assert protect_stage(fused, own, lifted, el, 0.0, order(fused))[0] == "skipped: weight 0"


def test_an_isolated_named_note_is_not_buried_by_a_linked_cluster() -> None:
    # "Ilse Marr" is isolated; "Dana Reyes" has six linked notes sharing the question's words.
    notes = [("Ilse Marr", "Ilse Marr is a painter born in 1950."),
             ("Dana Reyes", "Dana Reyes is a chemist born in 1960.")]
    notes += [(f"Meeting {i}", f"Who was born earlier, the chemist asked, meeting {i}.")
              for i in range(6)]
    c = make_corpus(notes, [(1, 2 + i) for i in range(6)])
    q = "Who was born earlier, Dana Reyes or Ilse Marr?"
    weights = {"graph": 0.0}
    top2 = {h.title for h in SearchEngine.lexical(SearchParams(weights=weights))
            .search(c, q, k=2).hits}
    assert top2 == {"Ilse Marr", "Dana Reyes"}
    raw = SearchEngine.lexical(SearchParams(weights={**weights, "protect": 0.0}))
    assert "Ilse Marr" not in {h.title for h in raw.search(c, q, k=2).hits}  # the old bias
