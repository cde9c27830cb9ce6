"""`DenseParams.retrain_max_rows` bounds the IVF training a change pays (signals/dense.py):
up to it every change trains the lists again (a fresh build's: test_ivf_fresh.py, whose
indexes are far under the default); above it the index keeps its lists, new chunks join the
nearest one, the search still answers, `untrained_rows` and the dense stage's report say how
many rows changed since the training, and `retrained` (`rmh index`) trains it again: then it
equals a fresh build, and a later process loads what it saved instead of training."""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from bench.synthetic_encoder import SyntheticEncoder
from vault import DenseParams, SearchEngine, SearchParams, Vault
from vault.retrieval import ivf_store
from vault.retrieval.signals.dense import DenseIndex
from vault.retrieval.signals.ivf import IvfParams
from vault.retrieval.signals.registry import DENSE
from vault.storage.embeddings import EmbeddingCache, MemoryEmbeddingCache

from .dense_history import Counting, history, start, topic_body
from .folder_history import WORDS, linked_text, make_vault
from .test_ivf_fresh import by_path

PARAMS = DenseParams(approx_above=60, ivf=IvfParams(nprobe=3, train_per_list=16))


def _lists(d: DenseIndex) -> bytes:
    assert d.ivf is not None
    return d.ivf.centroids.tobytes() + d.ivf.mean.tobytes()


@pytest.mark.parametrize(("seed", "compact"), [(1, False), (2, True), (4, False)])
def test_above_the_bound_the_lists_stay_and_the_staleness_is_said(
        seed: int, compact: bool) -> None:
    rng = np.random.default_rng(40 + seed)
    enc, cache = SyntheticEncoder(), MemoryEmbeddingCache()
    params = replace(PARAMS, retrain_max_rows=1, compact_fraction=100.0,
                     retrain_share=100.0)
    first = start([(f"note {i}", topic_body(rng)) for i in range(90)])
    base = DenseIndex.build(first.corpus, enc, cache, params=params)
    lists = _lists(base)
    idx, differs = base, 0
    for state in history(first, 5, seed, topic_body):
        c = state.corpus
        idx = idx.updated(c, enc, cache, compact=compact)
        if idx.ivf is None:  # every note removed (seed % 3 == 0 does; not these seeds)
            continue
        assert _lists(idx) == lists  # no training at a change above the bound
        fresh = DenseIndex.build(c, enc, cache, params=params)
        qs = enc.encode([c.bodies[-1], topic_body(rng)])
        got = idx.score_vector(qs[0])
        assert c.paths[int(np.argmax(got))] == c.paths[-1] and got.max() > 0.5  # answers
        differs += by_path(idx, c.paths, qs) != by_path(fresh, c.paths, qs)
        if idx.untrained_rows:
            assert f"trained before {idx.untrained_rows} of its chunk rows changed" in \
                DENSE.ran(idx)
            assert "rmh index" in DENSE.ran(idx)
        again = idx.retrained(c)
        assert again.untrained_rows == 0 and DENSE.ran(again) == "ran"
        assert by_path(again, c.paths, qs) == by_path(fresh, c.paths, qs)
        assert _lists(again) == _lists(fresh)
    assert idx.untrained_rows > 0
    assert differs  # what the report warns about happens: history is not a fresh build


@pytest.mark.parametrize("extra", [0, -1])
def test_the_bound_is_the_largest_index_trained_at_a_change(extra: int) -> None:
    """An index of exactly `retrain_max_rows` live rows after a change trains again (a fresh
    build's lists); one row more than the bound keeps its lists."""
    rng = np.random.default_rng(8)
    enc, cache = SyntheticEncoder(), MemoryEmbeddingCache()
    first = start([(f"note {i}", topic_body(rng)) for i in range(90)])
    base = DenseIndex.build(first.corpus, enc, cache, params=PARAMS)
    state = next(iter(history(first, 1, 7, topic_body)))
    c = state.corpus
    rows = DenseIndex.build(c, enc, cache, params=PARAMS).n_chunks
    params = replace(PARAMS, retrain_max_rows=rows + extra)
    out = replace(base, params=params).updated(c, enc, cache, compact=False)
    fresh = DenseIndex.build(c, enc, cache, params=params)
    assert out.n_chunks == rows and out.ivf is not None
    assert (out.ivf is not base.ivf) == (extra == 0)
    assert (_lists(out) == _lists(fresh)) == (extra == 0)
    assert (out.untrained_rows == 0) == (extra == 0)


def test_retrained_is_saved_and_a_build_of_the_same_notes_loads_it(tmp_path: Path) -> None:
    rng = np.random.default_rng(12)
    enc, scratch = Counting(), str(tmp_path)
    params = replace(PARAMS, retrain_max_rows=1)
    first = start([(f"note {i}", topic_body(rng)) for i in range(90)])
    base = DenseIndex.build(first.corpus, enc, None, params=params, scratch=scratch)
    for state in history(first, 3, 2, topic_body):
        last = state.corpus
    caught = DenseIndex.caught_up(first.corpus, last, enc, None, params=params,
                                  scratch=scratch)
    assert _lists(caught) == _lists(base) and caught.untrained_rows
    assert not (tmp_path / ivf_store.CAUGHT.index).exists()  # nothing trained, nothing saved
    again = caught.retrained(last)
    assert (tmp_path / ivf_store.CAUGHT.index).is_file()
    enc.encoded = 0
    loaded = DenseIndex.build(last, enc, None, params=params, scratch=scratch)
    assert enc.encoded == 0 and loaded.untrained_rows == 0
    fresh = DenseIndex.build(last, enc, None, params=params)
    qs = enc.encode([topic_body(rng) for _ in range(4)])
    assert by_path(again, last.paths, qs) == by_path(loaded, last.paths, qs) == \
        by_path(fresh, last.paths, qs)


def _engine(root: Path, stores: bool = True) -> Callable[[EmbeddingCache], SearchEngine]:
    params = SearchParams(dense=DenseParams(approx_above=1, retrain_max_rows=1))
    return lambda cache: SearchEngine(params, encoder=SyntheticEncoder(), cache=cache,
                                      scratch=str(root / ".rmh") if stores else None)


def test_a_vault_says_its_ivf_is_stale_and_prepare_retrains_it(tmp_path: Path) -> None:
    """End to end (a new Vault per process, its stores on disk): after outside edits the
    search's dense stage says the IVF was trained before N rows changed and still finds the
    edited note; `prepare(retrain=True)` (what `rmh index` runs) trains it again, and from
    then on, in that process and the next, hits and scores are a fresh build's."""
    rng = random.Random(3)
    root = tmp_path / "v"
    make_vault(root, rng, 60, linked_text)
    queries = [" ".join(rng.sample(WORDS, 2)) for _ in range(5)] + ["zebra quokka"]

    def search(stores: bool = True, retrain: bool = False
               ) -> tuple[list[list[tuple[str, float]]], str, dict[str, object]]:
        with Vault.open(root, engine=_engine(root, stores), watch=False) as v:
            prepared = v.prepare(retrain=retrain)
            results = [v.search(q, 10, learn=False) for q in queries]
            return ([[(h.note, h.score) for h in r.hits] for r in results],
                    results[-1].stages["dense"], prepared)

    search()  # the base: its stores saved
    (root / "n5.md").write_text("zebra quokka " * 20, encoding="utf-8")
    (root / "added.md").write_text(linked_text(rng), encoding="utf-8")
    os.unlink(root / "n9.md")
    hits, stage, prepared = search()
    assert stage.startswith("ran (int8 IVF trained before ") and "rmh index" in stage
    assert "trained before" in str(prepared["dense"])
    assert hits[-1][0][0] == "n5.md"  # the stale index still answers
    fresh, fresh_stage, _ = search(stores=False)
    assert fresh_stage == "ran"
    got, stage, prepared = search(retrain=True)
    assert stage == "ran" and "trained before" not in str(prepared["dense"])
    assert got == fresh
    got, stage, _ = search()  # the next process loads what the retraining saved
    assert stage == "ran" and got == fresh


