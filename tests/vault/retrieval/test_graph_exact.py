"""PageRank's scores are a function of the notes and their links, bit for bit: the same graph
numbered in another order (positions follow note ids, ids follow the indexing history) gives
the same bits per note, iterated or pushed, with or without co-occurrence edges; so search
answers of the same files are the same bytes whatever the history (signals/graph.py,
"History-independent sums")."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from vault import SearchEngine, SearchParams, Vault
from vault.learning.edges import WeightedEdges
from vault.retrieval.association import couse_values
from vault.retrieval.signals.graph import Walk, adjacency, exact_sum, pagerank

from .test_path_ties import QUERIES, by_edits, in_path_order, one_by_one, vault_files


def graph(rng: np.random.Generator, n: int) -> tuple[list[tuple[int, int]], WeightedEdges]:
    """Links with hubs and dangling nodes, plus weighted co-occurrence pairs."""
    m = 3 * n
    a = np.minimum(rng.zipf(1.6, m) - 1, n - 1)  # a few nodes take many links
    b = rng.integers(0, n, m)
    links = sorted({(int(x), int(y)) for x, y in zip(a, b, strict=True) if x != y})
    ca, cb = rng.integers(0, n, n), rng.integers(0, n, n)
    pairs = sorted({(int(min(x, y)), int(max(x, y))) for x, y in zip(ca, cb, strict=True)
                    if x != y})
    w = rng.random(len(pairs))
    return links, WeightedEdges(np.asarray([p[0] for p in pairs], dtype=np.int64),
                                np.asarray([p[1] for p in pairs], dtype=np.int64), w)


def renumbered(perm: np.ndarray, links: list[tuple[int, int]], extra: WeightedEdges
               ) -> tuple[list[tuple[int, int]], WeightedEdges]:
    """The same graph with node i called perm[i]."""
    p = perm.tolist()
    moved = sorted((p[x], p[y]) for x, y in links)
    return moved, WeightedEdges(perm[extra.a], perm[extra.b], extra.w.copy())


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("how", ["iterate", "push", "weighted"])
def test_pagerank_gives_each_node_the_same_bits_under_any_numbering(seed: int, how: str
                                                                    ) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(50, 400))
    links, extra = graph(rng, n)
    seeds = np.zeros(n)
    seeds[rng.integers(0, n, 11)] = 1.0 / rng.integers(1, 6, 11)
    push_above = 1 if how == "push" else 0
    weighted = extra if how == "weighted" else None
    want, _ = pagerank(Walk.build(adjacency(n, links, weighted, 0.3)), seeds,
                       push_above=push_above)
    for _ in range(3):
        perm = rng.permutation(n)
        moved, moved_extra = renumbered(perm, links, extra)
        s = np.zeros(n)
        s[perm] = seeds
        got, _ = pagerank(Walk.build(adjacency(n, moved, moved_extra if weighted else None,
                                               0.3)), s, push_above=push_above)
        assert got[perm].tobytes() == want.tobytes()


def test_exact_sum_has_no_order() -> None:
    rng = np.random.default_rng(3)
    x = rng.random(10_001) * 10.0 ** rng.integers(-12, 0, 10_001)
    x /= x.sum()
    want = exact_sum(x)
    for _ in range(5):
        assert exact_sum(rng.permutation(x)) == want
    assert abs(want - 1.0) < 1e-12


VARIANTS = [SearchParams(), SearchParams(push_above=1),
            SearchParams(beta=0.3, weights={"couse": 0.5, "spread": 0.5})]


def byte_answers(root: Path, params: SearchParams) -> list[str]:
    """Every query's hits as the repr of every value (ids and the index's basis left out)."""
    with Vault.open(root, engine=SearchEngine(params), watch=False) as v:
        return [repr([(h.note, h.title, h.score, h.snippet,
                       sorted((k, repr(x)) for k, x in h.receipt.items() if k != "basis"))
                      for h in v.search(q, 20, learn=False).hits]) for q in QUERIES]


@pytest.mark.parametrize("seed", range(4))
def test_same_files_same_bytes_whatever_the_history(tmp_path: Path, seed: int) -> None:
    files = vault_files(seed)
    for k in range(0, 12, 2):  # more links: each note's graph score sums several neighbours
        files[f"l{k}.md"] = " ".join(f"[[n{j:02d}]]" for j in range(k, k + 6)) + " kiwi\n"
    rng = random.Random(2000 + seed)
    in_path_order(tmp_path / "fresh", files)
    one_by_one(tmp_path / "shuffled", files, rng)
    by_edits(tmp_path / "edited", files, rng)
    for params in VARIANTS:
        want = byte_answers(tmp_path / "fresh", params)
        assert "'graph'" in want[0]  # the graph signal scored these hits
        assert byte_answers(tmp_path / "shuffled", params) == want
        assert byte_answers(tmp_path / "edited", params) == want


@pytest.mark.parametrize("seed", range(6))
def test_couse_gives_each_note_the_same_bits_whatever_the_edge_order(seed: int) -> None:
    """A note co-used with several seeds sums their shares in seed order, not in the order
    the learned edges are stored (by note id): the same edges renumbered give the same bits."""
    rng = np.random.default_rng(seed)
    n = 40
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n) if rng.random() < 0.5]
    edges = WeightedEdges(np.asarray([a for a, _ in pairs], dtype=np.int64),
                          np.asarray([b for _, b in pairs], dtype=np.int64),
                          rng.random(len(pairs)))
    seeds = rng.choice(n, 15, replace=False)
    sigma = np.sort(rng.random(15))[::-1]
    useful = rng.random(n)
    want = couse_values(edges, seeds, sigma, useful)
    assert np.count_nonzero(want) > 5
    for _ in range(4):
        perm = rng.permutation(n)
        flip = rng.random(len(edges)) < 0.5
        a = np.where(flip, edges.b, edges.a)
        b = np.where(flip, edges.a, edges.b)
        shuffle = rng.permutation(len(edges))
        moved = WeightedEdges(perm[a][shuffle], perm[b][shuffle], edges.w[shuffle])
        u = np.zeros(n)
        u[perm] = useful
        got = couse_values(moved, perm[seeds], sigma, u)
        assert got[perm].tobytes() == want.tobytes()
