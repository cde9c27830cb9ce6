"""The approximate dense layout: int8 IVF, deterministic, recall against exact search."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bench.synthetic_encoder import SyntheticEncoder
from vault.retrieval import ivf_store
from vault.retrieval.signals import dense
from vault.retrieval.signals.dense import DenseIndex, DenseParams
from vault.retrieval.signals.ivf import (
    IvfParams,
    MemoryCodes,
    assign,
    kmeans,
    quantize,
    sample_rows,
)
from vault.storage.corpus import Corpus, CorpusDelta
from vault.storage.embeddings import MemoryEmbeddingCache
from vault.storage.row_file import RowFile

from ..retrieval_fixtures import make_corpus
from .dense_history import history, start, topic_body

TOPICS = 24


def clustered(n: int, seed: int = 0) -> Corpus:
    """Notes about one of TOPICS topics each: mostly topic words, some shared words."""
    rng = np.random.default_rng(seed)
    common = [f"common{j}" for j in range(40)]
    notes = []
    for i in range(n):
        t = i % TOPICS
        own = [f"t{t}w{j}" for j in range(12)]
        words = list(rng.choice(own, 8)) + list(rng.choice(common, 3))
        notes.append((f"note {i}", " ".join(words)))
    return make_corpus(notes)


def topic_queries(enc: SyntheticEncoder, n: int, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return enc.encode([" ".join(rng.choice([f"t{i % TOPICS}w{j}" for j in range(12)], 4))
                       for i in range(n)])


def top10(scores: np.ndarray) -> set[int]:
    order = np.lexsort((np.arange(scores.shape[0]), -scores))
    return {int(i) for i in order[:10] if scores[i] > 0}


def ivf_bytes(idx: DenseIndex, name: str) -> bytes:
    """The bytes of one of the IVF's arrays (the codes read back wherever they are kept)."""
    assert idx.ivf is not None
    if name == "codes":
        return idx.ivf.codes.span(0, idx.ivf.rows).tobytes()
    arr: np.ndarray = getattr(idx.ivf, name)
    return arr.tobytes()


def approx(above: int = 100, nprobe: int = 4) -> DenseParams:
    return DenseParams(approx_above=above, ivf=IvfParams(nprobe=nprobe, train_per_list=16))


def test_quantize_golden_and_error_bound() -> None:
    codes, scale = quantize(np.array([[0.5, -0.25, 0.0], [0.0, 0.0, 0.0]], np.float32))
    assert codes.tolist() == [[127, -64, 0], [0, 0, 0]]  # -63.5 rounds half to even
    assert scale.tolist() == [np.float32(0.5) / np.float32(127), 1.0]
    enc = SyntheticEncoder()
    x = enc.encode([f"w{i} w{i + 1} w{i * 7}" for i in range(200)])
    c, s = quantize(x)
    q = x[3]
    assert np.abs((c.astype(np.float32) @ q) * s - x @ q).max() < 5e-3


def test_kmeans_finds_two_obvious_clusters() -> None:
    a, b = np.array([1.0, 0.0], np.float32), np.array([0.0, 1.0], np.float32)
    jitter = np.array([[0.0, 0.05], [0.05, 0.0], [0.0, 0.0]], np.float32)
    pts = np.concatenate([a + jitter, b + jitter])
    pts /= np.linalg.norm(pts, axis=1, keepdims=True)
    cents = kmeans(pts.astype(np.float32), 2, 5)
    assert assign(pts.astype(np.float32), cents).tolist() == [0, 0, 0, 1, 1, 1]
    assert sample_rows(10, 4).tolist() == [0, 3, 6, 9] and sample_rows(3, 9).tolist() == [0, 1, 2]


def test_threshold_switch() -> None:
    corpus, enc = clustered(240), SyntheticEncoder()
    assert DenseIndex.build(corpus, enc, None, params=DenseParams(approx_above=0)).ivf is None
    assert DenseIndex.build(corpus, enc, None, params=approx(above=240)).ivf is None
    idx = DenseIndex.build(corpus, enc, None, params=approx(above=239))
    assert idx.ivf is not None and idx.matrix.shape[0] == 0 and idx.n_chunks == 240
    assert idx.ivf.centroids.shape[0] == round(np.sqrt(240))
    # an exact index that grows past the threshold turns approximate at its compaction
    small = DenseIndex.build(corpus, enc, None, params=approx(above=250))
    more = make_corpus([*zip(corpus.titles, corpus.bodies, strict=True),
                        *[(f"new {i}", "t1w1 t1w2 fresh words") for i in range(30)]])
    more = replace(more, generation=2, delta=CorpusDelta(1, 240, ()))
    grown = small.updated(more, enc, None)
    assert grown.ivf is not None and grown.n_chunks == 270 and grown.delta.matrix.shape[0] == 0


def test_two_builds_are_byte_identical() -> None:
    corpus, enc = clustered(300), SyntheticEncoder()
    one = DenseIndex.build(corpus, enc, None, params=approx())
    two = DenseIndex.build(corpus, SyntheticEncoder(), None, params=approx())
    assert one.ivf is not None and two.ivf is not None
    for name in ("centroids", "offsets", "codes", "scale", "note"):
        assert ivf_bytes(one, name) == ivf_bytes(two, name), name
    for q in topic_queries(enc, 5):
        assert one.score_vector(q).tobytes() == two.score_vector(q).tobytes()


def test_recall_against_exact_search_on_a_clustered_set() -> None:
    corpus, enc = clustered(480), SyntheticEncoder()
    exact = DenseIndex.build(corpus, enc, None, params=DenseParams(approx_above=0))
    few = DenseIndex.build(corpus, enc, None, params=approx(nprobe=6))
    every = DenseIndex.build(corpus, enc, None, params=approx(nprobe=10_000))
    rec_few, rec_all = [], []
    for q in topic_queries(enc, 40):
        truth = top10(exact.score_vector(q))
        rec_few.append(len(truth & top10(few.score_vector(q))) / len(truth))
        rec_all.append(len(truth & top10(every.score_vector(q))) / len(truth))
        scores = few.score_vector(q)
        hit = scores != 0
        assert 0 < hit.sum() < 480  # only the probed lists' notes are scored
        assert np.abs(scores[hit] - exact.score_vector(q)[hit]).max() < 5e-3
    assert np.mean(rec_all) >= 0.99  # every list probed: int8 rounding only
    assert np.mean(rec_few) >= 0.9


def test_updates_on_the_approximate_layout() -> None:
    """An update trains the lists again (signals/dense.py): the edited note's new rows are
    found, its old chunk is gone, and every score is a fresh build's, bit for bit."""
    corpus, enc = clustered(300), SyntheticEncoder()
    idx = DenseIndex.build(corpus, enc, None, params=approx(nprobe=10_000))
    old_text = corpus.bodies[7]
    bodies = list(corpus.bodies)
    bodies[7] = "zebra quartz lantern harbor"
    nxt = make_corpus([*zip(corpus.titles, bodies, strict=True), ("extra", "quartz zebra")])
    nxt = replace(nxt, generation=2, delta=CorpusDelta(1, 300, (7,)))
    up = idx.updated(nxt, enc, None)
    assert up.ivf is not None and up.ivf is not idx.ivf and up.ivf.rows == 301
    assert up.delta.matrix.shape[0] == 0 and not up.stale.any()
    s_new = up.score_vector(enc.encode(["zebra quartz lantern harbor"])[0])
    assert int(np.argmax(s_new)) == 7 and s_new[300] > 0.3
    s_old = up.score_vector(enc.encode([f"note 7\n{old_text}"])[0])
    assert s_old[7] < 0.5  # the old chunk is gone
    fresh = DenseIndex.build(nxt, enc, None, params=approx(nprobe=10_000))
    for q in [*topic_queries(enc, 5), enc.encode(["zebra quartz"])[0]]:
        assert up.score_vector(q).tobytes() == fresh.score_vector(q).tobytes()


def test_the_encode_block_changes_no_byte(monkeypatch: pytest.MonkeyPatch) -> None:
    corpus, enc = clustered(300), SyntheticEncoder()
    whole = DenseIndex.build(corpus, enc, None, params=approx())
    monkeypatch.setattr(dense, "ENCODE_BLOCK", 7)  # many blocks, packed texts included
    small = DenseIndex.build(corpus, enc, None, params=approx())
    assert whole.ivf is not None and small.ivf is not None
    for name in ("centroids", "mean", "offsets", "codes", "scale", "note"):
        assert ivf_bytes(whole, name) == ivf_bytes(small, name), name


def test_codes_on_disk_give_the_same_bytes_through_updates_and_compaction(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The codes in a scratch file (an unlinked file: the folder holds only the persisted
    store, retrieval/ivf_store.py) score exactly as the codes in memory: after a build, an
    update and a compaction."""
    monkeypatch.setattr(dense, "ENCODE_BLOCK", 37)  # many blocks through the file
    corpus, enc = clustered(300), SyntheticEncoder()
    mem = DenseIndex.build(corpus, enc, None, params=approx())
    disk = DenseIndex.build(corpus, enc, None, params=approx(), scratch=str(tmp_path))
    assert disk.ivf is not None and isinstance(disk.ivf.codes, RowFile)
    assert disk.ivf.disk_bytes == 300 * enc.dim and stored(tmp_path)
    assert mem.ivf is not None and mem.nbytes - disk.nbytes == 300 * enc.dim
    bodies = list(corpus.bodies)
    bodies[7] = "zebra quartz lantern harbor"
    nxt = make_corpus([*zip(corpus.titles, bodies, strict=True), ("extra", "quartz zebra")])
    nxt = replace(nxt, generation=2, delta=CorpusDelta(1, 300, (7,)))
    pairs = [(mem, disk), (mem.updated(nxt, enc, None), disk.updated(nxt, enc, None))]
    pairs.append((pairs[1][0]._compacted(), pairs[1][1]._compacted()))
    assert isinstance(pairs[2][1].ivf.codes, RowFile)  # type: ignore[union-attr]
    for a, b in pairs:
        for name in ("centroids", "mean", "offsets", "codes", "scale", "note"):
            assert ivf_bytes(a, name) == ivf_bytes(b, name), name
        for q in [*topic_queries(enc, 5), enc.encode(["zebra quartz"])[0]]:
            assert a.score_vector(q).tobytes() == b.score_vector(q).tobytes()
    assert stored(tmp_path)


def stored(folder: Path) -> bool:
    """The folder holds the persisted IVF store (its index and one codes file) and nothing
    else: the build's own codes files are unlinked."""
    names = sorted(os.listdir(folder))
    return (len(names) == 2 and names[1] == ivf_store.INDEX
            and names[0].startswith(ivf_store.CODES_PREFIX))


def test_a_scratch_folder_that_cannot_hold_files_keeps_the_codes_in_memory(
        tmp_path: Path) -> None:
    corpus, enc = clustered(300), SyntheticEncoder()
    idx = DenseIndex.build(corpus, enc, None, params=approx(), scratch=str(tmp_path / "gone"))
    assert idx.ivf is not None and isinstance(idx.ivf.codes, MemoryCodes)
    assert idx.ivf.disk_bytes == 0


def test_no_room_on_disk_keeps_the_codes_in_memory_with_the_same_bytes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scratch disk that is full when the codes file is made, or when its sorted copy is
    made (the build's second file), leaves the codes in memory: the same bytes."""
    corpus, enc = clustered(300), SyntheticEncoder()
    mem = DenseIndex.build(corpus, enc, None, params=approx())
    made = []
    real = RowFile.__init__

    def fill_after(k: int) -> Callable[..., None]:
        def init(self: RowFile, *args: Any, **kwargs: Any) -> None:
            made.append(1)
            if len(made) > k:
                raise OSError(errno.ENOSPC, "No space left on device")
            real(self, *args, **kwargs)
        return init

    for k in (0, 1):  # full at once; full once the first file is written
        made.clear()
        monkeypatch.setattr(RowFile, "__init__", fill_after(k))
        idx = DenseIndex.build(corpus, enc, None, params=approx(), scratch=str(tmp_path))
        assert idx.ivf is not None and isinstance(idx.ivf.codes, MemoryCodes), k
        for name in ("centroids", "mean", "offsets", "codes", "scale", "note"):
            assert ivf_bytes(idx, name) == ivf_bytes(mem, name), (k, name)
        assert stored(tmp_path)  # the persisted store (the full disk here is RowFile's only)
        for path in tmp_path.iterdir():  # so the next build builds again
            path.unlink()


def quantised_rows(idx: DenseIndex) -> np.ndarray:
    """Every live row of a compacted index as (note, scale, codes...), sorted: what its
    base holds whatever the lists (an exact base quantised as an IVF would hold it)."""
    assert not idx.stale.any() and idx.delta.matrix.shape[0] == 0
    if idx.ivf is not None:
        note, scale = idx.ivf.note, idx.ivf.scale
        codes = np.asarray(idx.ivf.codes.span(0, idx.ivf.rows))
    else:
        codes, scale = quantize(idx.matrix)
        note = np.repeat(np.arange(idx.n_docs), np.diff(np.append(idx.starts, len(codes))))
    rows = np.column_stack((note.astype(np.float64), scale.astype(np.float64),
                            codes.astype(np.float64)))
    return rows[np.lexsort(rows.T[::-1])]


@pytest.mark.parametrize(("seed", "disk"), [(s, s % 2 == 1) for s in range(8)])
def test_histories_with_removals_retrain_at_every_change(seed: int, disk: bool,
                                                         tmp_path: Path) -> None:
    """On the IVF (codes in memory or on disk), through adds, edits, renames and removals
    (every note at once included), whatever `compact_fraction`: every change gives a new base
    holding exactly the int8 rows, centroids, mean, list sizes and scales a fresh build
    makes, and no overlay."""
    rng = np.random.default_rng(100 + seed)
    enc, cache = SyntheticEncoder(), MemoryEmbeddingCache()
    params = replace(approx(above=60, nprobe=3), compact_fraction=0.15 if seed % 2 else 10.0)
    scratch = str(tmp_path) if disk else None
    first = start([(f"note {i}", topic_body(rng)) for i in range(90)])
    idx = DenseIndex.build(first.corpus, enc, cache, params=params, scratch=scratch)
    assert idx.ivf is not None and isinstance(idx.ivf.codes, RowFile) == disk
    retrained = 0
    for state in history(first, 14, seed, topic_body):
        prev, idx = idx, idx.updated(state.corpus, enc, cache)
        fresh = DenseIndex.build(state.corpus, enc, cache, params=params)
        assert idx.n_docs == len(state.corpus) and (idx.ivf is None) == (fresh.ivf is None)
        if idx.ivf is None or fresh.ivf is None:
            continue
        retrained += idx.starts is not prev.starts
        assert np.array_equal(quantised_rows(idx), quantised_rows(fresh))
        for name in ("centroids", "mean", "offsets", "scale"):
            assert ivf_bytes(idx, name) == ivf_bytes(fresh, name), name
    assert retrained > 0
