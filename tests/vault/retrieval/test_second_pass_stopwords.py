"""The second pass's passage BM25 counts a query's stop words as the first stage does
(signals/bm25.py `query_weights`, `once`: every distinct term once, and the terms only stop words
give share one term): a verbose question's function words no longer outvote its rare words in
the passage vote."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from vault.retrieval import second_pass as sp
from vault.retrieval.signals.bm25 import QUERY_STOPWORDS, Bm25Index, query_weights

from ..retrieval_fixtures import make_corpus

FILLER = ("filler words only here now. nothing much worth noting today. "
          "more filler sentences follow now. end comes soon.")
QUESTION = "what is the name of the marmot in the zoo and the park"


def test_function_words_do_not_outvote_the_rare_words_in_the_passage_vote() -> None:
    """Note 0's passages hold the question's five function words (no other note does), notes
    7 and 8 its rare words; the final order is 0, 7, 8 and dense ranks 7, 8, 0. On main the
    passage vote ranked note 0 first (five terms of idf 3.3 against three and two) and the pass
    kept it first; the stop words now weigh one term together, the passage vote ranks 7, 8, 0
    and note 7 (2/12 + 1/11 + 1/11) passes note 0 (2/11 + 1/13 + 1/13)."""
    notes = [(f"n{i}", FILLER) for i in range(40)]
    notes[0] = ("n0", "Here it is in and of itself now. The one is in and of the other. "
                      "more filler sentences follow now. end comes soon.")
    notes[7] = ("n7", "filler words only here now. Marmot lives at zoo park. "
                      "more filler sentences follow now. end comes soon.")
    notes[8] = ("n8", "filler words only here now. Marmot seen at zoo. "
                      "more filler sentences follow now. end comes soon.")
    c = make_corpus(notes)
    bm25 = Bm25Index.build(c)
    dense = np.zeros(40)
    dense[7], dense[8], dense[0] = 0.9, 0.8, 0.5
    ranked = [0, 7, 8, *[i for i in range(1, 40) if i not in (7, 8)]]
    out, report = sp.second_pass(c, QUESTION, ranked, dense, bm25)
    assert report.startswith("ran (top 30: final, dense and passage BM25")
    assert out[:3] == [7, 0, 8]
    # the same question without its function words was already re-voted so
    assert sp.second_pass(c, "what name marmot zoo park", ranked, dense, bm25)[0][:3] == [7, 0, 8]


words = st.sampled_from(["marmot", "zoo", "park", "name", "the", "of", "in", "and", "was"])


@settings(max_examples=200, deadline=None)
@given(st.lists(words, min_size=1, max_size=12))
def test_once_counts_each_term_once_and_the_stop_words_as_one(query: list[str]) -> None:
    """`once`: a content term weighs 1 however often it is asked; the terms only stop words give
    weigh 1 together (each 1/s); repeating any word changes nothing."""
    w = query_weights(query, query, once=True)
    assert sorted(w) == sorted(set(query))
    plain = {t for t in query if t not in QUERY_STOPWORDS}
    assert all(w[t] == 1 for t in plain)
    stop_only = set(query) - plain
    if stop_only:
        assert abs(sum(w[t] for t in stop_only) - 1) < 1e-12
    assert query_weights(query + query, query + query, once=True) == w
