"""Foundation benchmark: full index time, no-op sync time, BM25 query latency (p50/p95).

    python -m bench.bench_index --notes 10000 [--notes 100000]

Generates the vault (bench.gen_vault) in a temporary folder, indexes it through the Vault
facade, times a no-op sync and BM25-only queries (the lexical engine: no embedder, so the
numbers isolate the foundation). Prints a markdown table for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.gen_vault import TOPICS, generate
from bench.report import print_table
from vault import Bm25Index, Vault


def pct(xs: list[float], p: float) -> float:
    return float(np.percentile(np.asarray(xs), p))


def run(n: int, queries: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        t0 = time.perf_counter()
        generate(root, n)
        gen_s = time.perf_counter() - t0
        with Vault.init(root, auto_sync=False) as v:
            t0 = time.perf_counter()
            v.sync()
            index_s = time.perf_counter() - t0
            noop = []
            for _ in range(5):
                t0 = time.perf_counter()
                v.sync()
                noop.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            corpus = v.corpus()
            corpus_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            bm25 = Bm25Index.build(corpus)
            bm25_build_s = time.perf_counter() - t0
            rng = np.random.default_rng(3)
            lat = []
            for _ in range(queries):
                q = " ".join(rng.choice(TOPICS, size=3))
                t0 = time.perf_counter()
                scores = bm25.score(q)
                top = np.lexsort((np.asarray(corpus.ids), -scores))[:10]
                lat.append(time.perf_counter() - t0)
                assert len(top) == min(10, n)
    return {
        "notes": n,
        "generate_s": gen_s,
        "full_index_s": index_s,
        "noop_sync_p50_s": statistics.median(noop),
        "corpus_build_s": corpus_s,
        "bm25_build_s": bm25_build_s,
        "bm25_query_p50_ms": pct(lat, 50) * 1000,
        "bm25_query_p95_ms": pct(lat, 95) * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--notes", type=int, action="append")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    rows = [run(n, args.queries) for n in (args.notes or [10_000])]
    print_table(rows)


if __name__ == "__main__":
    main()
