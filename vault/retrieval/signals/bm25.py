"""BM25 keyword signal over title (x3), aliases and description (x2) and body (x1).

Variant: Okapi BM25 (Robertson & Zaragoza 2009, "The Probabilistic Relevance Framework") with
the non-negative idf used by Lucene:

    idf(t)      = ln( (N - n_t + 0.5) / (n_t + 0.5) + 1 )
    score(d, q) = sum_{t in q} idf(t) * f(t,d) * (k1 + 1)
                  / (f(t,d) + k1 * (1 - b + b * |d| / avgdl))

with k1 = 1.2, b = 0.75. Fields are combined by term-frequency weighting: the document is the
title's tokens three times, the aliases' (and frontmatter `description`) twice and the body once,
so f and |d| count weighted occurrences. This equals `rank_bm25.BM25Okapi` over that repeated
token list with its idf replaced by the formula above (checked to 1e-6 in the tests). Query
terms count with multiplicity, as BM25Okapi does. All documents are scored by one sparse
matrix-vector product over precomputed per-term weights.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from ...storage.corpus import Corpus
from ..text import tokenize

if TYPE_CHECKING:  # scipy is imported where a matrix is built (CLI start-up)
    from scipy import sparse

K1 = 1.2
B = 0.75
TITLE_WEIGHT = 3
ALIAS_WEIGHT = 2
BODY_WEIGHT = 1


def field_tokens(title: str, aliases: Sequence[str], description: str, body: str) -> list[str]:
    """The weighted token list BM25 sees for one note (title x3, aliases/description x2, body)."""
    side = tokenize(" ".join([*aliases, description]))
    return tokenize(title) * TITLE_WEIGHT + side * ALIAS_WEIGHT + tokenize(body) * BODY_WEIGHT


def corpus_documents(corpus: Corpus) -> list[list[str]]:
    """Weighted token lists for every note of a corpus, by position."""
    docs = []
    for i in range(len(corpus)):
        desc = corpus.frontmatter[i].get("description", "")
        docs.append(
            field_tokens(
                corpus.titles[i],
                corpus.aliases[i],
                desc if isinstance(desc, str) else "",
                corpus.bodies[i],
            )
        )
    return docs


@dataclass(frozen=True)
class Bm25Index:
    """Precomputed BM25 term weights: `weights[d, j]` is the score term j adds to document d."""

    vocabulary: dict[str, int]
    weights: sparse.csc_matrix
    n_docs: int

    @classmethod
    def build(cls, corpus: Corpus) -> Bm25Index:
        """Index every note of `corpus`."""
        return cls.from_documents(corpus_documents(corpus))

    @classmethod
    def from_documents(
        cls, docs: Sequence[Sequence[str]], k1: float = K1, b: float = B
    ) -> Bm25Index:
        """Index pre-tokenized documents (position = row)."""
        vocab: dict[str, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        for d, doc in enumerate(docs):
            for tok in doc:
                j = vocab.setdefault(tok, len(vocab))
                rows.append(d)
                cols.append(j)
        n = len(docs)
        shape = (n, len(vocab))
        from scipy import sparse

        tf = sparse.coo_matrix(
            (np.ones(len(rows), dtype=np.float64), (rows, cols)), shape=shape
        ).tocsr()
        tf.sum_duplicates()
        lengths = np.asarray([len(doc) for doc in docs], dtype=np.float64)
        avgdl = float(lengths.mean()) if n else 0.0
        df = np.bincount(tf.indices, minlength=len(vocab)).astype(np.float64)
        idf = np.log((n - df + 0.5) / (df + 0.5) + 1.0)
        # Per-entry weight: idf_j * f (k1 + 1) / (f + k1 (1 - b + b |d| / avgdl)).
        norm = k1 * (1.0 - b + b * lengths / avgdl) if avgdl > 0 else np.full(n, k1)
        row_of_entry = np.repeat(np.arange(n), np.diff(tf.indptr))
        f = tf.data
        data = idf[tf.indices] * f * (k1 + 1.0) / (f + norm[row_of_entry])
        weights = sparse.csr_matrix((data, tf.indices, tf.indptr), shape=shape).tocsc()
        return cls(vocabulary=vocab, weights=weights, n_docs=n)

    def score_tokens(self, query_tokens: Sequence[str]) -> npt.NDArray[np.float64]:
        """BM25 score of every document for a tokenized query (multiplicity counts)."""
        counts: dict[int, int] = {}
        for tok in query_tokens:
            j = self.vocabulary.get(tok)
            if j is not None:
                counts[j] = counts.get(j, 0) + 1
        if not counts or self.n_docs == 0:
            return np.zeros(self.n_docs, dtype=np.float64)
        cols = sorted(counts)
        q = np.asarray([counts[j] for j in cols], dtype=np.float64)
        sub = self.weights[:, cols]
        return np.asarray(sub @ q, dtype=np.float64).ravel()

    def score(self, query: str) -> npt.NDArray[np.float64]:
        """BM25 score of every document for a query string."""
        return self.score_tokens(tokenize(query))
