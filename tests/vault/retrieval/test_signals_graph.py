"""Personalized PageRank against a dict power iteration, networkx, and hand-checked seeds."""

from __future__ import annotations

import random

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault.learning.edges import WeightedEdges
from vault.retrieval import stages
from vault.retrieval.names import NameIndex
from vault.retrieval.signals.graph import (
    ALPHA,
    FIXED,
    Walk,
    _linked_pairs,
    adjacency,
    pagerank,
    push,
    seed_vector,
)
from vault.retrieval.stages import context_stage, neighbor_max
from vault.storage.columns import Edges

from ..retrieval_fixtures import make_corpus


def dict_ppr(n: int, edges: list[tuple[int, int]], seeds: dict[int, float],
             alpha: float = ALPHA, iters: int = 2000) -> list[float]:
    """The obvious twin: undirected neighbours, dangling mass to the seeds, many iterations."""
    nbrs: dict[int, set[int]] = {i: set() for i in range(n)}
    for a, b in edges:
        if a != b:
            nbrs[a].add(b)
            nbrs[b].add(a)
    total = sum(seeds.values())
    s = [seeds.get(i, 0.0) / total for i in range(n)]
    r = list(s)
    for _ in range(iters):
        dangling = sum(r[i] for i in range(n) if not nbrs[i])
        new = [(1 - alpha) * s[i] + alpha * dangling * s[i] for i in range(n)]
        for j in range(n):
            for i in nbrs[j]:
                new[i] += alpha * r[j] / len(nbrs[j])
        r = new
    return r


def test_hand_case_two_nodes() -> None:
    # Seed on 0 of a single edge 0-1: r0 = 0.15 + 0.85 r1, r1 = 0.85 r0 -> r0 = 0.15/(1-0.7225).
    r, _ = pagerank(adjacency(2, [(0, 1)]), np.array([1.0, 0.0]), tol=1e-14, max_iter=2000)
    r0 = 0.15 / (1 - 0.85**2)
    assert abs(r[0] - r0) < 1e-9
    assert abs(r[1] - 0.85 * r0) < 1e-9


def test_hand_case_path_of_three_uniform_seeds() -> None:
    # Path 0-1-2, s = (1/3, 1/3, 1/3), alpha = 0.85, no dangling nodes. By symmetry r0 = r2:
    #   r0 = 0.05 + 0.85 * r1 / 2,   r1 = 0.05 + 0.85 * (r0 + r2) = 0.05 + 1.7 r0
    #   => 0.2775 r0 = 0.07125  =>  r0 = r2 = 19/74,  r1 = 18/37  (sum 1).
    # The undirected walk gives the middle node the mass of its degree, damped toward s.
    r, _ = pagerank(adjacency(3, [(0, 1), (1, 2)]), np.ones(3), tol=1e-14, max_iter=2000)
    assert np.allclose(r, [19 / 74, 18 / 37, 19 / 74], atol=1e-10)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(2, 12),
    raw_edges=st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11)), max_size=30),
    seed_nodes=st.lists(st.integers(0, 11), min_size=1, max_size=4),
)
def test_matches_dict_power_iteration(n: int, raw_edges: list[tuple[int, int]],
                                      seed_nodes: list[int]) -> None:
    edges = [(a % n, b % n) for a, b in raw_edges]
    seeds: dict[int, float] = {}
    for i in seed_nodes:
        seeds[i % n] = seeds.get(i % n, 0.0) + 1.0
    vec = np.zeros(n)
    for i, w in seeds.items():
        vec[i] = w
    r, _ = pagerank(adjacency(n, edges), vec, tol=1e-14, max_iter=2000)
    twin = dict_ppr(n, edges, seeds)
    assert abs(r.sum() - 1.0) < 1e-9
    assert np.max(np.abs(r - np.array(twin))) < 1e-9


def test_matches_networkx() -> None:
    edges = [(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (5, 6)]
    n = 8  # node 7 is dangling (no links)
    seeds = np.array([1.0, 0, 0, 0, 2.0, 0, 0, 1.0])
    r, _ = pagerank(adjacency(n, edges), seeds, tol=1e-14, max_iter=2000)
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from(edges)
    pers = {i: float(seeds[i]) for i in range(n)}
    ref = nx.pagerank(g, alpha=0.85, personalization=pers, dangling=pers, tol=1e-14,
                      max_iter=1000)
    assert max(abs(r[i] - ref[i]) for i in range(n)) < 1e-9


def test_cooccurrence_edges_weighted_by_beta() -> None:
    adj = adjacency(3, [(0, 1)], WeightedEdges.of([(1, 2, 0.5)]), beta=0.4).toarray()
    assert adj[0, 1] == 1.0 and adj[1, 0] == 1.0
    assert abs(adj[1, 2] - 0.2) < 1e-12 and abs(adj[2, 1] - 0.2) < 1e-12
    assert adj[0, 2] == 0.0


def test_named_notes_and_seed_vector() -> None:
    corpus = make_corpus(
        [("Caroline", ""), ("Support Group", "x"), ("Melanie", "")],
        aliases=[("Caro",), (), ()],
    )
    names = NameIndex.build(corpus)
    assert names.named_in("When did Caroline go to the support group?") == [0, 1]
    assert names.named_in("what did caro say") == [0]
    assert names.named_in("support") == []
    bm25 = np.array([0.0, 3.0, 1.0])
    s = seed_vector(3, [0], [bm25], top=2)
    # named: +1 on Caroline; bm25 top 2 are positions 1 (rank 0) and 2 (rank 1).
    assert s.tolist() == [1.0, 1.0, 0.5]


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 10),
    raw_edges=st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), max_size=25),
    scores=st.lists(st.floats(-1, 5, allow_nan=False), min_size=10, max_size=10),
    mask=st.lists(st.booleans(), min_size=10, max_size=10),
)
def test_neighbor_max_matches_loop(n: int, raw_edges: list[tuple[int, int]],
                                   scores: list[float], mask: list[bool]) -> None:
    edges = [(a % n, b % n) for a, b in raw_edges]
    s, el = np.array(scores[:n]), np.array(mask[:n])
    got = neighbor_max(adjacency(n, edges), s, el)
    for d in range(n):
        nbrs = {b for a, b in edges if a == d} | {a for a, b in edges if b == d}
        want = max([0.0] + [float(s[x]) for x in nbrs - {d} if el[x]])
        assert got[d] == want


def test_neighbor_max_hand_case() -> None:
    adj = adjacency(4, [(0, 1), (1, 2)])
    s = np.array([0.3, 0.1, 0.9, 0.8])
    out = neighbor_max(adj, s, np.array([True, True, False, True]))
    assert out.tolist() == [0.1, 0.3, 0.1, 0.0]  # node 2 is ineligible: lends nothing


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 12),
    raw_edges=st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11)), max_size=30),
    scores=st.lists(st.floats(0, 5, allow_nan=False), min_size=12, max_size=12),
    mask=st.lists(st.booleans(), min_size=12, max_size=12),
)
def test_context_from_the_fused_support_equals_the_full_pass(
    n: int, raw_edges: list[tuple[int, int]], scores: list[float], mask: list[bool]
) -> None:
    edges = [(a % n, b % n) for a, b in raw_edges]
    adj = adjacency(n, edges)
    fused, el = np.array(scores[:n]), np.array(mask[:n])
    hop1 = neighbor_max(adj, fused, el)
    want = 0.6 * hop1 + 0.6 * 0.6 * neighbor_max(adj, hop1, el)
    support = np.flatnonzero(fused > 0)
    saved = stages.DENSE_SHARE
    try:
        for share in (0, 10**9):  # the gathered sum and the whole-vector one
            stages.DENSE_SHARE = share
            for given_support in (None, support):
                report, got = context_stage(adj, fused, el, 0.6, given_support)
                assert report.startswith("ran") or adj.nnz == 0
                if adj.nnz:
                    assert got.tobytes() == want.tobytes()
    finally:
        stages.DENSE_SHARE = saved


def _push_by_slicing(w: Walk, s: np.ndarray, alpha: float = ALPHA, eps: float = 1e-5,
                     grid: bool = True) -> np.ndarray:
    """Forward push as first written (scipy row slicing, the floor computed per call); with
    `grid`, p and q on the 2^-60 grid as `push` keeps them (graph.py docstring), else floats."""
    one = FIXED if grid else 1.0
    dt = np.int64 if grid else np.float64
    p, q, seeds = np.zeros(w.n, dtype=dt), (s * one).astype(dt), np.flatnonzero(s)
    deg = np.where(w.inv_deg > 0, 1.0 / np.where(w.inv_deg > 0, w.inv_deg, 1.0), 0.0)
    floor = eps * one * np.maximum(deg, 1.0)
    active = seeds[q[seeds] > floor[seeds]]
    while active.size:
        qa = q[active].astype(np.float64)
        q[active] = 0
        p[active] += ((1.0 - alpha) * qa).astype(dt)
        spread = w.inv_deg[active] > 0
        src = active[spread]
        sub = w.adj.to_scipy()[src]
        share = np.repeat(alpha * qa[spread] * w.inv_deg[src], np.diff(sub.indptr))
        np.add.at(q, sub.indices, (share * sub.data).astype(dt))
        touched = [sub.indices.astype(np.int64)]
        lost = (alpha * qa[~spread]).astype(dt).sum()
        if lost > 0:
            q[seeds] += (float(lost) * s[seeds]).astype(dt)
            touched.append(seeds)
        cand = np.unique(np.concatenate(touched))
        active = cand[q[cand] > floor[cand]]
    return p.astype(np.float64) / one


def test_push_gives_the_bytes_of_the_first_push() -> None:
    rng = np.random.default_rng(7)
    n = 3000
    a, b = rng.integers(0, n, 6000).tolist(), rng.integers(0, n, 6000).tolist()
    edges = list(zip(a, b, strict=True))
    walk = Walk.build(adjacency(n, edges))
    for trial in range(5):
        s = np.zeros(n)
        s[rng.integers(0, n, 4 + trial)] = rng.random(4 + trial)
        s /= s.sum()
        got = push(walk, s)[0]
        assert np.array_equal(got, _push_by_slicing(walk, s))
        # the grid moves the float push's answer by rounding alone
        assert np.allclose(got, _push_by_slicing(walk, s, grid=False), rtol=1e-12, atol=1e-17)


def test_linked_pairs_are_the_sorted_distinct_unordered_pairs() -> None:
    rng = np.random.default_rng(8)
    for n in (1, 7, 300):
        edges = tuple(sorted({(int(a), int(b)) for a, b in rng.integers(0, n, (4 * n, 2))}))
        la, lb = _linked_pairs(edges)
        want = sorted({(min(a, b), max(a, b)) for a, b in edges if a != b})
        assert list(zip(la.tolist(), lb.tolist(), strict=True)) == want
    assert _linked_pairs(())[0].shape == (0,)


@pytest.mark.parametrize("seed", range(3))
def test_adjacency_from_edge_arrays_equals_adjacency_from_pairs(seed: int) -> None:
    rng = random.Random(seed)
    pairs = sorted({(rng.randrange(40), rng.randrange(40)) for _ in range(150)})
    a, b = adjacency(45, pairs), adjacency(45, Edges.of(pairs))
    for x, y in ((a.indptr, b.indptr), (a.indices, b.indices), (a.data, b.data)):
        assert x.dtype == y.dtype and x.tolist() == y.tolist()
    assert adjacency(5, Edges.of([])).nnz == 0
