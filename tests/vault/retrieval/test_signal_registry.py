"""The signal registry: every registered signal updated from a delta scores exactly as one
built fresh, the dense signal catches up from a saved state through removals, and the
pipeline runs, reports and fuses exactly the registered signals."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from bench.synthetic_encoder import SyntheticEncoder
from vault import SearchEngine, Vault
from vault.notes.text import tokenize
from vault.retrieval.signals.dense import DenseParams
from vault.retrieval.signals.dense_units import note_chunks
from vault.retrieval.signals.ivf import IvfParams
from vault.retrieval.signals.registry import DENSE, REGISTRY, BuildEnv, Query

from .dense_history import Counting, history, start, topic_body

QUERIES = ("zebra billing", "auth outage monday", "queue", "nothing matches this",
           "t3w1 t3w4 common7", "t11w2 t11w9")


def test_each_signal_updated_from_a_delta_scores_as_a_fresh_build(tmp_path: Path) -> None:
    encoder = SyntheticEncoder()
    env = BuildEnv(encoder=encoder)
    with Vault.init(tmp_path) as v:
        for i in range(12):
            v.write(f"n{i}.md", f"# Note {i}\n\nThe auth team fixed billing on monday {i}.\n")
        old = v.corpus()
        built = {s.name: s.build(old, env) for s in REGISTRY}
        v.write("n3.md", "# Note 3\n\nA zebra ate the billing queue.\n")
        v.write("n12.md", "# Note 12\n\nThe queue outage.\n")
        new = v.corpus()
        since = new.delta.changes_since(old.generation, len(old), len(new)) if new.delta else None
        assert since is not None
        changed = since.changed
        assert len(changed) == 2 and len(new) == len(old) + 1  # positions: an edit, an add
        for s in REGISTRY:
            updated = s.update(built[s.name], old, new, since, env)
            fresh = s.build(new, env)
            for q in QUERIES:
                query = Query(q, tokenize(q), encoder)
                a, b = s.score(updated, query), s.score(fresh, query)
                assert a is not None and b is not None
                assert a.shape == (len(new),) and np.array_equal(a, b), (s.name, q)


def test_the_pipeline_runs_the_registered_signals_in_order(tmp_path: Path) -> None:
    names = [s.name for s in REGISTRY]
    assert names == ["bm25", "dense", "conjunctive"]
    with Vault.init(tmp_path) as v:
        for i in range(6):
            v.write(f"n{i}.md", f"# Note {i}\n\nbilling queue {i}\n")
        corpus = v.corpus()
        with_dense = SearchEngine(encoder=SyntheticEncoder()).score(corpus, "billing queue")
        assert list(with_dense.stages)[:3] == names
        assert all(with_dense.stages[n] == "ran" for n in names)
        assert set(with_dense.fusion.heads) == set(names)
        lexical = SearchEngine.lexical().score(corpus, "billing queue")
        assert lexical.stages["dense"] == "skipped: no encoder"
        assert "dense" not in lexical.signals and "dense" not in lexical.fusion.heads


@pytest.mark.parametrize(("above", "seed"), [(0, 1), (0, 3), (60, 2), (60, 4)])
def test_caught_up_from_a_saved_base_follows_removals(tmp_path: Path, above: int,
                                                      seed: int) -> None:
    """A new process catching up from a saved state through a chain with removals (exact
    layout, and IVF) embeds only the notes changed since, and scores bit for bit as the
    process that followed every generation without compacting, and as a fresh build (the
    IVF is trained again at every change: signals/dense.py)."""
    rng = np.random.default_rng(seed)
    enc = Counting()
    params = DenseParams(approx_above=above, compact_fraction=0.15,
                         ivf=IvfParams(nprobe=3, train_per_list=16))
    env = BuildEnv(encoder=enc, dense=params, scratch=str(tmp_path))
    first = start([(f"note {i}", topic_body(rng)) for i in range(80)])
    warm = DENSE.build(first.corpus, env)  # saves its store for the next process
    assert (warm.ivf is not None) == (above > 0)
    state = first
    for state in history(first, 10, seed, topic_body):
        warm = warm.updated(state.corpus, enc, None, env.max_tokens, None, env.max_note_units,
                            compact=False)
    final = state.corpus
    assert final.delta is not None
    since = final.delta.changes_since(first.corpus.generation, len(first.corpus), len(final))
    assert since is not None and since.removed
    texts = {t for p in since.changed for t in note_chunks(
        final.titles[p], final.bodies[p], {}, enc.count_tokens, env.max_tokens,
        env.max_note_units)[0]}
    enc.encoded = 0
    got = DENSE.caught_up(first.corpus, final, env)
    assert enc.encoded == len(texts)  # the base's rows came from its store
    assert got.generation == final.generation
    if above == 0:  # the exact base followed in place; the IVF's retrained: no overlay
        assert got.overlay.removal == since.shift
    else:
        assert got.ivf is not None and not got.overlay.removal and not got.stale.any()
    fresh = DENSE.build(final, replace(env, scratch=None))
    for q in QUERIES:
        query = Query(q, tokenize(q), enc)
        a, b, c = (DENSE.score(x, query) for x in (got, warm, fresh))
        assert a is not None and b is not None and c is not None
        assert np.array_equal(a, b) and np.array_equal(a, c)
