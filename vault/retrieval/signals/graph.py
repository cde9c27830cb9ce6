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

History-independent sums: a node's position follows its note id, and ids follow the order the
notes were first indexed, so a sum taken in position order (a sparse product's row, the
dangling mass, the convergence test, push's scattered residuals) rounds differently for the
same files indexed through another history (~1e-16, and a convergence test that lands on the
other side of `tol` stops an iteration earlier). Every such sum is exact instead: each term on
the grid of 2^-60 (`FIXED`; r and each row of P r sum to at most 1, so a partial sum fits an
int64), added in integers, whose sum has no order. Push keeps p and q on that grid. The seeds'
total is `math.fsum` (correctly rounded, so order-free). Per-node products stay floats: they
do not depend on order. So r is a function of the graph's notes and links alone, bit for bit
(tests/vault/retrieval/test_graph_exact.py).

Seeds: notes named in the query (a title or alias whose token sequence appears in the query's
tokens) with weight `NAMED_WEIGHT` each, plus the top `TOP_SEEDS` hits of each first-stage
signal (BM25, dense) with weight 1/(rank + 1); then s is normalised to sum 1.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import chain
from typing import Any

import numpy as np
import numpy.typing as npt

from ...int_arrays import distinct
from ...learning.edges import WeightedEdges
from ...storage.columns import Edges
from ..csr import Csr, adjacency_of
from ..fusion import Paths
from ..fusion import top as first

ALPHA = 0.85
TOL = 1e-9  # L1 change between iterations; ranks are stable far above this
MAX_ITER = 200
BETA = 0.0  # learned co-occurrence edges in PageRank: off by default (BENCHMARKS.md, learning)
NAMED_WEIGHT = 1.0
TOP_SEEDS = 5
PUSH_ABOVE = 50_000  # nodes from which pagerank() pushes instead of iterating
PUSH_EPS = 1e-5
FIXED = 2.0**60  # the exact sums' unit (module docstring): 2^-60 ~ 8.7e-19
DEG_FIXED = 2.0**40  # a weighted degree's unit: rows of total weight below 2^23 sum exactly

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


def fixed(x: F64, unit: float = FIXED) -> I64:
    """x on the grid of 1/unit, as integers (truncated toward 0: per element, order-free)."""
    out: I64 = (x * unit).astype(np.int64)
    return out


def exact_sum(x: F64) -> float:
    """sum(x) for |sum| < 8 whatever the order of x: terms on the 2^-60 grid, added in int64."""
    return float(int(fixed(x).sum())) / FIXED


def row_sums(starts: tuple[npt.NDArray[np.bool_], npt.NDArray[np.intp]], terms: I64) -> I64:
    """Each row's integer sum of `terms` (in CSR layout; `starts` = `row_starts(indptr)`):
    exact, so independent of the order of a row's entries; 0 for an empty row."""
    has, first = starts
    out = np.zeros(has.shape[0], dtype=np.int64)
    if first.size:
        out[has] = np.add.reduceat(terms, first)
    return out


def row_starts(indptr: npt.NDArray[np.integer[Any]]
               ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.intp]]:
    """(which rows hold entries, where each of those starts): what `row_sums` reduces at."""
    ptr = indptr.astype(np.intp)
    has = ptr[1:] > ptr[:-1]
    return has, ptr[:-1][has]


def exact_matvec(w: Walk, x: F64) -> F64:
    """w.adj @ x with each row summed exactly (`row_sums` of the products on the 2^-60
    grid): for x = inv_deg * r every row, and all rows together, sum to at most sum(r).
    Unit weights (links only) put x on the grid once per node, not once per entry; `np.take`
    with the int32 indices gathers faster than fancy indexing (and than Csr's bincount)."""
    adj = w.adj
    if w.unit:
        terms = np.take(fixed(x), adj.indices)
    else:  # in place: one float temporary of the entries, then their integers
        prod = np.take(x, adj.indices)
        prod *= adj.data
        prod *= FIXED
        terms = prod.astype(np.int64)
    out: F64 = row_sums(w.starts, terms).astype(np.float64) * (1.0 / FIXED)
    return out


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
        if bool((csr.data == 1.0).all()):  # column sums = row sums: A is symmetric
            if has.any():  # sums of ones: exact in any order
                deg[has] = np.add.reduceat(csr.data, csr.indptr[:-1][has])
        else:  # weighted (co-occurrence): exact sums on the 2^-40 grid (module docstring)
            deg = row_sums(row_starts(csr.indptr), fixed(csr.data, DEG_FIXED)) / DEG_FIXED
        is_dangling = deg == 0
        inv = np.where(is_dangling, 0.0, 1.0 / np.where(is_dangling, 1.0, deg))
        return cls(csr, inv, np.flatnonzero(is_dangling).astype(np.int64))

    @property
    def n(self) -> int:
        return int(self.adj.shape[0])

    @cached_property
    def unit(self) -> bool:
        """Whether every edge weighs 1 (links only, no co-occurrence)."""
        return bool((self.adj.data == 1.0).all())

    @cached_property
    def starts(self) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.intp]]:
        """`row_starts` of the adjacency, once per walk (`exact_matvec` sums at them)."""
        return row_starts(self.adj.indptr)

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
    total = math.fsum(s[s != 0].tolist())  # correctly rounded: no order
    if w.n == 0 or total <= 0:
        raise ValueError("seed vector must have positive mass")
    s = s / total
    if 0 < push_above <= w.n:
        return push(w, s, alpha)
    restart = (1.0 - alpha) * s
    r = s.copy()
    for it in range(1, max_iter + 1):
        mass = exact_sum(r[w.dangling])
        nxt = alpha * exact_matvec(w, w.inv_deg * r) + (alpha * mass) * s + restart
        if exact_sum(np.abs(nxt - r)) < tol:
            return nxt, it
        r = nxt
    return r, max_iter


def push(w: Walk, s: F64, alpha: float = ALPHA, eps: float = PUSH_EPS) -> tuple[F64, int]:
    """Forward-push approximation of the PageRank fixed point for seeds `s` (sum 1). The
    estimate p and residual q are integers on the 2^-60 grid (module docstring): each round's
    shares are per-node floats put on the grid, scattered by integer adds, which have no order."""
    n = w.n
    p = np.zeros(n, dtype=np.int64)
    q = fixed(s)
    seeds = np.flatnonzero(s)
    unit = w.floor_unit  # the threshold of node u is eps * unit[u], computed where needed
    bar = eps * FIXED
    active = seeds[q[seeds] > bar * unit[seeds]]
    rounds = 0
    while active.size:
        rounds += 1
        qa = q[active].astype(np.float64)
        q[active] = 0
        p[active] += ((1.0 - alpha) * qa).astype(np.int64)
        spread = w.inv_deg[active] > 0
        src = active[spread]
        sub = w.adj[src]  # whole rows copied at once: faster than an index gather at hubs
        share = np.repeat(alpha * qa[spread] * w.inv_deg[src], np.diff(sub.indptr))
        np.add.at(q, sub.indices, (share if w.unit else share * sub.data).astype(np.int64))
        touched = [sub.indices]
        lost = int((alpha * qa[~spread]).astype(np.int64).sum())
        if lost > 0:  # dangling nodes return their share to the seeds
            q[seeds] += (float(lost) * s[seeds]).astype(np.int64)
            touched.append(seeds)
        cand = distinct(np.concatenate(touched))
        active = cand[q[cand] > bar * unit[cand]]
    out: F64 = p.astype(np.float64) / FIXED
    return out, rounds


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
