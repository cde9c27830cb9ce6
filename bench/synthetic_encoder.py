"""A synthetic sentence encoder for benchmarks at scale: NOT a language model.

Embedding 10^6 notes with MiniLM takes days on two cores, so the scale benchmarks stand this
encoder in for it, and say so (its fingerprint starts with "synthetic:"). It keeps what an
approximate index needs to be measured honestly: texts that share words are close, texts that
share none are nearly orthogonal, and identical bags of words still differ a little.

    e(t) = normalise( u / |u| + NOISE * v(t) ),   u = sum_{w in words(t)} g(w)

with words(t) the lower-cased whitespace tokens and v(t) the sum of two rows of a fixed
Gaussian table picked by blake2b(t). The word vectors are feature-hashed (Weinberger et al.
2009, "Feature Hashing for Large Scale Multitask Learning"): a fixed table G of WORD_ROWS
rows drawn from N(0, I/dim), and

    g(w) = (1 / sqrt(K)) * sum_{k < K} s_k(w) G[h_k(w)]

with the K rows h_k(w) and signs s_k(w) read from blake2b(w). When the K rows are distinct,
g(w) is exactly N(0, I/dim); two words share a row with probability about K^2 / WORD_ROWS,
and even then the random signs keep E<g(a), g(b)> = 0. So the g(w) behave as independent
Gaussians and u is a random projection of the bag of words: <e(a), e(b)> tracks the cosine
of the word-count vectors (Johnson & Lindenstrauss 1984). The memory is the two fixed tables
(~100 MB, the size of MiniLM's weights), whatever the vocabulary. Deterministic: the vector
of a text depends on the text alone, never on the batch. `count_tokens` counts whitespace
words.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import numpy.typing as npt
from scipy import sparse

F32 = npt.NDArray[np.float32]

DIM = 384
NOISE = 0.15  # weight of the per-text component against the unit bag-of-words part
TABLE_ROWS = 4096  # rows of the per-text noise table
WORD_ROWS = 1 << 16  # rows of the hashed word table (96 MiB of float32 at dim 384)
K = 4  # table rows summed per word


def _seed(data: str, person: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(data.encode("utf-8"), digest_size=8,
                                          person=person).digest(), "little")


@lru_cache(maxsize=1 << 16)
def _word_digest(word: str) -> bytes:
    """4 * K bytes of blake2b(word): K little-endian uint32, row = x % WORD_ROWS and sign =
    the top bit (memoised: a text's words repeat, a vault's common words most)."""
    return hashlib.blake2b(word.encode("utf-8"), digest_size=4 * K,
                           person=b"rmh-synth-hash").digest()


def _unit_rows(rng: np.random.Generator, rows: int, dim: int) -> F32:
    table = rng.standard_normal((rows, dim)).astype(np.float32)
    out: F32 = table / np.linalg.norm(table, axis=1, keepdims=True)
    return out


class SyntheticEncoder:
    """Deterministic unit vectors from text (module docstring); the `Encoder` protocol."""

    def __init__(self, dim: int = DIM) -> None:
        self._dim = dim
        rng = np.random.default_rng(_seed("word-table", b"rmh-synth-word"))
        self._words = np.empty((WORD_ROWS, dim), dtype=np.float32)
        for s in range(0, WORD_ROWS, 4096):  # float64 draws a block at a time
            self._words[s : s + 4096] = rng.standard_normal((4096, dim))
        self._words *= np.float32(1.0 / np.sqrt(dim * K))
        self._noise = _unit_rows(np.random.default_rng(_seed("noise-table", b"rmh-synth-noise")),
                                 TABLE_ROWS, dim)

    @property
    def fingerprint(self) -> str:
        return (f"synthetic:hashed-bag-of-words:rows={WORD_ROWS}:k={K}:noise={NOISE}"
                f":dim={self._dim}")

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def nbytes(self) -> int:
        """Bytes of the encoder's tables (fixed: independent of the texts seen)."""
        return int(self._words.nbytes + self._noise.nbytes)

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def encode(self, texts: Sequence[str]) -> F32:
        """(len(texts), dim) float32 unit rows; a text with no words gets a zero row."""
        digests: list[bytes] = []
        indptr = np.zeros(len(texts) + 1, dtype=np.int64)
        for i, t in enumerate(texts):
            toks = t.lower().split()
            digests.extend(_word_digest(w) for w in toks)
            indptr[i + 1] = indptr[i] + K * len(toks)
        x = np.frombuffer(b"".join(digests), dtype="<u4")
        rows = (x % np.uint32(WORD_ROWS)).astype(np.int32)
        signs = np.where(x >> np.uint32(31), np.float32(-1.0), np.float32(1.0))
        counts = sparse.csr_matrix((signs, rows, indptr), shape=(len(texts), WORD_ROWS))
        bag = np.asarray(counts @ self._words, dtype=np.float32)
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
