"""BM25 and the conjunctive channel updated in place score exactly as a fresh build."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from vault.notes.text import tokenize
from vault.retrieval.signals.bm25 import Bm25Index
from vault.retrieval.signals.conjunctive import ConjunctiveIndex
from vault.retrieval.signals.postings import Postings

WORDS = "auth billing cache monday tuesday outage deploy rollback alice bob queue the of".split()
QUERIES = ("auth outage on monday", "billing cache", "alice deploy rollback tuesday",
           "queue", "zzz unknown", "the of")


def text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 12)))


def edit_sequence(seed: int, n0: int, steps: int) -> tuple[list[str], list[dict[int, str]]]:
    rng = random.Random(seed)
    docs = [text(rng) for _ in range(n0)]
    seq: list[dict[int, str]] = []
    n = n0
    for _ in range(steps):
        change: dict[int, str] = {}
        for _ in range(rng.randint(1, 3)):
            if rng.random() < 0.3 or not n:
                change[n] = text(rng)
                n += 1
            else:
                change[rng.randrange(n)] = text(rng)
        seq.append(dict(sorted(change.items())))
    return docs, seq


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n0=st.integers(0, 12), steps=st.integers(1, 8))
def test_bm25_updates_equal_a_fresh_build(seed: int, n0: int, steps: int) -> None:
    docs, seq = edit_sequence(seed, n0, steps)
    idx = Bm25Index.from_documents([tokenize(d) for d in docs])
    for change in seq:
        n = max(len(docs), max(change) + 1)
        pairs = {p: (tokenize(docs[p]) if p < len(docs) else None, tokenize(t))
                 for p, t in change.items()}
        idx = idx.updated(pairs, n)
        docs = docs + [""] * (n - len(docs))
        for p, t in change.items():
            docs[p] = t
    fresh = Bm25Index.from_documents([tokenize(d) for d in docs])
    for q in QUERIES:
        assert np.array_equal(idx.score(q), fresh.score(q)), q


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n0=st.integers(0, 12), steps=st.integers(1, 8))
def test_conjunctive_updates_equal_a_fresh_build(seed: int, n0: int, steps: int) -> None:
    docs, seq = edit_sequence(seed, n0, steps)
    idx = ConjunctiveIndex.from_texts(docs)
    for change in seq:
        n = max(len(docs), max(change) + 1)
        idx = idx.updated({p: (docs[p] if p < len(docs) else None, t)
                           for p, t in change.items()}, n)
        docs = docs + [""] * (n - len(docs))
        for p, t in change.items():
            docs[p] = t
    fresh = ConjunctiveIndex.from_texts(docs)
    for q in QUERIES:
        assert np.array_equal(idx.score(q), fresh.score(q)), q
    assert np.array_equal(idx.s1, fresh.s1) and np.array_equal(idx.s2, fresh.s2)
    assert np.array_equal(idx.m, fresh.m)


def test_postings_replace_keeps_the_base_and_drops_stale_rows() -> None:
    rows = np.asarray([0, 0, 1, 2], dtype=np.int64)
    cols = np.asarray([0, 1, 1, 0], dtype=np.int64)
    base = Postings.build(rows, cols, 3, 2)
    assert base.column(0)[0].tolist() == [0, 2]
    new = base.replace({0: (np.asarray([1]), np.asarray([1.0])),
                        3: (np.asarray([0]), np.asarray([1.0]))})
    assert new.column(0)[0].tolist() == [2, 3]  # row 0 left column 0; row 3 is new
    assert sorted(new.column(1)[0].tolist()) == [0, 1]
    assert base.column(0)[0].tolist() == [0, 2]  # the old one is unchanged
    assert new.rows is base.rows  # nothing of the base copied


def test_block_hashing_equals_one_text_at_a_time() -> None:
    from vault.retrieval.signals import unit_codes

    rng = random.Random(3)
    texts = [text(rng) for _ in range(50)] + ["", "auth auth auth", "the of"]
    old = unit_codes.BLOCK
    unit_codes.BLOCK = 7  # several blocks, one partial
    try:
        flat, counts = unit_codes.many_codes(texts)
    finally:
        unit_codes.BLOCK = old
    one = [unit_codes.text_codes(t) for t in texts]
    assert counts.tolist() == [len(c) for c in one]
    assert np.array_equal(flat, np.concatenate(one))


def test_postings_keep_whole_counts_in_the_narrowest_exact_dtype() -> None:
    ptr = np.asarray([0, 2, 3])
    rows = np.asarray([0, 1, 1])
    for data, kind in (([1.0, 3.0, 255.0], np.uint8), ([1.0, 300.0, 2.0], np.uint16),
                       ([1.0, 70000.0, 2.0], np.float32), ([1.0, 0.5, 2.0], np.float32)):
        p = Postings.from_csc(ptr, rows, np.asarray(data, np.float32), 2)
        assert p.vals is not None and p.vals.dtype == kind
        assert p.column(0)[1].tolist() == data[:2] and p.entries(1)[1].tolist() == data[2:]
