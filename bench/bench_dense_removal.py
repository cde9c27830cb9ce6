"""CPU of the dense index following a removal in place, against the rebuild it replaces.

    python -m bench.bench_dense_removal --notes 100000 [--removed 1 1000] [--rounds 3]
                                         [--cache memory|sqlite]

Over bench_dense_scale.py's generated notes (SYNTHETIC vectors, bench/synthetic_encoder.py,
not MiniLM), for the exact layout and the int8 IVF: the CPU seconds (process time, every
thread) of `DenseIndex.updated` after `removed` notes are deleted (evenly spread, a
hand-made `CorpusDelta(removed=...)`), against a rebuild of the new corpus from a warm
embedding cache (re-chunk every note, read every vector back, and on the IVF train the lists
again; the cache in memory, or an SQLite file as a vault's is: `--cache sqlite`) and, on the
IVF, against the compaction that trains new lists on the kept codes (`updated` with
compact_fraction 0). Rounds alternate them. Query CPU (score_vector and the top 10, 100
queries) on the index before and after the removal shows what the mapping costs a query.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from bench.bench_dense_scale import WINDOW, corpus, queries, top10
from bench.synthetic_encoder import SyntheticEncoder
from vault import (
    Corpus,
    CorpusDelta,
    DenseIndex,
    DenseParams,
    EmbeddingCache,
    MemoryEmbeddingCache,
    SharedEmbeddingCache,
)


def removed_from(c: Corpus, k: int) -> Corpus:
    """`c` less `k` evenly spread notes, with the delta saying so."""
    gone = sorted({int(x) for x in np.linspace(0, len(c) - 1, k + 2)[1:-1].round()})
    drop = set(gone)

    def kept(col: Sequence[Any]) -> tuple[Any, ...]:
        return tuple(v for i, v in enumerate(col) if i not in drop)

    return replace(c, generation=c.generation + 1, ids=kept(c.ids), paths=kept(c.paths),
                   titles=kept(c.titles), aliases=kept(c.aliases), bodies=kept(c.bodies),
                   frontmatter=kept(c.frontmatter), content_hashes=kept(c.content_hashes),
                   archived=kept(c.archived),
                   delta=CorpusDelta(c.generation, len(c), (), removed=tuple(gone)))


def cpu(fn: Callable[[], object]) -> tuple[float, object]:
    t0 = time.process_time()
    out = fn()
    return time.process_time() - t0, out


def query_cpu(idx: DenseIndex, qs: np.ndarray) -> float:
    t0 = time.process_time()
    for q in qs:
        top10(idx.score_vector(q))
    return (time.process_time() - t0) / len(qs) * 1000


def layout(name: str, params: DenseParams, c: Corpus, nxt: Corpus, enc: SyntheticEncoder,
           cache: EmbeddingCache, rounds: int) -> None:
    """One layout's rows: in place, rebuild (and retrain on the IVF), then query CPU."""
    n, k = len(c), len(c) - len(nxt)
    idx = DenseIndex.build(c, enc, cache, WINDOW, params=params)  # fills the cache
    now = idx.updated(nxt, enc, cache, WINDOW)
    assert now.matrix is idx.matrix and now.ivf is idx.ivf  # in place, not compacted
    every = replace(idx, params=replace(params, compact_fraction=0.0))  # compacts at once
    runs: dict[str, Callable[[], object]] = {
        "in place": lambda: idx.updated(nxt, enc, cache, WINDOW),
        "rebuild": lambda: DenseIndex.build(nxt, enc, cache, WINDOW, params=params),
    }
    if idx.ivf is not None:
        runs["retrain"] = lambda: every.updated(nxt, enc, cache, WINDOW)
    times: dict[str, list[float]] = {what: [] for what in runs}
    for _ in range(rounds):
        for what, fn in runs.items():
            times[what].append(cpu(fn)[0])
    for what, xs in times.items():
        print(f"| {n:,} | {k} | {name} | {what} | "
              f"{' '.join(f'{x:.4f}' for x in xs)} | {np.median(xs):.4f} |", flush=True)
    qs = queries(enc, 100)
    pairs = [(query_cpu(idx, qs), query_cpu(now, qs)) for _ in range(rounds)]
    print(f"|  |  | {name} | query CPU ms, before / after the removal | "
          f"{' '.join(f'{a:.2f}/{b:.2f}' for a, b in pairs)} |  |", flush=True)


def run(n: int, k: int, rounds: int, sqlite: bool) -> None:
    c, enc = corpus(n), SyntheticEncoder()
    nxt = removed_from(c, k)
    with tempfile.TemporaryDirectory() as tmp:
        cache: EmbeddingCache = (SharedEmbeddingCache(Path(tmp) / "embeddings.sqlite")
                                 if sqlite else MemoryEmbeddingCache())
        layout("exact", DenseParams(approx_above=0), c, nxt, enc, cache, rounds)
        layout("IVF", DenseParams(approx_above=1), c, nxt, enc, cache, rounds)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=100_000)
    ap.add_argument("--removed", type=int, nargs="+", default=[1, 1000])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cache", choices=("memory", "sqlite"), default="memory")
    args = ap.parse_args()
    print(f"vectors: SYNTHETIC (bench/synthetic_encoder.py), not MiniLM; {args.cache} cache; "
          "CPU seconds per run")
    print("| notes | removed | layout | what | CPU s, each round | median |")
    print("|---|---|---|---|---|---|")
    for k in args.removed:
        run(args.notes, k, args.rounds, args.cache == "sqlite")


if __name__ == "__main__":
    main()
