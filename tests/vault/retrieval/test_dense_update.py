"""DenseIndex.updated (signals/dense_update.py): a delta, removals included, applied in place
scores bit for bit like a fresh build."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest

from bench.synthetic_encoder import SyntheticEncoder
from vault.retrieval.encoders import MiniLmEncoder
from vault.retrieval.signals.dense import DenseIndex, DenseParams
from vault.retrieval.signals.dense_units import corpus_chunks, note_chunks
from vault.storage.corpus import Corpus, CorpusDelta, Since
from vault.storage.embeddings import MemoryEmbeddingCache

from ..retrieval_fixtures import make_corpus
from .dense_history import Counting, history, start

WORDS = [f"{a}{b}" for a in ("red", "blue", "green", "amber", "violet")
         for b in ("fox", "owl", "elk", "yak", "cod", "emu", "gnu")]
TOKENS = 12  # a small window so notes have one to several chunks


def body(rng: np.random.Generator) -> str:
    sentences = [" ".join(rng.choice(WORDS, int(rng.integers(3, 9)))) + "."
                 for _ in range(int(rng.integers(1, 5)))]
    return " ".join(sentences)


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


def changed_chunks(corpus: Corpus, since: Since, count: Callable[[str], int]) -> int:
    """Distinct chunk texts of the notes `since` says changed (what an update embeds)."""
    texts: set[str] = set()
    for p in since.changed:
        texts.update(note_chunks(corpus.titles[p], corpus.bodies[p], corpus.frontmatter[p],
                                 count, TOKENS, 3)[0])
    return len(texts)


@pytest.mark.parametrize("seed", range(12))
def test_histories_with_removals_score_like_a_fresh_build(seed: int) -> None:
    """Adds, edits, renames and removals (first, last, several, every note; removed notes
    added back), the index following every generation or every second or third (composed
    removals): every score equals a fresh build's bit for bit, only the changed notes are
    embedded, and the base is shared until a compaction."""
    rng = np.random.default_rng(seed)
    fraction = (0.05, 0.4, 10.0)[seed % 3]
    every = 1 + (seed // 3) % 3
    enc, plain, cache = Counting(), SyntheticEncoder(), MemoryEmbeddingCache()
    params = DenseParams(approx_above=0, compact_fraction=fraction)
    first = start([(f"note {i}", body(rng)) for i in range(int(rng.integers(1, 30)))])
    idx = DenseIndex.build(first.corpus, enc, None, TOKENS, None, 3, params)
    compactions = removals = 0
    for step, state in enumerate(history(first, 18, seed, body)):
        if step % every and step != 17:
            continue
        corpus, before = state.corpus, idx
        assert corpus.delta is not None
        since = corpus.delta.changes_since(idx.generation, idx.n_docs, len(corpus))
        assert since is not None
        removals += bool(since.removed)
        enc.encoded = 0
        idx = idx.updated(corpus, enc, None, TOKENS, None, 3)
        assert enc.encoded == changed_chunks(corpus, since, enc.count_tokens)
        compacted = idx.matrix is not before.matrix
        compactions += compacted
        if not compacted:
            assert idx.starts is before.starts and idx.overlay.removal.n == len(before.starts)
        fresh = DenseIndex.build(corpus, plain, cache, TOKENS, None, 3, params)
        assert idx.generation == corpus.generation and idx.n_docs == len(corpus)
        assert (idx.n_chunks, idx.capped) == (fresh.n_chunks, fresh.capped)
        assert np.array_equal(idx.cut, fresh.cut)
        for q in queries(enc, rng, 4):
            assert np.array_equal(idx.score_vector(q), fresh.score_vector(q))
    assert removals > 0
    assert compactions == 0 if fraction >= 10 else compactions > 0
    compacted_idx = idx._compacted()
    assert np.array_equal(compacted_idx.matrix, fresh.matrix)
    assert np.array_equal(compacted_idx.starts, fresh.starts)
    assert not compacted_idx.overlay.removal and not compacted_idx.stale.any()


def test_a_removal_masks_the_removed_notes_and_shares_the_base() -> None:
    """Removing notes 0 and 3 of 8 embeds nothing and copies no base row; the notes after
    them score at their new positions what they scored before."""
    rng = np.random.default_rng(11)
    corpus = make_corpus([(f"note {i}", body(rng)) for i in range(8)])
    enc = Counting()
    idx = DenseIndex.build(corpus, enc, None, TOKENS, params=DenseParams(compact_fraction=5))
    nxt = make_corpus([(t, b) for i, (t, b) in enumerate(zip(corpus.titles, corpus.bodies,
                                                              strict=True)) if i not in (0, 3)])
    nxt = replace(nxt, generation=2, delta=CorpusDelta(1, 8, (), removed=(0, 3)))
    enc.encoded = 0
    up = idx.updated(nxt, enc, None, TOKENS)
    assert enc.encoded == 0 and up.matrix is idx.matrix and up.n_docs == 6
    assert up.stale.tolist() == [i in (0, 3) for i in range(8)]
    assert up.overlay.removal.removed == (0, 3)
    q = queries(enc, rng, 1)[0]
    assert up.score_vector(q).tolist() == np.delete(idx.score_vector(q), [0, 3]).tolist()
