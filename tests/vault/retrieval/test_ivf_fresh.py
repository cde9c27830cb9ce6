"""The approximate dense index (IVF) after any sequence of adds, edits, renames and removals
equals a fresh build of the final notes, byte for byte: in a running process (`updated`,
compacting) and in one catching up from a saved base (`compact=False`), with the codes in
memory or on disk, and against a build whose notes sit at other positions (README: "same
inputs, same bytes out"). On main a caught-up index kept the base's lists and a fresh build
trained its own, so from the first change on some notes scored differently."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from bench.synthetic_encoder import SyntheticEncoder
from vault.erasure_steps import drop_derived
from vault.retrieval import ivf_store
from vault.retrieval.signals.dense import DenseIndex, DenseParams
from vault.retrieval.signals.ivf import IvfParams
from vault.storage.corpus import Corpus
from vault.storage.embeddings import MemoryEmbeddingCache

from ..retrieval_fixtures import make_corpus
from .dense_history import Counting, history, start, topic_body

PARAMS = DenseParams(approx_above=60, ivf=IvfParams(nprobe=3, train_per_list=16))


def by_path(d: DenseIndex, paths: Sequence[str], qs: np.ndarray) -> list[list[tuple[str, float]]]:
    """Each query's (path, score) of every note, sorted: what a search can tell apart."""
    return [sorted(zip(paths, d.score_vector(q).tolist(), strict=True)) for q in qs]


def reordered(c: Corpus) -> Corpus:
    """The same notes in reverse order (other positions: another indexing history)."""
    notes = list(zip(c.titles, c.bodies, strict=True))[::-1]
    return make_corpus(notes, generation=c.generation)


@pytest.mark.parametrize(("seed", "disk"), [(s, s % 2 == 1) for s in range(6)])
def test_every_state_of_a_history_equals_a_fresh_build(seed: int, disk: bool,
                                                       tmp_path: Path) -> None:
    rng = np.random.default_rng(300 + seed)
    enc, cache = SyntheticEncoder(), MemoryEmbeddingCache()
    scratch = str(tmp_path) if disk else None
    first = start([(f"note {i}", topic_body(rng)) for i in range(90)])
    running = DenseIndex.build(first.corpus, enc, cache, params=PARAMS, scratch=scratch)
    base = running  # a saved base that each later "process" catches up from
    qs = enc.encode([topic_body(rng) for _ in range(5)] + ["note 3"])
    approx = 0
    for state in history(first, 12, seed, topic_body):
        c = state.corpus
        running = running.updated(c, enc, cache)
        caught = base.updated(c, enc, cache, compact=False) if base.generation + 1 == \
            c.generation else None
        fresh = DenseIndex.build(c, enc, cache, params=PARAMS)
        other = DenseIndex.build(reordered(c), enc, cache, params=PARAMS)
        approx += fresh.ivf is not None
        want = by_path(fresh, c.paths, qs)
        assert by_path(running, c.paths, qs) == want
        assert by_path(other, reordered(c).paths, qs) == want
        if caught is not None:
            assert by_path(caught, c.paths, qs) == want
        base = running
    assert approx >= 6  # most states are on the IVF layout


def test_a_catch_up_over_many_changes_equals_a_fresh_build() -> None:
    """A process that catches up from a base over several changes at once (one delta
    chain), as a new process after outside edits does."""
    rng = np.random.default_rng(5)
    enc, cache = SyntheticEncoder(), MemoryEmbeddingCache()
    first = start([(f"note {i}", topic_body(rng)) for i in range(120)])
    base = DenseIndex.build(first.corpus, enc, cache, params=PARAMS)
    assert base.ivf is not None
    qs = enc.encode([topic_body(rng) for _ in range(8)])
    for state in history(first, 6, 1, topic_body):
        last = state
    c = last.corpus
    caught = base.updated(c, enc, cache, compact=False)
    fresh = DenseIndex.build(c, enc, cache, params=PARAMS)
    assert caught.ivf is not None
    assert by_path(caught, c.paths, qs) == by_path(fresh, c.paths, qs)
    for name in ("centroids", "mean", "offsets", "scale"):
        assert getattr(caught.ivf, name).tobytes() == getattr(fresh.ivf, name).tobytes()


@pytest.mark.parametrize(("notes", "above", "seed"), [(56, 55, 3), (50, 52, 4)])
def test_crossing_the_threshold_either_way_gives_the_layout_a_build_picks(
        notes: int, above: int, seed: int) -> None:
    """Over `approx_above` and back under it (seed 3 removes every note midway)."""
    rng = np.random.default_rng(9)
    enc = SyntheticEncoder()
    first = start([(f"note {i}", topic_body(rng)) for i in range(notes)])
    params = replace(PARAMS, approx_above=above)
    idx = DenseIndex.build(first.corpus, enc, None, params=params)
    layouts = [idx.ivf is None]
    for state in history(first, 12, seed, topic_body):
        idx = idx.updated(state.corpus, enc, None, compact=False)
        fresh = DenseIndex.build(state.corpus, enc, None, params=params)
        assert (idx.ivf is None) == (fresh.ivf is None)
        layouts.append(fresh.ivf is None)
        q = enc.encode([topic_body(rng)])
        assert by_path(idx, state.corpus.paths, q) == by_path(fresh, state.corpus.paths, q)
    assert layouts[0] != layouts[-1]  # the layout changed on the way


def test_a_catch_up_saves_what_it_trained_and_erasure_removes_it(tmp_path: Path) -> None:
    """The first catch-up to a state trains and saves (ivf_store.CAUGHT); the next loads it
    (no note embedded, the same bytes as a fresh build, the base's store untouched); `rmh
    forget`'s drop_derived removes both stores."""
    rng = np.random.default_rng(12)
    enc, scratch = Counting(), str(tmp_path)
    first = start([(f"note {i}", topic_body(rng)) for i in range(90)])
    DenseIndex.build(first.corpus, enc, None, params=PARAMS, scratch=scratch)
    built = sorted(p.name for p in tmp_path.iterdir())
    for state in history(first, 3, 2, topic_body):
        last = state.corpus
    one = DenseIndex.caught_up(first.corpus, last, enc, None, params=PARAMS, scratch=scratch)
    assert (tmp_path / ivf_store.CAUGHT.index).is_file()
    enc.encoded = 0
    two = DenseIndex.caught_up(first.corpus, last, enc, None, params=PARAMS, scratch=scratch)
    assert enc.encoded == 0 and two.ivf is not None
    fresh = DenseIndex.build(last, enc, None, params=PARAMS)
    qs = enc.encode([topic_body(rng) for _ in range(4)])
    assert by_path(one, last.paths, qs) == by_path(two, last.paths, qs) == \
        by_path(fresh, last.paths, qs)
    assert built == sorted(p.name for p in tmp_path.iterdir()
                           if not p.name.startswith("dense-ivf-now"))
    drop_derived(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == []
