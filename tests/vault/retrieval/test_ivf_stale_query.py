"""A stale IVF's query (signals/dense.py `_approx_scores`, an index above
`retrain_max_rows` that kept its lists through changes): every note scores, bit for bit, its
best row among the probed lists' live base rows and the delta rows that joined those lists,
computed here row by row from outside; and a query after the first reads only the probed
lists' delta rows (dense_update.py `Rows.in_lists`), never every delta row's note or list."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from bench.synthetic_encoder import SyntheticEncoder
from vault import DenseParams
from vault.retrieval.signals import dense_update
from vault.retrieval.signals.dense import DenseIndex
from vault.retrieval.signals.ivf import IvfParams
from vault.storage.embeddings import MemoryEmbeddingCache

from .dense_history import history, start, topic_body

PARAMS = DenseParams(approx_above=60, retrain_max_rows=1, compact_fraction=100.0,
                     retrain_share=100.0, ivf=IvfParams(nprobe=3, train_per_list=16))


def reference(idx: DenseIndex, q: np.ndarray) -> np.ndarray:
    """Each note's best probed row, one row at a time (0 where none was probed)."""
    ivf, ov = idx.ivf, idx.overlay
    assert ivf is not None
    best = np.full(idx.n_docs, -np.inf)
    for j in ivf.probe(q, idx.params.ivf.nprobe).tolist():
        for r in range(int(ivf.offsets[j]), int(ivf.offsets[j + 1])):
            base = int(ivf.note[r])
            if ov.stale[base]:
                continue
            at = int(ov.now(np.array([base]))[0])
            row = np.asarray(ivf.codes.span(r, r + 1), dtype=np.float32)
            s = float((np.vecdot(row, q) * ivf.scale[r : r + 1])[0])
            best[at] = max(best[at], s)
        for r in np.flatnonzero(idx.delta.lists == j).tolist():
            note = int(np.searchsorted(idx.delta.starts, r, side="right") - 1)
            at = int(idx.delta.notes[note])
            best[at] = max(best[at], float(np.vecdot(idx.delta.matrix[r], q)))
    return np.where(np.isinf(best), 0.0, best)


@pytest.mark.parametrize(("seed", "compact"), [(1, False), (2, True), (3, False), (5, False)])
def test_a_stale_ivf_scores_each_note_its_best_probed_row(seed: int, compact: bool) -> None:
    rng = np.random.default_rng(80 + seed)
    enc, cache = SyntheticEncoder(), MemoryEmbeddingCache()
    first = start([(f"note {i}", topic_body(rng)) for i in range(90)])
    idx = DenseIndex.build(first.corpus, enc, cache, params=PARAMS)
    seen = 0
    for state in history(first, 8, seed, topic_body):
        c = state.corpus
        idx = idx.updated(c, enc, cache, compact=compact)
        if idx.ivf is None:
            continue
        qs = enc.encode([c.bodies[-1], topic_body(rng), topic_body(rng), "common1 common2"])
        for q in qs:
            assert idx.score_vector(q).tobytes() == reference(idx, q.astype(np.float32)).tobytes()
        seen += idx.delta.matrix.shape[0] > 0
    assert seen  # delta rows were scored


def test_a_query_after_the_first_reads_only_its_lists_delta_rows(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(7)
    enc, cache = SyntheticEncoder(), MemoryEmbeddingCache()
    first = start([(f"note {i}", topic_body(rng)) for i in range(120)])
    idx = DenseIndex.build(first.corpus, enc, cache, params=PARAMS)
    for state in history(first, 6, 4, topic_body):
        idx = idx.updated(state.corpus, enc, cache, compact=False)
    assert idx.ivf is not None and idx.delta.matrix.shape[0] > 0
    qs = enc.encode([topic_body(rng) for _ in range(6)])
    first_scores = idx.score_vector(qs[0])

    def every_row(self: dense_update.Rows) -> None:
        raise AssertionError("a query rebuilt every delta row's note")

    monkeypatch.setattr(dense_update.Rows, "row_notes", every_row)
    held = replace(idx)  # the same overlay: what was made at the first query is kept
    assert held.score_vector(qs[0]).tobytes() == first_scores.tobytes()
    for q in qs[1:]:
        held.score_vector(q)
