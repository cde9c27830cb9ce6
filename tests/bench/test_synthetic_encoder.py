"""The synthetic benchmark encoder: deterministic, batch-independent, similarity from shared
words, and a memory that does not grow with the vocabulary."""

from __future__ import annotations

import tracemalloc

import numpy as np

from bench.synthetic_encoder import SyntheticEncoder


def test_rows_are_unit_and_an_empty_text_is_zero() -> None:
    enc = SyntheticEncoder()
    out = enc.encode(["alpha beta gamma", "", "delta"])
    assert out.dtype == np.float32 and out.shape == (3, enc.dim)
    np.testing.assert_allclose(np.linalg.norm(out[[0, 2]], axis=1), 1.0, rtol=1e-5)
    assert not out[1].any()


def test_a_text_gets_the_same_vector_in_any_batch_and_encoder() -> None:
    texts = ["the cat sat on the mat", "dogs run", "Mixed CASE words"]
    alone = np.vstack([SyntheticEncoder().encode([t]) for t in texts])
    together = SyntheticEncoder().encode(["padding words here", *texts])[1:]
    np.testing.assert_array_equal(alone, together)


def test_shared_words_make_texts_close_and_disjoint_ones_nearly_orthogonal() -> None:
    enc = SyntheticEncoder()
    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(2000)]
    base = [" ".join(rng.choice(words, 12)) for _ in range(40)]
    half = [" ".join(t.split()[:6] + [f"x{j}{k}" for k in range(6)]) for j, t in enumerate(base)]
    other = [" ".join(f"y{j}{k}" for k in range(12)) for j in range(40)]
    a, b, c = enc.encode(base), enc.encode(half), enc.encode(other)
    near = np.einsum("ij,ij->i", a, b)
    far = np.einsum("ij,ij->i", a, c)
    assert near.min() > 0.3 and np.abs(far).max() < 0.25
    assert near.mean() - np.abs(far).mean() > 0.35


def test_the_same_bag_of_words_differs_a_little() -> None:
    enc = SyntheticEncoder()
    a, b = enc.encode(["one two three", "three two one"])
    assert 0.95 < float(a @ b) < 1.0


def test_memory_does_not_grow_with_the_vocabulary() -> None:
    enc = SyntheticEncoder()

    def words(start: int) -> list[str]:
        return [" ".join(f"v{j}" for j in range(i, i + 10))
                for i in range(start, start + 80_000, 10)]

    tracemalloc.start()
    try:
        for s in range(0, 160_000, 80_000):  # fill the bounded memo of word hashes
            enc.encode(words(s))
        before = tracemalloc.get_traced_memory()[0]
        enc.encode(words(160_000))  # 80,000 words never seen
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 2**20
    assert enc.nbytes < 128 * 2**20
