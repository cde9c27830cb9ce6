"""The dense IVF of the same files is the same whatever order they were indexed in: training
puts the rows in a canonical order (ivf.canonical_order: by note path, then a key of the row)
and a scanned row's score depends on the row alone (np.vecdot), so two builds (or
compactions) whose notes sit at other positions (positions follow note ids, ids the indexing
history) probe the same lists and give every note the same bits. Updates retrain
(test_ivf_fresh.py)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import pytest

from bench.synthetic_encoder import SyntheticEncoder
from vault.retrieval.signals.dense import DenseIndex, DenseParams
from vault.retrieval.signals.dense_update import ivf_of
from vault.retrieval.signals.ivf import IvfParams

from ..retrieval_fixtures import make_corpus

WORDS = [f"w{i}" for i in range(300)]


@lru_cache(maxsize=1)
def encoder() -> SyntheticEncoder:
    return SyntheticEncoder()


def notes_of(seed: int, n: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    return [(f"n{k:05d}", " ".join(rng.choices(WORDS, k=10))) for k in range(n)]


def scores_by_path(d: DenseIndex, paths: Sequence[str], queries: list[str]) -> list[bytes]:
    out = []
    for q in encoder().encode(queries):
        s = d.score_vector(np.asarray(q, dtype=np.float32))
        out.append(s[np.argsort(np.asarray(paths, dtype=str), kind="stable")].tobytes())
    return out


@pytest.mark.parametrize("seed", range(3))
def test_an_ivf_build_gives_the_same_files_the_same_scores_in_any_order(seed: int) -> None:
    notes = notes_of(seed, 1200)
    queries = [" ".join(random.Random(seed + j).choices(WORDS, k=3)) for j in range(8)]
    params = DenseParams(approx_above=1, ivf=IvfParams(nprobe=3))
    got = []
    for shuffle in (None, 7, 8):
        ns = list(notes)
        if shuffle is not None:
            random.Random(shuffle).shuffle(ns)
        corpus = make_corpus(ns)
        d = DenseIndex.build(corpus, encoder(), None, params=params)
        assert d.ivf is not None
        got.append(scores_by_path(d, corpus.paths, queries))
    zeros = np.frombuffer(got[0][0], dtype=np.float64) == 0
    assert zeros.any() and not zeros.all()  # the probed lists decide who scores
    assert got[1] == got[0] and got[2] == got[0]


def test_lists_trained_on_the_same_rows_in_another_note_order_are_the_same() -> None:
    """ivf_of (a compaction's training) over one set of notes' rows, the notes at other
    positions: the same centroids, bit for bit."""
    rng = np.random.default_rng(4)
    n = 500
    counts = rng.integers(1, 4, n)
    rows = [rng.standard_normal((int(c), 32)).astype(np.float32) for c in counts]
    paths = [f"d{k % 7}/n{k:04d}.md" for k in range(n)]
    params = IvfParams(train_per_list=8)
    cents = []
    for perm in (np.arange(n), rng.permutation(n), rng.permutation(n)):
        inv = np.argsort(perm)  # the note at new position j is old note inv[j]
        matrix = np.concatenate([rows[i] for i in inv])
        note = np.repeat(np.arange(n), counts[inv]).astype(np.int32)
        ivf = ivf_of(matrix, note, params, None, [paths[i] for i in inv])
        cents.append((ivf.centroids.tobytes(), ivf.mean.tobytes()))
    assert cents[1] == cents[0] and cents[2] == cents[0]
