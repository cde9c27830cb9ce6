"""BM25: agrees with rank_bm25 (Okapi scoring, Lucene idf) and weights the fields."""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi

from vault import Vault
from vault.retrieval.signals.bm25 import K1, B, Bm25Index, described, field_tokens


class LuceneIdfOkapi(BM25Okapi):  # type: ignore[misc]
    """rank_bm25's BM25Okapi scoring with the non-negative idf ln((N-n+.5)/(n+.5) + 1)."""

    def _calc_idf(self, nd: dict[str, int]) -> None:
        for word, freq in nd.items():
            self.idf[word] = math.log((self.corpus_size - freq + 0.5) / (freq + 0.5) + 1.0)


WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta"])


@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(st.lists(WORDS, min_size=1, max_size=12), min_size=1, max_size=8),
    query=st.lists(WORDS, min_size=1, max_size=4),
)
def test_agrees_with_rank_bm25(docs: list[list[str]], query: list[str]) -> None:
    ours = Bm25Index.from_documents(docs).score_tokens(query)
    ref = LuceneIdfOkapi(docs, k1=K1, b=B).get_scores(query)
    np.testing.assert_allclose(ours, ref, atol=1e-6)


def test_hand_computed_case() -> None:
    docs = [["a", "b"], ["b", "b", "c"]]
    # N=2; a: n=1 -> idf = ln(1.5/1.5 + 1) = ln 2; avgdl = 2.5
    idx = Bm25Index.from_documents(docs)
    expected = math.log(2) * 1 * (K1 + 1) / (1 + K1 * (1 - B + B * 2 / 2.5))
    assert math.isclose(float(idx.score_tokens(["a"])[0]), expected, rel_tol=1e-12)
    assert idx.score_tokens(["a"])[1] == 0.0


def test_field_weights_title_three_alias_two_body_one() -> None:
    toks = field_tokens("Title word", ["alias"], "", "body text")
    assert toks.count("title") == 3
    assert toks.count("alias") == 2
    assert toks.count("body") == 1


def test_unknown_terms_and_empty_corpus_score_zero() -> None:
    idx = Bm25Index.from_documents([["a"]])
    assert idx.score_tokens(["zzz"]).tolist() == [0.0]
    empty = Bm25Index.from_documents([])
    assert empty.score_tokens(["a"]).shape == (0,)


def test_frequency_is_the_document_count_of_each_token() -> None:
    idx = Bm25Index.from_documents([["a", "b", "b"], ["b", "c"], ["c"]])
    assert idx.frequency(["b", "c", "a", "zzz", "b"]) == [2, 2, 1, 0, 2]
    grown = idx.updated({1: (["b", "c"], ["a"])}, 3)  # note 1 now holds only "a"
    assert grown.frequency(["a", "b", "c"]) == [2, 1, 1]


STEMMED = st.sampled_from(["develop", "develops", "developed", "developing", "cell", "cells",
                           "heart", "hearts", "progenitor", "progenitors", "muscle"])


@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(st.lists(STEMMED, min_size=1, max_size=12), min_size=1, max_size=8),
    query=st.lists(STEMMED, min_size=1, max_size=4),
)
def test_a_stemming_index_is_rank_bm25_over_snowball_stems(docs: list[list[str]],
                                                           query: list[str]) -> None:
    import snowballstemmer

    s = snowballstemmer.stemmer("english")
    ours = Bm25Index.from_documents(docs, stem=True).score_tokens(query)
    ref = LuceneIdfOkapi([s.stemWords(d) for d in docs], k1=K1, b=B).get_scores(
        s.stemWords(query))
    np.testing.assert_allclose(ours, ref, atol=1e-6)


def test_every_inflection_finds_the_others_and_counts_as_one_term() -> None:
    idx = Bm25Index.from_documents([["cells", "developed"], ["heart"]], stem=True)
    assert idx.score_tokens(["develops"])[0] > 0 and idx.score_tokens(["develops"])[1] == 0
    assert idx.frequency(["developing", "cell", "lung"]) == [1, 1, 0]
    plain = Bm25Index.from_documents([["cells", "developed"], ["heart"]])
    assert plain.score_tokens(["develops"]).tolist() == [0.0, 0.0]


@pytest.mark.parametrize("seed", range(3))
def test_a_frontmatter_tag_is_found_by_search(tmp_path: Path, seed: int) -> None:
    """A note tagged in its frontmatter (`tags:` list, string, `Tag:`, nested `a/b`, `#x`) is
    found by the tag's word, as an inline `#tag` is and as Obsidian's search finds it (its
    help, "Search": words match anywhere in a note; `tag:` reads frontmatter tags); after an
    edit of the tag, by the new word and not the old; and by a new process (the persisted
    lexical store)."""
    rng = random.Random(seed)
    root = tmp_path / "v"
    root.mkdir()
    words = rng.sample(["zeppelin", "quasar", "obsidian", "marmot", "tundra", "glyph"], 4)
    forms = ["tags: [{w}]", "tags: {w}", "Tag: other {w}", "tags:\n  - area/{w}",
             "TAGS: '#{w}'"]
    for i, w in enumerate(words):
        fm = rng.choice(forms).format(w=w)
        (root / f"T{i}.md").write_text(f"---\n{fm}\n---\nPlain words.\n", encoding="utf-8")
    for i in range(12):
        (root / f"o{i}.md").write_text(f"Other plain words {i}.\n", encoding="utf-8")
    with Vault.init(root) as v:
        for i, w in enumerate(words):
            assert [h.note for h in v.search(w, k=1, learn=False).hits] == [f"T{i}.md"]
        (root / "T0.md").write_text("---\ntags: [renamedtag]\n---\nPlain words.\n",
                                    encoding="utf-8")
        v.sync()
        assert [h.note for h in v.search("renamedtag", k=1, learn=False).hits] == ["T0.md"]
        assert v.search(words[0], k=1, learn=False).hits == ()
    with Vault.open(root) as v:
        assert [h.note for h in v.search(words[1], k=1, learn=False).hits] == ["T1.md"]


@pytest.mark.parametrize("seed", range(3))
def test_a_frontmatter_title_is_found_by_search(tmp_path: Path, seed: int) -> None:
    """A note named by its date or id (`2024-01-05.md`, `202401051230.md`: Hugo, Jekyll,
    Zettelkasten) with its title in `title:` is found by the title's words, as Obsidian's
    search finds a property's text; it found nothing. A `title:` equal to the file's
    title adds nothing (the same tokens as without it); an edit moves the words."""
    rng = random.Random(seed)
    root = tmp_path / "v"
    root.mkdir()
    words = rng.sample(["zeppelin", "quasar", "marmot", "tundra", "glyph", "fjord", "kelp"], 5)
    forms = ["title: {w} plans", "title: \"The {w}\"", "Title: '{w}: a review'", "title: {w}"]
    names = [f"2024-01-{i + 10:02d}" if rng.random() < 0.5 else f"2024011{i}1230"
             for i in range(len(words))]
    for name, w in zip(names, words, strict=True):
        fm = rng.choice(forms).format(w=w)
        (root / f"{name}.md").write_text(f"---\n{fm}\n---\nPlain words.\n", encoding="utf-8")
    for i in range(12):
        (root / f"o{i}.md").write_text(f"Other plain words {i}.\n", encoding="utf-8")
    same = ["Same name", "Same name.", "same NAME"]
    (root / "Same name.md").write_text(f"---\ntitle: {rng.choice(same)}\n---\nx\n",
                                       encoding="utf-8")
    with Vault.init(root) as v:
        for name, w in zip(names, words, strict=True):
            assert [h.note for h in v.search(w, k=1, learn=False).hits] == [f"{name}.md"]
        (root / f"{names[0]}.md").write_text("---\ntitle: renamedtitle\n---\nPlain words.\n",
                                             encoding="utf-8")
        v.sync()
        assert [h.note for h in v.search("renamedtitle", k=1, learn=False).hits] == [
            f"{names[0]}.md"]
        assert v.search(words[0], k=1, learn=False).hits == ()
    assert described({"title": rng.choice(same)}, "Same name") == ""
