"""BM25's query stop words count as one term together (signals/bm25.py `query_weights`): a
sentence asked of one-line titles is not won by the title holding most of its function words,
a question with one stop word scores as plain Okapi BM25 does, and repeating stop words adds
nothing."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi

from vault.notes.text import tokenize
from vault.retrieval.signals.bm25 import K1, QUERY_STOPWORDS, B, Bm25Index, query_weights

TITLES = ["Marmot burrows of the alpine tundra",
          "The role of the state in the history of the law and of the church",
          "The effect of the diet on the growth of the child in the first year",
          "Glacier retreat measured by satellite",
          "Protein folding kinetics at high pressure",
          "Soil microbes and nitrogen in a wheat field",
          "A survey of the fishing fleets of the north",
          "Sleep duration and memory in students",
          "Solar wind and the magnetosphere",
          "Trade routes in the medieval Baltic"]


class LuceneIdfOkapi(BM25Okapi):  # type: ignore[misc]
    """rank_bm25's BM25Okapi scoring with the non-negative idf ln((N-n+.5)/(n+.5) + 1)."""

    def _calc_idf(self, nd: dict[str, int]) -> None:
        for word, freq in nd.items():
            self.idf[word] = math.log((self.corpus_size - freq + 0.5) / (freq + 0.5) + 1.0)


def test_a_verbose_query_finds_the_title_sharing_its_rare_word() -> None:
    """Eighteen function words of a sentence summed as eighteen terms put a title made of
    "the", "of" and "in" above the one title naming the marmot (main: title 1 first)."""
    idx = Bm25Index.from_documents([tokenize(t) for t in TITLES], stem=True)
    query = ("We found that the number of the marmot colonies in the region of the Alps is in "
             "decline and that the cause of the loss is the heat of the summer")
    y = idx.score_tokens(tokenize(query))
    assert int(np.argmax(y)) == 0
    assert y[0] > 2 * max(y[1:])


def test_the_weights_of_a_query() -> None:
    toks = ["marmot", "of", "the", "marmot", "the"]
    assert query_weights(toks, toks) == {"marmot": 2, "of": 1 / 3, "the": 2 / 3}
    assert query_weights(["what", "was", "gina"], ["what", "was", "gina"]) == {
        "gina": 1, "was": 1.0, "what": 1}
    assert query_weights(["to", "be"], ["to", "be"]) == {"be": 0.5, "to": 0.5}


CONTENT = st.sampled_from(["alpha", "beta", "gamma", "delta", "eps"])
STOP = st.sampled_from(["the", "of", "in", "and", "to"])


@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(st.lists(st.one_of(CONTENT, STOP), min_size=1, max_size=12), min_size=1,
                  max_size=8),
    content=st.lists(CONTENT, min_size=0, max_size=4),
    stop=STOP,
)
def test_one_stop_word_scores_as_okapi_bm25(docs: list[list[str]], content: list[str],
                                            stop: str) -> None:
    """A question with a single stop-word occurrence ("what was her first pet called?") is
    scored as before: rank_bm25 over the same tokens (Lucene idf)."""
    query = [*content, stop]
    ours = Bm25Index.from_documents(docs).score_tokens(query)
    ref = LuceneIdfOkapi(docs, k1=K1, b=B).get_scores(query)
    np.testing.assert_allclose(ours, ref, atol=1e-6)


@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(st.lists(st.one_of(CONTENT, STOP), min_size=1, max_size=12), min_size=1,
                  max_size=8),
    content=st.lists(CONTENT, min_size=0, max_size=4),
    stops=st.lists(STOP, min_size=1, max_size=5),
    times=st.integers(min_value=2, max_value=4),
)
def test_repeating_the_stop_words_adds_nothing(docs: list[list[str]], content: list[str],
                                               stops: list[str], times: int) -> None:
    """The stop words weigh one term together, so saying each of them `times` times scores
    every note the same (main counted each occurrence), and a query of stop words only ranks
    the notes as rank_bm25 does (its scores divided by their number)."""
    idx = Bm25Index.from_documents(docs)
    np.testing.assert_allclose(idx.score_tokens([*content, *stops]),
                               idx.score_tokens([*content, *(stops * times)]), atol=1e-9)
    ref = LuceneIdfOkapi(docs, k1=K1, b=B).get_scores(stops)
    np.testing.assert_allclose(idx.score_tokens(stops) * len(stops), ref, atol=1e-6)
    assert set(stops) <= QUERY_STOPWORDS
