"""A synthetic sentence encoder for benchmarks at scale: NOT a language model.

Embedding 10^6 notes with MiniLM takes days on two cores, so the scale benchmarks stand this
encoder in for it, and say so (its fingerprint starts with "synthetic:"). It keeps what an
approximate index needs to be measured honestly: texts that share words are close, texts that
share none are nearly orthogonal, and identical bags of words still differ a little.

    e(t) = normalise( u / |u| + NOISE * v(t) ),   u = sum_{w in words(t)} g(w)

with words(t) the lower-cased whitespace tokens, g(w) ~ N(0, I/dim) drawn from a generator
seeded by blake2b(w) (a random projection of the bag of words, so <e(a), e(b)> tracks the
cosine of the word-count vectors; Johnson & Lindenstrauss 1984), and v(t) the sum of two rows
of a fixed Gaussian table picked by blake2b(t). Deterministic: the vector of a text depends on
the text alone, never on the batch. `count_tokens` counts whitespace words.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from scipy import sparse

F32 = npt.NDArray[np.float32]

DIM = 384
NOISE = 0.15  # weight of the per-text component against the unit bag-of-words part
TABLE_ROWS = 4096  # rows of the per-text noise table


def _seed(data: str, person: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(data.encode("utf-8"), digest_size=8,
                                          person=person).digest(), "little")


class SyntheticEncoder:
    """Deterministic unit vectors from text (module docstring); the `Encoder` protocol."""

    def __init__(self, dim: int = DIM) -> None:
        self._dim = dim
        self._vocab: dict[str, int] = {}
        self._table = np.zeros((1024, dim), dtype=np.float32)
        rng = np.random.default_rng(_seed("noise-table", b"rmh-synth-noise"))
        noise = rng.standard_normal((TABLE_ROWS, dim)).astype(np.float32)
        self._noise = noise / np.linalg.norm(noise, axis=1, keepdims=True)

    @property
    def fingerprint(self) -> str:
        return f"synthetic:blake2b-bag-of-words:noise={NOISE}:dim={self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def _ids(self, words: list[str]) -> npt.NDArray[np.int64]:
        new = sorted(set(words).difference(self._vocab))
        if new:
            need = len(self._vocab) + len(new)
            if need > self._table.shape[0]:
                grown = np.zeros((max(need, 2 * self._table.shape[0]), self._dim), np.float32)
                grown[: len(self._vocab)] = self._table[: len(self._vocab)]
                self._table = grown
            scale = np.float32(1.0 / np.sqrt(self._dim))
            for w in new:
                row = np.random.default_rng(_seed(w, b"rmh-synth-word")).standard_normal(
                    self._dim)
                self._table[len(self._vocab)] = row.astype(np.float32) * scale
                self._vocab[w] = len(self._vocab)
        vocab = self._vocab
        return np.fromiter((vocab[w] for w in words), dtype=np.int64, count=len(words))

    def encode(self, texts: Sequence[str]) -> F32:
        """(len(texts), dim) float32 unit rows; a text with no words gets a zero row."""
        words: list[str] = []
        indptr = np.zeros(len(texts) + 1, dtype=np.int64)
        for i, t in enumerate(texts):
            toks = t.lower().split()
            words.extend(toks)
            indptr[i + 1] = indptr[i] + len(toks)
        ids = self._ids(words)
        counts = sparse.csr_matrix(
            (np.ones(ids.shape[0], np.float32), ids, indptr),
            shape=(len(texts), self._table.shape[0]),
        )
        bag = np.asarray(counts @ self._table, dtype=np.float32)
        norms = np.linalg.norm(bag, axis=1, keepdims=True)
        bag /= np.clip(norms, 1e-12, None)
        seeds = np.array([_seed(t, b"rmh-synth-text") for t in texts], dtype=np.uint64)
        a = (seeds % TABLE_ROWS).astype(np.int64)
        b = ((seeds >> np.uint64(32)) % TABLE_ROWS).astype(np.int64)
        out = bag + np.float32(NOISE / 2) * (self._noise[a] + self._noise[b])
        out /= np.clip(np.linalg.norm(out, axis=1, keepdims=True), 1e-12, None)
        out[norms[:, 0] == 0] = 0.0
        result: F32 = out.astype(np.float32)
        return result
