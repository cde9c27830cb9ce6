"""BM25 and the conjunctive channel updated in place score exactly as a fresh build."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from vault.notes.text import tokenize
from vault.retrieval.signals import conjunctive
from vault.retrieval.signals.bm25 import Bm25Index
from vault.retrieval.signals.conjunctive import ConjunctiveIndex
from vault.retrieval.signals.postings import Postings
from vault.shift import Shift

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
    assert np.array_equal(idx.terms, fresh.terms)
    assert idx.occurrence_median == fresh.occurrence_median


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
        flat, counts, terms = unit_codes.coded(texts)
    finally:
        unit_codes.BLOCK = old
    one = [unit_codes.text_codes(t) for t in texts]
    assert counts.tolist() == [len(c) for c in one]
    assert terms.tolist() == [unit_codes.term_count(tokenize(t)) for t in texts]
    assert np.array_equal(flat, np.concatenate(one))


def test_postings_keep_whole_counts_in_the_narrowest_exact_dtype() -> None:
    ptr = np.asarray([0, 2, 3])
    rows = np.asarray([0, 1, 1])
    for data, kind in (([1.0, 3.0, 255.0], np.uint8), ([1.0, 300.0, 2.0], np.uint16),
                       ([1.0, 70000.0, 2.0], np.float32), ([1.0, 0.5, 2.0], np.float32)):
        p = Postings.from_csc(ptr, rows, np.asarray(data, np.float32), 2)
        assert p.vals is not None and p.vals.dtype == kind
        assert p.column(0)[1].tolist() == data[:2] and p.entries(1)[1].tolist() == data[2:]



def removals(seed: int, n0: int, steps: int) -> list[tuple[list[str], Shift, dict[int, str]]]:
    """Steps of (the documents before, a removal from them, then changes: kept positions
    edited and new ones appended, sometimes a removed document's text again); some remove
    the first, the last or every document. Each document but the re-added ones holds a term
    of its own, so a removal can take a term out of every document."""
    rng = random.Random(seed)
    docs = [f"{text(rng)} solo{i}" for i in range(n0)]
    gone: list[str] = []
    out = []
    for k in range(steps):
        n, roll = len(docs), rng.random()
        removed = (list(range(n)) if n and roll < 0.1 else [0] if n and roll < 0.15
                   else [n - 1] if n and roll < 0.2
                   else sorted(rng.sample(range(n), rng.randint(0, min(3, n)))))
        shift = Shift(tuple(removed), n)
        gone += [docs[p] for p in removed]
        kept = [d for p, d in enumerate(docs) if p not in set(removed)]
        change = {p: text(rng) for p in rng.sample(range(len(kept)), min(2, len(kept)))}
        for j in range(rng.randint(0, 3)):
            change[len(kept) + j] = (rng.choice(gone) if gone and rng.random() < 0.4
                                     else f"{text(rng)} solo{k}x{j}")
        out.append((docs, shift, dict(sorted(change.items()))))
        docs = kept + [""] * (max(change, default=-1) + 1 - len(kept))
        for p, t in change.items():
            docs[p] = t
    out.append((docs, Shift.none(len(docs)), {}))
    return out


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n0=st.integers(0, 12), steps=st.integers(1, 8))
def test_removals_then_changes_equal_a_fresh_build(seed: int, n0: int, steps: int) -> None:
    """BM25 and the conjunctive index after `removed` then `updated`, step after step, score
    every query as a fresh build of the final documents, bit for bit (the removed
    documents' terms are the only ones read again)."""
    seq = removals(seed, n0, steps)
    bm = Bm25Index.from_documents([tokenize(d) for d in seq[0][0]], stem=True)
    cj = ConjunctiveIndex.from_texts(seq[0][0])
    for docs, shift, change in seq[:-1]:
        kept = [d for p, d in enumerate(docs) if shift.keep[p]]
        n = max(shift.kept, max(change, default=-1) + 1)
        bm = bm.removed(shift, [tokenize(docs[p]) for p in shift.removed]).updated(
            {p: (tokenize(kept[p]) if p < len(kept) else None, tokenize(t))
             for p, t in change.items()}, n)
        cj = cj.removed(shift, [docs[p] for p in shift.removed]).updated(
            {p: (kept[p] if p < len(kept) else None, t) for p, t in change.items()}, n)
    final = seq[-1][0]
    fresh_bm = Bm25Index.from_documents([tokenize(d) for d in final], stem=True)
    fresh_cj = ConjunctiveIndex.from_texts(final)
    solos = [f"solo{i}" for i in range(n0)] + ["solo0x0 solo1x1 auth"]
    for q in (*QUERIES, *solos):
        assert np.array_equal(bm.score(q), fresh_bm.score(q)), q
        assert np.array_equal(cj.score(q), fresh_cj.score(q)), q
        assert bm.frequency(tokenize(q)) == fresh_bm.frequency(tokenize(q)), q
    assert bm.total == fresh_bm.total and np.array_equal(bm.lengths, fresh_bm.lengths)
    for name in ("m", "s1", "s2"):
        assert np.array_equal(getattr(cj, name), getattr(fresh_cj, name)), name


def test_postings_removed_keep_the_base_and_map_rows_on_read() -> None:
    # column 0: rows 0, 2, 4; column 1: rows 1, 2, 3
    base = Postings.build(np.asarray([0, 1, 2, 2, 3, 4]), np.asarray([0, 1, 0, 1, 1, 0]), 5, 2)
    edited = base.replace({4: (np.asarray([1]), np.asarray([1.0]))})  # row 4: column 1 now
    out = edited.removed(Shift((0, 2), 5))  # rows 1, 3, 4 -> 0, 1, 2
    assert out.rows is base.rows and out.ptr is base.ptr  # the base's lists untouched
    assert out.column(0)[0].tolist() == []
    assert out.column(1)[0].tolist() == [0, 1, 2]  # base rows 1, 3, then the delta's 4 -> 2
    assert out.entries(1)[0].tolist() == [0, 1, 2]
    assert out.delta_docs == frozenset({2}) and out.removed_docs == 2
    again = out.replace({0: (np.asarray([0]), np.asarray([1.0]))}).removed(Shift((1,), 3))
    # now row 0 (base 1) holds column 0 only; base row 3 is removed; 4 -> 1
    assert again.column(0)[0].tolist() == [0] and again.column(1)[0].tolist() == [1]
    assert again.removed_docs == 3 and edited.column(0)[0].tolist() == [0, 2]


def _replayed(seed: int, n0: int, steps: int) -> tuple[ConjunctiveIndex, list[str]]:
    """The conjunctive index after `removals(seed, n0, steps)` applied step by step, and the
    final documents."""
    seq = removals(seed, n0, steps)
    cj = ConjunctiveIndex.from_texts(seq[0][0])
    for docs, shift, change in seq[:-1]:
        kept = [d for p, d in enumerate(docs) if shift.keep[p]]
        cj = cj.removed(shift, [docs[p] for p in shift.removed]).updated(
            {p: (kept[p] if p < len(kept) else None, t) for p, t in change.items()},
            max(shift.kept, max(change, default=-1) + 1))
    return cj, seq[-1][0]


def test_a_gather_of_many_columns_equals_each_column_read_alone() -> None:
    """`Postings.rows_of` (one gather, `_moved`'s) holds the same (column, row) entries as
    `column` read for each column, over bases with stale, removed and delta rows."""
    for seed in range(30):
        cj, _ = _replayed(seed, 1 + seed % 12, 1 + seed % 7)
        p = cj.postings
        rng = random.Random(seed)
        cols = np.asarray(sorted(rng.sample(range(cj.vocab.size), min(cj.vocab.size, 9))),
                          np.int64)
        rows, which = p.rows_of(cols)
        got = sorted(zip(which.tolist(), rows.tolist(), strict=True))
        want = sorted((j, r) for j, c in enumerate(cols.tolist()) for r in p.column(c)[0].tolist())
        assert got == want, seed
        assert all(p.column_sizes(cols)[j] >= len(p.column(c)[0]) for j, c in enumerate(cols))


def test_updates_in_blocks_of_a_few_entries_equal_a_fresh_build(monkeypatch: Any) -> None:
    """`_moved` reads the moved columns in blocks of about ENTRY_BLOCK entries; blocks of
    two (one column each, mostly) give the fresh build's integer sums too."""
    monkeypatch.setattr(conjunctive, "ENTRY_BLOCK", 2)
    for seed in range(20):
        cj, final = _replayed(seed, 2 + seed % 10, 1 + seed % 6)
        fresh = ConjunctiveIndex.from_texts(final)
        for name in ("m", "s1", "s2"):
            assert np.array_equal(getattr(cj, name), getattr(fresh, name)), (seed, name)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n0=st.integers(0, 12), steps=st.integers(1, 8),
       alone=st.sampled_from([0, 1, 2, 3, 5]))
def test_columns_read_alone_or_in_blocks_equal_a_fresh_build(
        seed: int, n0: int, steps: int, alone: int) -> None:
    """`_moved` reads a column of at least ALONE entries on its own (its live rows, added to
    once each) and the others in blocks: with any split (0: every column alone) the sums
    after generated removals, edits and additions are the fresh build's (COLD39)."""
    old = conjunctive.ALONE
    conjunctive.ALONE = alone  # hypothesis runs examples in one test call: no monkeypatch
    try:
        cj, final = _replayed(seed, n0, steps)
    finally:
        conjunctive.ALONE = old
    fresh = ConjunctiveIndex.from_texts(final)
    for name in ("m", "s1", "s2"):
        assert np.array_equal(getattr(cj, name), getattr(fresh, name)), (seed, name)
    for q in (*QUERIES, "solo0 solo1x0 auth"):
        assert cj.score(q).tobytes() == fresh.score(q).tobytes(), q
