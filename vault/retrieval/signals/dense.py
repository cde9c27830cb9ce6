"""Dense signal: cosine similarity between the query embedding and each note's best chunk.

    dense(d, q) = max_{c in chunks(d)} <e(c), e(q)>

with e(.) the encoder's L2-normalised embedding, so the inner product is the cosine and the
raw score lies in [-1, 1]. All chunks of all notes form one float32 matrix (rows grouped by
note, in position order); scoring is one matrix-vector product followed by a segmented max
(`np.maximum.reduceat`). Chunk embeddings come through the `EmbeddingCache`, keyed by the
sha256 of the chunk text, so unchanged text is never embedded twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ...storage.corpus import Corpus
from ..chunking import chunk_note
from ..encoders import EmbeddingCache, Encoder, Progress, encode_cached


@dataclass(frozen=True)
class DenseIndex:
    """Chunk embeddings of a corpus: `matrix[starts[i]:starts[i+1]]` are note i's chunks."""

    matrix: npt.NDArray[np.float32]  # (n_chunks, dim), unit rows
    starts: npt.NDArray[np.int64]  # (n_docs,), first chunk row of each note
    fingerprint: str
    capped: int = 0  # notes whose chunks were cut at `max_units`

    @property
    def n_docs(self) -> int:
        return int(self.starts.shape[0])

    @classmethod
    def build(
        cls,
        corpus: Corpus,
        encoder: Encoder,
        cache: EmbeddingCache | None,
        max_tokens: int = 256,
        progress: Progress | None = None,
        max_units: int = 0,
    ) -> DenseIndex:
        """Chunk every note (title + body) and embed the chunks, reading/filling `cache`.
        With `max_units` > 0 a note contributes at most its first `max_units` chunks, so one
        huge note costs at most that many encoder calls (it stays findable by the lexical
        signals over its whole text, and densely by its first units)."""
        texts, starts, capped = corpus_chunks(corpus, encoder.count_tokens, max_tokens, max_units)
        matrix = encode_cached(encoder, texts, cache, progress)
        return cls(matrix=matrix, starts=starts, fingerprint=encoder.fingerprint, capped=capped)

    def score_vector(self, qvec: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        """Best-chunk cosine per note for a unit query vector (zeros for an empty corpus)."""
        if self.n_docs == 0:
            return np.zeros(0, dtype=np.float64)
        sims = self.matrix @ qvec.astype(np.float32)
        return np.maximum.reduceat(sims, self.starts).astype(np.float64)


def corpus_chunks(
    corpus: Corpus, count_tokens: Callable[[str], int], max_tokens: int = 256, max_units: int = 0
) -> tuple[list[str], npt.NDArray[np.int64], int]:
    """The dense units of every note, in position order: (chunk texts, first row of each
    note, notes cut at `max_units`). What `DenseIndex.build` embeds and `rmh index` (local or
    on Ray) must find in the cache."""
    texts: list[str] = []
    starts = np.zeros(len(corpus), dtype=np.int64)
    capped = 0
    for i in range(len(corpus)):
        starts[i] = len(texts)
        speaker = corpus.frontmatter[i].get("speaker")
        chunks = chunk_note(
            corpus.titles[i],
            corpus.bodies[i],
            count_tokens,
            max_tokens,
            speaker.strip() if isinstance(speaker, str) else "",
            max_units + 1 if max_units > 0 else 0,  # one more tells a cut note apart
        )
        if 0 < max_units < len(chunks):
            chunks, capped = chunks[:max_units], capped + 1
        texts.extend(chunks)
    return texts, starts, capped


def dense_scores(index: DenseIndex, encoder: Encoder, query: str) -> npt.NDArray[np.float64]:
    """Embed `query` and score every note (the query is never cached: it is one call)."""
    if encoder.fingerprint != index.fingerprint:
        raise ValueError("dense index was built with a different encoder")
    qvec = encoder.encode([query])[0]
    return index.score_vector(qvec)
