"""DenseIndex.updated: a delta applied in place scores bit for bit like a fresh build."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pytest

from bench.synthetic_encoder import SyntheticEncoder
from vault.retrieval.encoders import MiniLmEncoder
from vault.retrieval.signals.dense import DenseIndex, DenseParams, corpus_chunks
from vault.storage.corpus import Corpus, CorpusDelta
from vault.storage.embeddings import MemoryEmbeddingCache

from ..retrieval_fixtures import make_corpus

WORDS = [f"{a}{b}" for a in ("red", "blue", "green", "amber", "violet")
         for b in ("fox", "owl", "elk", "yak", "cod", "emu", "gnu")]
TOKENS = 12  # a small window so notes have one to several chunks


def body(rng: np.random.Generator) -> str:
    sentences = [" ".join(rng.choice(WORDS, int(rng.integers(3, 9)))) + "."
                 for _ in range(int(rng.integers(1, 5)))]
    return " ".join(sentences)


class Counting(SyntheticEncoder):
    """The synthetic encoder, counting the texts it embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.encoded = 0

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.encoded += len(texts)
        return super().encode(texts)


def edited(corpus: Corpus, changes: dict[int, str], added: list[str]) -> Corpus:
    """`corpus` with new bodies at `changes`, `added` notes appended, and its delta."""
    bodies = list(corpus.bodies)
    for i, b in changes.items():
        bodies[i] = b
    notes = [(t, bodies[i]) for i, t in enumerate(corpus.titles)]
    notes += [(f"added {len(notes) + j}", b) for j, b in enumerate(added)]
    out = make_corpus(notes, generation=corpus.generation + 1)
    return replace(out, delta=CorpusDelta(corpus.generation, len(corpus),
                                          tuple(sorted(changes))))


def queries(enc: SyntheticEncoder, rng: np.random.Generator, n: int = 6) -> np.ndarray:
    return enc.encode([" ".join(rng.choice(WORDS, 4)) for _ in range(n)])


@pytest.mark.parametrize(("seed", "fraction"), [(1, 0.3), (2, 0.3), (3, 10.0), (4, 0.05)])
def test_random_edit_sequences_score_like_a_fresh_build(seed: int, fraction: float) -> None:
    rng = np.random.default_rng(seed)
    enc, cache = SyntheticEncoder(), MemoryEmbeddingCache()
    params = DenseParams(approx_above=0, compact_fraction=fraction)
    corpus = make_corpus([(f"note {i}", body(rng)) for i in range(30)])
    idx = DenseIndex.build(corpus, enc, cache, TOKENS, None, 3, params)
    compactions = 0
    for _ in range(12):
        n = len(corpus)
        picks = rng.choice(n, int(rng.integers(0, 4)), replace=False)
        changes = {int(i): body(rng) for i in picks}
        added = [body(rng) for _ in range(int(rng.integers(0, 3)))]
        corpus = edited(corpus, changes, added)
        before = idx.matrix
        idx = idx.updated(corpus, enc, cache, TOKENS, None, 3)
        compactions += idx.matrix is not before
        fresh = DenseIndex.build(corpus, enc, cache, TOKENS, None, 3, params)
        assert idx.generation == corpus.generation and idx.n_docs == len(corpus)
        assert (idx.n_chunks, idx.capped) == (fresh.n_chunks, fresh.capped)
        for q in queries(enc, rng):
            assert np.array_equal(idx.score_vector(q), fresh.score_vector(q))
    if fraction >= 10:
        assert compactions == 0
    else:
        assert compactions > 0
    compacted = idx._compacted()
    assert np.array_equal(compacted.matrix, fresh.matrix)
    assert np.array_equal(compacted.starts, fresh.starts)


def test_update_embeds_only_changed_and_appended_notes() -> None:
    rng = np.random.default_rng(7)
    corpus = make_corpus([(f"note {i}", body(rng)) for i in range(20)])
    enc = Counting()
    idx = DenseIndex.build(corpus, enc, None, TOKENS, params=DenseParams(compact_fraction=0.5))
    enc.encoded = 0
    nxt = edited(corpus, {4: "amberfox violetyak."}, ["redowl greenemu."])
    up = idx.updated(nxt, enc, None, TOKENS)
    assert enc.encoded == 2  # one chunk each: the changed note and the appended one
    assert up.matrix is idx.matrix  # the base is shared, not copied
    assert up.stale.tolist() == [i == 4 for i in range(20)]
    q = enc.encode(["amberfox violetyak."])[0]
    assert int(np.argmax(up.score_vector(q))) == 4


def test_no_delta_or_foreign_base_rebuilds() -> None:
    rng = np.random.default_rng(8)
    corpus = make_corpus([(f"note {i}", body(rng)) for i in range(10)])
    enc = Counting()
    idx = DenseIndex.build(corpus, enc, None, TOKENS)
    nxt = edited(corpus, {1: "redfox."}, [])
    assert nxt.delta is not None
    foreign = replace(nxt, delta=replace(nxt.delta, base_generation=99))
    for c in (replace(nxt, delta=None), foreign):
        enc.encoded = 0
        up = idx.updated(c, enc, None, TOKENS)
        texts, _, _ = corpus_chunks(c, enc.count_tokens, TOKENS)
        assert enc.encoded == len(set(texts))  # every distinct chunk embedded again
        assert not up.stale.any() and up.delta.matrix.shape[0] == 0
    same = idx.updated(replace(nxt, delta=replace(nxt.delta, changed=())), enc, None, TOKENS)
    assert same.matrix is idx.matrix and same.generation == nxt.generation


def test_exact_scores_equal_the_obvious_loop() -> None:
    rng = np.random.default_rng(9)
    corpus = make_corpus([(f"note {i}", body(rng)) for i in range(15)])
    enc = SyntheticEncoder()
    idx = DenseIndex.build(corpus, enc, None, TOKENS)
    q = queries(enc, rng, 1)[0]
    ends = [*idx.starts[1:].tolist(), idx.matrix.shape[0]]
    slow = [max(float(r @ q) for r in idx.matrix[s:e]) for s, e in zip(idx.starts, ends,
                                                                         strict=True)]
    assert np.allclose(idx.score_vector(q), slow, atol=1e-6)


def test_update_with_the_real_encoder_and_a_shared_cache() -> None:
    notes = [(f"trip {i}", f"We drove to the {w} lake and camped for {i} nights.")
             for i, w in enumerate(["north", "south", "east", "west", "hidden", "frozen"])]
    corpus = make_corpus(notes)
    enc, cache = MiniLmEncoder(), MemoryEmbeddingCache()
    idx = DenseIndex.build(corpus, enc, cache)
    nxt = edited(corpus, {2: "The violin lesson moved to Thursday."}, ["Bought new tent poles."])
    up = idx.updated(nxt, enc, cache)
    fresh = DenseIndex.build(nxt, enc, cache)
    q = enc.encode(["when is the music lesson"])[0]
    assert np.array_equal(up.score_vector(q), fresh.score_vector(q))
    assert int(np.argmax(up.score_vector(q))) == 2
