"""PageRank by forward push against power iteration on a random hub graph (issue 17).

    python -m bench.bench_push [--nodes 1000000] [--trials 3]

A random graph of N nodes and 3N links (half to Pareto-distributed hubs), 14 seeds a trial;
times `pagerank(..., push_above=0)` (power iteration) and `push` at eps 1e-5 and 1e-6, and
prints the overlap of their top-10 and top-100 and the L1 distance of the two vectors.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import numpy.typing as npt
from scipy import sparse

from vault import Walk, pagerank
from vault import pagerank_push as push


def top(x: np.ndarray, k: int) -> set[int]:
    return set(np.argsort(-x, kind="stable")[:k].tolist())


def hub_edges(n: int, rng: np.random.Generator) -> tuple[npt.NDArray[np.int64],
                                                         npt.NDArray[np.int64]]:
    """3n directed edges (sources, targets) among `n` nodes, half of them into hubs (target
    Pareto(1.2)-distributed, low numbers the biggest hubs): the graph the graph benches time
    (this one and bench_graph_stage.py)."""
    src = rng.integers(0, n, 3 * n)
    hub = rng.random(3 * n) < 0.5
    dst = np.where(hub, (rng.pareto(1.2, 3 * n) * 3).astype(np.int64) % n,
                   rng.integers(0, n, 3 * n))
    return src, dst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--trials", type=int, default=3)
    args = parser.parse_args()
    n = args.nodes
    rng = np.random.default_rng(0)
    src, dst = hub_edges(n, rng)
    adj = sparse.coo_matrix((np.ones(6 * n), (np.r_[src, dst], np.r_[dst, src])),
                            shape=(n, n)).tocsr()
    adj.sum_duplicates()
    adj.data[:] = 1.0
    walk = Walk.build(adj)
    print(f"nodes {n}, links {adj.nnz // 2}")
    for _ in range(args.trials):
        s = np.zeros(n)
        s[rng.integers(0, n, 12)] = 1.0
        s[rng.integers(0, 50, 2)] = 1.0
        t0 = time.perf_counter()
        r, iters = pagerank(walk, s, push_above=0)
        power_s = time.perf_counter() - t0
        for eps in (1e-5, 1e-6):
            t0 = time.perf_counter()
            p, rounds = push(walk, s / s.sum(), eps=eps)
            push_ms = (time.perf_counter() - t0) * 1000
            print(f"power {power_s:.2f} s ({iters} it) | push eps {eps}: {push_ms:.0f} ms "
                  f"({rounds} rounds), top-10 overlap {len(top(r, 10) & top(p, 10))}/10, "
                  f"top-100 {len(top(r, 100) & top(p, 100))}/100, L1 {np.abs(r - p).sum():.2f}")


if __name__ == "__main__":
    main()
