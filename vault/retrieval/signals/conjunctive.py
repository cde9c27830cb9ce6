"""Conjunctive signal: engram's binding code (terms and near pairs of terms), IDF-cosine.

Units of a text are its content terms t_i (tokens minus stop words, in order) and every
unordered pair {t_i, t_j} with 0 < j - i < 4 (the unordered-window feature of Metzler & Croft's
sequential dependence model, 2005). Each unit is hashed with blake2b to a 32-bit address
(stable across processes, unlike Python's `hash`), so "auth on Monday" and "auth on Tuesday"
are different addresses however similar their embeddings are.

Weighting (engram's frozen choice, "IDF-cosine"): with N notes and n_u the number of notes
containing unit u, idf(u) = ln((N + 1) / (n_u + 1)) + 1. A note is the binary unit vector
x_d[u] = idf(u), L2-normalised; the query likewise. The score is the cosine
conj(d, q) = <x_d, x_q>, in [0, 1], computed for all notes by one sparse matrix-vector product.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from ...storage.corpus import Corpus
from ..text import content_terms, tokenize

if TYPE_CHECKING:  # scipy is imported where a matrix is built (CLI start-up)
    from scipy import sparse

WINDOW = 4  # pairs of content terms fewer than WINDOW positions apart


def unit_hash(unit: str) -> int:
    """Stable 32-bit address of a unit (blake2b, 4-byte digest, big endian)."""
    return int.from_bytes(hashlib.blake2b(unit.encode("utf-8"), digest_size=4).digest(), "big")


def units(terms: Sequence[str], window: int = WINDOW) -> set[str]:
    """Terms and unordered pairs of terms fewer than `window` apart ("a\\x00b", a <= b)."""
    out = set(terms)
    for i, a in enumerate(terms):
        for b in terms[i + 1 : i + window]:
            if a != b:
                lo, hi = (a, b) if a < b else (b, a)
                out.add(f"{lo}\x00{hi}")
    return out


def token_codes(tokens: Sequence[str], window: int = WINDOW) -> npt.NDArray[np.uint32]:
    """Sorted unique hashed units of a tokenized text."""
    hashed = sorted({unit_hash(u) for u in units(content_terms(tokens), window)})
    return np.asarray(hashed, dtype=np.uint32)


def text_codes(text: str, window: int = WINDOW) -> npt.NDArray[np.uint32]:
    """Sorted unique hashed units of a text."""
    return token_codes(tokenize(text), window)


@dataclass(frozen=True)
class ConjunctiveIndex:
    """Row-normalised IDF unit matrix over the compact vocabulary of hashed units."""

    vocab: npt.NDArray[np.uint32]  # sorted unit hashes; column j <-> vocab[j]
    idf: npt.NDArray[np.float64]
    matrix: sparse.csc_matrix  # (n_docs, len(vocab)), CSC for column selection
    n_docs: int

    @classmethod
    def build(cls, corpus: Corpus) -> ConjunctiveIndex:
        """Index title + aliases + body of every note."""
        texts = (
            " ".join([corpus.titles[i], *corpus.aliases[i], corpus.bodies[i]])
            for i in range(len(corpus))
        )
        return cls.from_texts(texts)

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> ConjunctiveIndex:
        codes = [text_codes(t) for t in texts]
        n = len(codes)
        flat = np.concatenate(codes) if codes else np.zeros(0, dtype=np.uint32)
        vocab, cols, df = np.unique(flat, return_inverse=True, return_counts=True)
        idf = np.log((n + 1.0) / (df + 1.0)) + 1.0
        indptr = np.zeros(n + 1, dtype=np.int64)
        indptr[1:] = np.cumsum([len(c) for c in codes])
        data = idf[cols]
        row_of = np.repeat(np.arange(n), np.diff(indptr))
        norms = np.sqrt(np.bincount(row_of, weights=data * data, minlength=n))
        data = data / np.where(norms > 0, norms, 1.0)[row_of]
        from scipy import sparse

        matrix = sparse.csr_matrix((data, cols.ravel(), indptr), shape=(n, len(vocab))).tocsc()
        return cls(vocab=vocab.astype(np.uint32), idf=idf, matrix=matrix, n_docs=n)

    def score(self, query: str) -> npt.NDArray[np.float64]:
        """IDF-cosine of the query's units against every note (units unseen in notes drop)."""
        return self.score_tokens(tokenize(query))

    def score_tokens(self, query_tokens: Sequence[str]) -> npt.NDArray[np.float64]:
        """`score` for an already tokenized query."""
        q = token_codes(query_tokens)
        if self.n_docs == 0 or q.size == 0 or self.vocab.size == 0:
            return np.zeros(self.n_docs, dtype=np.float64)
        pos = np.searchsorted(self.vocab, q)
        pos = np.minimum(pos, self.vocab.size - 1)
        cols = pos[self.vocab[pos] == q]
        if cols.size == 0:
            return np.zeros(self.n_docs, dtype=np.float64)
        w = self.idf[cols]
        w = w / np.linalg.norm(w)
        return np.asarray(self.matrix[:, cols] @ w, dtype=np.float64).ravel()
