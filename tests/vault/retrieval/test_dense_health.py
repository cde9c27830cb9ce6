"""The dense index's staleness report (retrieval/dense_health.py) and the running process's
retraining policy (`DenseParams.retrain_share`, signals/dense.py) through generated
histories above the retraining bound: a process that never trains at a change (a new
process catching up, `compact=False`) reports the rows changed since the training and their
share exactly as counted from outside (the notes' rows added, removed and replaced since
the last training); its level is "stale" up to `retrain_share` and "warning" past it; a
running process (`compact=True`) trains again exactly when that share passes
`retrain_share` (then it equals a fresh build), and never before."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from bench.synthetic_encoder import SyntheticEncoder
from vault import DenseParams, dense_health_line
from vault.retrieval.dense_health import dense_health
from vault.retrieval.signals.dense import DenseIndex
from vault.retrieval.signals.dense_units import note_chunks
from vault.storage.embeddings import MemoryEmbeddingCache

from .dense_history import State, history, start, topic_body
from .test_ivf_fresh import by_path
from .test_ivf_retrain_bound import PARAMS, _lists


def _rows(state: State, enc: SyntheticEncoder) -> dict[int, int]:
    """Each note's chunk rows by its version (dense_history.py: a new one when a note is
    added, edited, renamed, or added back after its removal)."""
    c = state.corpus
    return {state.versions[i]: len(note_chunks(c.titles[i], c.bodies[i], c.frontmatter[i],
                                               enc.count_tokens, 256, 0)[0])
            for i in range(len(c))}


Rows = dict[int, int]


def _changed(trained: Rows, now: Rows) -> int:
    """Rows removed or replaced since the training plus rows added since (from outside)."""
    gone = sum(r for k, r in trained.items() if k not in now)
    return gone + sum(r for k, r in now.items() if k not in trained)


@pytest.mark.parametrize(("seed", "share"), [(1, 0.05), (2, 0.1), (4, 0.2), (5, 0.1)])
def test_the_running_process_retrains_when_the_reported_share_passes(
        seed: int, share: float) -> None:
    rng = np.random.default_rng(60 + seed)
    enc, cache = SyntheticEncoder(), MemoryEmbeddingCache()
    params = replace(PARAMS, retrain_max_rows=1, retrain_share=share)
    first: State = start([(f"note {i}", topic_body(rng)) for i in range(90)])
    kept = running = DenseIndex.build(first.corpus, enc, cache, params=params)
    trained, base_rows = _rows(first, enc), running.base_rows
    seen = {"stale": 0, "warning": 0, "retrained": 0}
    for state in history(first, 14, seed, topic_body):
        c = state.corpus
        before = running
        kept = kept.updated(c, enc, cache, compact=False)
        running = running.updated(c, enc, cache, compact=True)
        if running.ivf is None:  # every note removed (seed % 3 == 0 only)
            break
        now = _rows(state, enc)
        changed = _changed(trained, now)
        report = dense_health(kept, None, params, True)
        assert report["untrained_rows"] == kept.untrained_rows == changed
        assert report["share"] == round(changed / base_rows, 4)
        due = changed > share * base_rows
        assert report["level"] == ("ok" if not changed else "warning" if due else "stale")
        if changed:
            assert report["remedy"] == "rmh index"
            assert f"{changed} changed since its training" in dense_health_line(report)
        if due:  # the running process trained again: a fresh build's lists
            seen["retrained"] += 1
            fresh = DenseIndex.build(c, enc, cache, params=params)
            assert running.untrained_rows == 0 and _lists(running) == _lists(fresh)
            qs = enc.encode([topic_body(rng) for _ in range(3)])
            assert by_path(running, c.paths, qs) == by_path(fresh, c.paths, qs)
            kept, trained, base_rows = running, now, running.base_rows
        else:  # not yet: its lists stay, and it reports what `kept` reports
            seen[report["level"]] = seen.get(report["level"], 0) + 1
            assert before.ivf is not None and running.ivf is not None
            assert _lists(running) == _lists(before)
            assert running.untrained_rows == changed
    assert seen["retrained"] and seen["stale"]  # both sides of the share were crossed


def test_never_stale_layouts_report_ok() -> None:
    rng = np.random.default_rng(3)
    enc = SyntheticEncoder()
    first = start([(f"note {i}", topic_body(rng)) for i in range(90)])
    exact = DenseIndex.build(first.corpus, enc, None, params=DenseParams(approx_above=0))
    assert dense_health(exact, None, exact.params, True)["level"] == "ok"
    small = DenseIndex.build(first.corpus, enc, None, params=PARAMS)  # under the bound
    state = next(iter(history(first, 1, 5, topic_body)))
    moved = small.updated(state.corpus, enc, None, compact=False)
    report = dense_health(moved, None, PARAMS, True)
    assert report["untrained_rows"] == 0 and report["trained"] == "at every change"
    assert dense_health(None, 500_000, DenseParams(), True)["level"] == "not checked"
    assert dense_health(None, 240_000, DenseParams(), True)["trained"] == "at every change"
    assert dense_health(None, 100, DenseParams(), True)["layout"] == "exact"
    assert dense_health(None, None, DenseParams(), False)["layout"] == "off"
