"""The signal registry: every registered signal updated from a delta scores exactly as one
built fresh, and the pipeline runs, reports and fuses exactly the registered signals."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bench.synthetic_encoder import SyntheticEncoder
from vault import SearchEngine, Vault
from vault.notes.text import tokenize
from vault.retrieval.signals.registry import REGISTRY, BuildEnv, Query

QUERIES = ("zebra billing", "auth outage monday", "queue", "nothing matches this")


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
