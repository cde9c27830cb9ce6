"""Graph signal: personalized PageRank over the undirected wiki-link graph.

With A the symmetric adjacency (1 per linked pair, in either direction; plus learned
co-occurrence edges at weight beta * w, w in [0, 1]), P = A D^-1 the column-stochastic walk
(D = diag of column sums) and s the seed distribution (sum 1), the scores are the fixed point

    r = (1 - alpha) s + alpha (P r + m(r) s),   m(r) = sum of r over dangling nodes (D_jj = 0)

(Page et al. 1999; Haveliwala 2002 for the personalization; dangling mass returns to the
seeds, so r stays a distribution). alpha = 0.85. Power iteration from r0 = s stops when
||r_{t+1} - r_t||_1 < tol or after max_iter steps; r sums to 1. Each step costs O(nodes +
links), about 35 ms at 10^6 notes, and ~50 steps are needed: too slow there. So above
`PUSH_ABOVE` nodes the same fixed point is approximated by forward push (Andersen, Chung &
Lang 2006, "Local graph partitioning using PageRank vectors"): estimate p = 0, residual
q = s; every node u with q_u > eps * max(d_u, 1) moves (1 - alpha) q_u into p_u and spreads
alpha q_u over its neighbours in proportion to the edge weights (a dangling node returns it to
the seeds), all such nodes at once per round, until none is left. The error per node is below
eps * d_u and the work is O(1 / (eps (1 - alpha))) whatever the graph size; only nodes that
received mass are ever examined. Rounds are processed in ascending node order, so the result
is deterministic.

Seeds: notes named in the query (a title or alias whose token sequence appears in the query's
tokens) with weight `NAMED_WEIGHT` each, plus the top `TOP_SEEDS` hits of each first-stage
signal (BM25, dense) with weight 1/(rank + 1); then s is normalised to sum 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import chain

import numpy as np
import numpy.typing as npt

from ...learning.edges import WeightedEdges
from ...storage.columns import Edges
from ..csr import Csr, adjacency_of
from ..fusion import Paths, distinct
from ..fusion import top as first

ALPHA = 0.85
TOL = 1e-9  # L1 change between iterations; ranks are stable far above this
MAX_ITER = 200
BETA = 0.0  # learned co-occurrence edges in PageRank: off by default (BENCHMARKS.md, learning)
NAMED_WEIGHT = 1.0
TOP_SEEDS = 5
PUSH_ABOVE = 50_000  # nodes from which pagerank() pushes instead of iterating
PUSH_EPS = 1e-5

F64 = npt.NDArray[np.float64]


def _linked_pairs(edges: Sequence[tuple[int, int]]) -> tuple[npt.NDArray[np.int64],
                                                              npt.NDArray[np.int64]]:
    """The distinct unordered pairs {a, b}, a != b, of `edges` as (min, max) columns sorted
    by (min, max): sorted({(min(a, b), max(a, b))}) in arrays (a set of 2-tuples costs
    ~150 bytes a link, 400 MB at 10^6 notes; this 16 bytes plus a sort)."""
    if isinstance(edges, Edges):  # the corpus's own arrays: no tuples at all
        a, b = edges.src.astype(np.int64), edges.dst.astype(np.int64)
    else:
        flat = np.fromiter(chain.from_iterable(edges), dtype=np.int64, count=2 * len(edges))
        a, b = flat[0::2], flat[1::2]
    keep = a != b
    lo, hi = np.minimum(a[keep], b[keep]), np.maximum(a[keep], b[keep])
    key = distinct((lo << np.int64(32)) | hi)  # positions are below 2^31; not np.unique (hashes)
    return key >> np.int64(32), key & np.int64(0xFFFFFFFF)


def adjacency(
    n: int,
    edges: Sequence[tuple[int, int]],
    extra: WeightedEdges | None = None,
    beta: float = BETA,
) -> Csr:
    """Symmetric adjacency: 1 per linked pair (either direction), + beta * w per extra edge.
    Without extra edges it is built in numpy (csr.adjacency_of: a search imports no scipy);
    with them by scipy, whose sum of duplicate entries it keeps."""
    la, lb = _linked_pairs(edges)
    if extra is None or not len(extra):
        return adjacency_of(n, np.concatenate([la, lb]), np.concatenate([lb, la]))
    lw = np.ones(la.shape[0], dtype=np.float64)
    positive = extra.w > 0
    la = np.concatenate([la, extra.a[positive]])
    lb = np.concatenate([lb, extra.b[positive]])
    lw = np.concatenate([lw, beta * extra.w[positive]])
    rows, cols = np.concatenate([la, lb]), np.concatenate([lb, la])
    from scipy import sparse

    m = sparse.coo_matrix(
        (np.concatenate([lw, lw]), (rows, cols)), shape=(n, n), dtype=np.float64
    ).tocsr()
    m.sum_duplicates()
    return Csr.from_scipy(m)


@dataclass(frozen=True)
class Walk:
    """P = A D^-1 as A and 1 / diag(D) (0 on dangling columns), plus the dangling indices."""

    adj: Csr
    inv_deg: F64
    dangling: npt.NDArray[np.int64]

    @classmethod
    def build(cls, adj: Csr) -> Walk:
        csr = adj.tocsr()
        deg = np.zeros(int(csr.shape[0]))
        has = np.diff(csr.indptr) > 0
        if has.any():  # column sums = row sums: A is symmetric
            deg[has] = np.add.reduceat(csr.data, csr.indptr[:-1][has])
        is_dangling = deg == 0
        inv = np.where(is_dangling, 0.0, 1.0 / np.where(is_dangling, 1.0, deg))
        return cls(csr, inv, np.flatnonzero(is_dangling).astype(np.int64))

    @property
    def n(self) -> int:
        return int(self.adj.shape[0])

    @cached_property
    def floor_unit(self) -> F64:
        """max(d_u, 1), push's threshold per node over eps, with d_u from `inv_deg` as push
        has always computed it: once per walk, not per query (at 10^6 notes the n-length
        passes cost milliseconds)."""
        inv = self.inv_deg
        deg = np.where(inv > 0, 1.0 / np.where(inv > 0, inv, 1.0), 0.0)
        out: F64 = np.maximum(deg, 1.0)
        return out


def pagerank(
    walk: Walk | Csr,
    seeds: F64,
    alpha: float = ALPHA,
    tol: float = TOL,
    max_iter: int = MAX_ITER,
    push_above: int = PUSH_ABOVE,
) -> tuple[F64, int]:
    """Personalized PageRank (see module docstring) over a Walk or an adjacency matrix:
    power iteration, or forward push from `push_above` nodes (0 = never).

    Returns (r, iterations or push rounds)."""
    w = walk if isinstance(walk, Walk) else Walk.build(walk)
    s = np.asarray(seeds, dtype=np.float64)
    total = s.sum()
    if w.n == 0 or total <= 0:
        raise ValueError("seed vector must have positive mass")
    s = s / total
    if 0 < push_above <= w.n:
        return push(w, s, alpha)
    restart = (1.0 - alpha) * s
    r = s.copy()
    for it in range(1, max_iter + 1):
        nxt = alpha * (w.adj @ (w.inv_deg * r)) + (alpha * r[w.dangling].sum()) * s + restart
        if np.abs(nxt - r).sum() < tol:
            return nxt, it
        r = nxt
    return r, max_iter


def push(w: Walk, s: F64, alpha: float = ALPHA, eps: float = PUSH_EPS) -> tuple[F64, int]:
    """Forward-push approximation of the PageRank fixed point for seeds `s` (sum 1)."""
    n = w.n
    p = np.zeros(n)
    q = s.copy()
    seeds = np.flatnonzero(s)
    unit = w.floor_unit  # the threshold of node u is eps * unit[u], computed where needed
    active = seeds[q[seeds] > eps * unit[seeds]]
    rounds = 0
    while active.size:
        rounds += 1
        qa = q[active]
        q[active] = 0.0
        p[active] += (1.0 - alpha) * qa
        spread = w.inv_deg[active] > 0
        src = active[spread]
        sub = w.adj[src]  # whole rows copied at once: faster than an index gather at hubs
        share = np.repeat(alpha * qa[spread] * w.inv_deg[src], np.diff(sub.indptr))
        np.add.at(q, sub.indices, share * sub.data)
        touched = [sub.indices]
        lost = float((alpha * qa[~spread]).sum())
        if lost > 0:  # dangling nodes return their share to the seeds
            q[seeds] += lost * s[seeds]
            touched.append(seeds)
        cand = distinct(np.concatenate(touched))
        active = cand[q[cand] > eps * unit[cand]]
    return p, rounds


def seed_vector(
    n: int, named: Sequence[int], first_stage: Sequence[F64], top: int = TOP_SEEDS,
    heads: Sequence[npt.NDArray[np.int64] | None] = (), paths: Paths = None,
) -> F64:
    """Unnormalised seeds: NAMED_WEIGHT per named note + 1/(rank+1) for each signal's top hits.

    A signal's hit counts only when its score is positive; ties break by path (fusion.top).
    `heads[j]`, when given, is `first(first_stage[j], m)` for some m >= `top` (the fusion's
    head: its first `top` are this signal's, by the total order), so it is not sorted again.
    """
    s = np.zeros(n, dtype=np.float64)
    for i in named:
        s[i] += NAMED_WEIGHT
    for j, scores in enumerate(first_stage):
        head = heads[j] if j < len(heads) else None
        ranked = first(scores, top, paths=paths) if head is None else head[:top]
        for rank, i in enumerate(ranked.tolist()):
            if scores[i] > 0:
                s[i] += 1.0 / (rank + 1)
    return s
