"""Through the facade: edits reach the ranking by the incremental path, and it ranks exactly
as a fresh engine on the same corpus (lexical, links, PageRank, dense over synthetic vectors)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from bench.synthetic_encoder import SyntheticEncoder
from vault import SearchEngine, SearchParams, Vault
from vault.retrieval.derived import Derived, build_derived
from vault.storage.corpus import Corpus

from .corpus_histories import history, queries

TOPICS = "auth billing cache deploy outage queue rollback schema".split()


def note(i: int) -> str:
    a, b = TOPICS[i % len(TOPICS)], TOPICS[(i * 3 + 1) % len(TOPICS)]
    return f"# Note {i}\n\nThe {a} team fixed the {b} on day {i % 7}.\n\n[[n{(i * 5 + 2) % 30}]]\n"


def ranking(engine: SearchEngine, v: Vault, query: str) -> list[tuple[int, float]]:
    return [(h.id, h.score) for h in engine.search(v.corpus(), query, 10).hits]


@contextmanager
def _searched_vault(root: Path, engine: SearchEngine) -> Iterator[Vault]:
    """30 linked notes, searched once: the engine's structures are built."""
    with Vault.init(root, engine=engine) as v:
        for i in range(30):
            v.write(f"n{i}.md", note(i))
        v.search("auth outage")
        yield v


def test_edits_between_searches_update_in_place_and_equal_a_fresh_engine(
        tmp_path: Path) -> None:
    params = SearchParams(push_above=10)  # exercise the pushed PageRank too
    engine = SearchEngine(params, encoder=SyntheticEncoder(), cache=None)
    with _searched_vault(tmp_path, engine) as v:
        base = engine._derived
        assert base is not None
        # two changes before the next search: the engine catches up through the delta chain
        v.write("n4.md", "# Note 4\n\nThe zebra rollout broke billing. [[n9]] [[n30]]\n")
        v.write("n30.md", "# Note 30\n\nA new zebra note about the queue. [[n4]]\n")
        queries = ("zebra billing", "auth outage", "queue rollback note 30", "Note 9")
        got = {q: ranking(engine, v, q) for q in queries}
        now = engine._derived
        assert now is not None and now is not base
        assert now.bm25.delta_docs == 2 and now.conj.delta_docs == 2  # updated, not rebuilt
        fresh = SearchEngine(params, encoder=SyntheticEncoder(), cache=None)
        for q in queries:
            assert got[q] == ranking(fresh, v, q), q
        assert got["zebra billing"][0][0] == v.resolve("n4")


def test_renames_update_in_place_and_equal_a_fresh_engine(tmp_path: Path) -> None:
    """A rename through the facade (`Vault.move`, which rewrites the links to the note) and
    one on disk (sync matches it by content) reach the ranking through the delta: the engine's
    structures are updated, not rebuilt, and rank as a fresh engine on the same corpus."""
    params = SearchParams(push_above=10)  # exercise the pushed PageRank too
    engine = SearchEngine(params, encoder=SyntheticEncoder(), cache=None)
    with _searched_vault(tmp_path, engine) as v:
        base = engine._derived
        assert base is not None and base.dense is not None
        moved = v.move("n7", "archive/Zebra handbook")
        assert moved.rewritten  # the notes that linked to n7 now link to the new path
        (tmp_path / "n12.md").rename(tmp_path / "Quokka log.md")
        assert v.sync().renamed == [("n12.md", "Quokka log.md")]
        queries = ("zebra handbook", "quokka log", "auth outage", "Note 7 billing")
        got = {q: ranking(engine, v, q) for q in queries}
        now = engine._derived
        assert now is not None and now.corpus.delta is not None
        assert now.bm25.delta_docs > base.bm25.delta_docs  # updated, not rebuilt
        assert now.dense is not None and now.dense.base_rows == base.dense.base_rows
        fresh = SearchEngine(params, encoder=SyntheticEncoder(), cache=None)
        for q in queries:
            assert got[q] == ranking(fresh, v, q), q
        assert got["zebra handbook"][0][0] == v.resolve("archive/Zebra handbook")
        assert got["quokka log"][0][0] == v.resolve("Quokka log")


@pytest.mark.parametrize("seed", range(8))
def test_removals_update_in_place_and_rank_as_a_fresh_engine(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Generated corpora whose deltas remove, edit, rename and add notes (made by hand:
    tests/vault/retrieval/corpus_histories.py), searched by one engine generation after
    generation: it never rebuilds (retrieval/derived.py follows the removal) and ranks
    every query exactly as a fresh engine (lexical signals, links, pushed PageRank)."""
    from vault.retrieval import pipeline

    params = SearchParams(push_above=10)
    rng = random.Random(seed)
    gens = history(seed, 6, rng.randint(8, 20))
    qs = queries(rng, gens, 6)
    engine = SearchEngine(params)
    first = [(h.id, h.score) for h in engine.search(gens[0], qs[0], 10).hits]
    assert first == [(h.id, h.score) for h in SearchEngine(params).search(gens[0], qs[0]).hits]
    builds: list[int] = []

    def counted(c: Corpus, folder: str | None = None) -> Derived:
        builds.append(len(c))
        return build_derived(c, folder)

    for c in gens[1:]:
        for q in qs:
            with monkeypatch.context() as m:
                m.setattr(pipeline, "build_derived", counted)
                got = [(h.id, h.score) for h in engine.search(c, q, 10).hits]
            want = [(h.id, h.score) for h in SearchEngine(params).search(c, q, 10).hits]
            assert got == want, (c.generation, q)
        assert not builds  # updated in place, never rebuilt
