"""Per-query cost of learned co-occurrence as the pair count grows.

    python -m bench.bench_cooccurrence [--notes 10000] [--pairs 20000 --pairs 200000 ...]

Every search adds co-occurrence pairs to the learned state, and ranking weighs all of them on
every query (their weights depend on the number of searches and on the clock). This times the
query-path work alone, per pair count: `PairTable.edges` (weigh, drop hubs and weak edges),
re-keying to corpus positions, and the sparse adjacency PageRank walks. Pairs are drawn with a
fixed seed; counts follow a long tail (most pairs seen once), as in use. Prints a markdown
table for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from vault import LearnedState, LearningParams, NoteState, Pair, PairTable, WeightedEdges
from vault import link_adjacency as adjacency

NOW = 1_800_000_000.0


def state_with(notes: int, pairs: int, seed: int = 0) -> LearnedState:
    rng = np.random.default_rng(seed)
    st = LearnedState()
    st.searches = max(1, pairs // 10)  # a search adds about 10 pairs (top 5 choose 2)
    seen = rng.integers(1, 50, size=notes)
    for i in range(notes):
        st.notes[i + 1] = NoteState(q=0.0, seen=int(seen[i]))
    while len(st.pairs) < pairs:
        a, b = rng.integers(1, notes + 1, size=2)
        if a != b:
            key = (int(min(a, b)), int(max(a, b)))
            count = int(rng.zipf(2.0))
            st.pairs[key] = Pair(count, NOW - float(rng.integers(0, 60 * 86_400)))
    return st


def time_query(st: LearnedState, notes: int, reps: int) -> dict[str, float]:
    table, params = PairTable(), LearningParams()
    ids = list(range(1, notes + 1))
    table.edges(st, NOW, params)  # first call copies the state into the arrays
    out: dict[str, list[float]] = {"edges": [], "positions": [], "adjacency": []}
    kept = WeightedEdges.empty()
    for r in range(reps):
        t0 = time.perf_counter()
        e = table.edges(st, NOW + r, params)
        t1 = time.perf_counter()
        kept = e.to_positions(ids)
        t2 = time.perf_counter()
        adjacency(notes, (), kept)
        t3 = time.perf_counter()
        out["edges"].append(t1 - t0)
        out["positions"].append(t2 - t1)
        out["adjacency"].append(t3 - t2)
    res = {k: 1000 * float(np.median(v)) for k, v in out.items()}
    res["total"] = sum(res.values())
    res["kept"] = float(len(kept))
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--pairs", type=int, action="append")
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    sizes = args.pairs or [20_000, 200_000, 1_000_000]
    print("| pairs | edges kept | weigh ms | to positions ms | adjacency ms | total ms |")
    print("|---|---|---|---|---|---|")
    for p in sizes:
        r = time_query(state_with(args.notes, p), args.notes, args.reps)
        print(f"| {p:,} | {int(r['kept']):,} | {r['edges']:.2f} | {r['positions']:.2f} | "
              f"{r['adjacency']:.2f} | {r['total']:.2f} |")


if __name__ == "__main__":
    main()
