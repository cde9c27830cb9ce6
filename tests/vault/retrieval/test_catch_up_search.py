"""A new process after outside edits searches from the stores saved for the base state,
brought up to date through the corpus delta (derived.py `from_base`, storage/catch_up.py):
with the exact dense layout every hit and score equals a fresh build's (every structure
built in memory from the same notes), and the saved stores are loaded, not rebuilt. With the
IVF layout too: the caught-up process trains the lists again, as a fresh build does."""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from bench.synthetic_encoder import SyntheticEncoder
from vault import DenseParams, SearchEngine, SearchParams, Vault
from vault.storage.embeddings import EmbeddingCache

from .folder_history import WORDS, change, linked_text, make_vault

Hits = list[list[tuple[str, float]]]


def _engine(root: Path, approx_above: int, stores: bool
            ) -> Callable[[EmbeddingCache], SearchEngine]:
    params = SearchParams(dense=DenseParams(approx_above=approx_above))
    return lambda cache: SearchEngine(params, encoder=SyntheticEncoder(), cache=cache,
                                      scratch=str(root / ".rmh") if stores else None)


def _search(root: Path, queries: list[str], approx_above: int, stores: bool = True
            ) -> tuple[Hits, bool]:
    """(the hits of each query, whether the corpus was caught up from a saved base) in a
    new vault object, as a new process has."""
    with Vault.open(root, engine=_engine(root, approx_above, stores), watch=False) as v:
        hits = [[(h.note, h.score) for h in v.search(q, 10, learn=False).hits]
                for q in queries]  # the first search syncs
        return hits, v.corpus().base is not None


def _stamp(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_ino, st.st_mtime_ns


@pytest.mark.parametrize("seed", range(3))
def test_exact_layout_after_outside_edits_equals_a_fresh_build(
        tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    root = tmp_path / "v"
    names = make_vault(root, rng, 30, linked_text)
    queries = [" ".join(rng.sample(WORDS, 2)) for _ in range(6)]
    _search(root, queries, 0)  # the base: every store saved for it
    lexical = root / ".rmh" / "lexical-index.bin"
    saved = _stamp(lexical)
    caught = 0
    for step in range(6):
        change(root, rng, names, step, linked_text, delete=False)
        got, base = _search(root, queries, 0)
        fresh, _ = _search(root, queries, 0, stores=False)
        assert got == fresh, step
        caught += base
    assert caught == 6
    assert _stamp(lexical) == saved  # loaded in every process, never rebuilt


@pytest.mark.parametrize("seed", range(3))
def test_ivf_layout_after_outside_edits_equals_a_fresh_build(tmp_path: Path, seed: int) -> None:
    """The IVF layout: the caught-up process trains the lists again (signals/dense.py), so
    its hits and scores are a fresh build's; the base's saved IVF is loaded, not rewritten."""
    rng = random.Random(20 + seed)
    root = tmp_path / "v"
    names = make_vault(root, rng, 60, linked_text)
    queries = [" ".join(rng.sample(WORDS, 2)) for _ in range(6)] + ["zebra quokka"]
    _search(root, queries, 1)
    ivf = sorted((root / ".rmh").glob("dense-ivf*"))
    assert ivf
    saved = [_stamp(p) for p in ivf]
    for step in range(3):
        (root / rng.choice(names)).write_text("zebra quokka " * 20, encoding="utf-8")
        name = f"new{step}.md"
        names.append(name)
        (root / name).write_text(linked_text(rng), encoding="utf-8")
        os.unlink(root / names.pop(rng.randrange(len(names) - 1)))
        got, base = _search(root, queries, 1)
        fresh, _ = _search(root, queries, 1, stores=False)
        assert base and got == fresh, step
        assert got[-1][0][1] > 0
    assert [_stamp(p) for p in ivf] == saved  # the base's lists, loaded
