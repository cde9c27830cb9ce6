"""The graph stage's cost at scale: time and memory of PageRank as a search runs it.

    python -m bench.bench_graph_stage [--nodes 100000] [--trials 5] [--beta 0.3]

A random graph of N nodes and 3N links (half to Pareto-distributed hubs, bench_push's), seeded
as `stages.graph_stage` seeds it (2 named notes, the top 5 of two first-stage signals at
1/(rank + 1)); per trial PageRank with the default `push_above` (push above 50,000 nodes),
with power iteration (`push_above` 0), and with N co-occurrence edges at `beta` (their
adjacency added and the walk built per query, as the stage does). Prints the median and max
CPU time (`time.process_time`) and the largest tracemalloc peak of each, and a digest of the
scores (equal across runs of one checkout). Run it from two checkouts (PYTHONPATH) to compare
them; nothing else should share the CPU.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import time
import tracemalloc
from collections.abc import Callable
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from bench.bench_push import hub_edges
from vault import Walk, WeightedEdges, link_adjacency, pagerank

F64 = npt.NDArray[np.float64]
T = TypeVar("T")


def measured(fn: Callable[[], T]) -> tuple[float, int, T]:
    """(CPU seconds, tracemalloc peak bytes, result) of one call."""
    tracemalloc.start()
    t0 = time.process_time()
    out = fn()
    cpu = time.process_time() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return cpu, peak, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--beta", type=float, default=0.3)
    args = parser.parse_args()
    n = args.nodes
    rng = np.random.default_rng(0)
    src, dst = hub_edges(n, rng)
    edges = sorted(set(zip(src.tolist(), dst.tolist(), strict=True)))
    links = link_adjacency(n, edges)
    cpu, peak, walk = measured(lambda: Walk.build(links))
    print(f"nodes {n}, links {links.nnz // 2}; Walk.build {cpu * 1000:.1f} ms CPU, "
          f"peak {peak / 2**20:.1f} MiB")
    ca, cb = rng.integers(0, n, n), rng.integers(0, n, n)
    cooc = WeightedEdges(np.minimum(ca, cb), np.maximum(ca, cb), rng.random(n))
    arms: dict[str, list[tuple[float, int]]] = {"push": [], "iterate": [], "weighted": []}
    digest = hashlib.sha256()
    for _ in range(args.trials):
        seeds = np.zeros(n)
        seeds[[1, 2]] = 1.0
        for _signal in ("bm25", "dense"):
            for rank, i in enumerate(rng.choice(n, 5, replace=False).tolist()):
                seeds[i] += 1.0 / (rank + 1)
        for arm, push_above, co in (("push", 50_000, None), ("iterate", 0, None),
                                    ("weighted", 50_000, cooc)):
            def stage(push_above: int = push_above, co: WeightedEdges | None = co,
                      seeds: F64 = seeds) -> tuple[F64, int]:
                w = walk if co is None else Walk.build(
                    links + link_adjacency(n, (), co, args.beta))
                return pagerank(w, seeds, push_above=push_above)
            cpu, peak, (r, steps) = measured(stage)
            arms[arm].append((cpu, peak))
            digest.update(np.asarray(r).tobytes())
            if len(arms[arm]) == 1:
                print(f"  {arm}: {steps} iterations or rounds")
    for arm, got in arms.items():
        ms = [c * 1000 for c, _ in got]
        print(f"{arm}: median {statistics.median(ms):.1f} ms, max {max(ms):.1f} ms CPU; "
              f"peak {max(p for _, p in got) / 2**20:.1f} MiB")
    print(f"scores digest {digest.hexdigest()[:16]}")


if __name__ == "__main__":
    main()
