"""Full-pipeline search latency on the generated vault (bench.gen_vault), reranker off.

    python -m bench.bench_search --notes 10000 [--queries 200] [--keep DIR]

Indexes the vault through the Vault facade with the MiniLM encoder (chunk embeddings cached in
the vault's index.sqlite, so a kept vault re-runs without embedding), then times
`Vault.search` (sync check + every signal + fusion + receipts, query embedding included) and
`SearchEngine.search` alone on the same corpus. Prints p50/p95/max in ms.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.gen_vault import DAYS, TOPICS, generate
from bench.report import latency_ms
from vault import MiniLmEncoder, SearchEngine, SearchParams, Vault


def run(root: Path, n: int, queries: int) -> dict[str, object]:
    if not (root / ".rmh").is_dir():
        generate(root, n)
    with Vault.init(root, engine=lambda own: SearchEngine(
            SearchParams(), encoder=MiniLmEncoder(), cache=own)) as v:
        v.sync()
        t0 = time.perf_counter()
        prepared = v.engine.prepare(v.corpus())
        prepare_s = time.perf_counter() - t0
        rng = np.random.default_rng(11)
        qs = [f"what did the {rng.choice(TOPICS)} team do with {rng.choice(TOPICS)} "
              f"on {rng.choice(DAYS)}?" for _ in range(queries)]
        v.search("warm up")
        facade, engine = [], []
        corpus = v.corpus()
        for q in qs:
            t0 = time.perf_counter()
            v.search(q)
            facade.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            v.engine.search(corpus, q)
            engine.append(time.perf_counter() - t0)
    return {"notes": len(corpus), "chunks": prepared["chunks"], "prepare_s": prepare_s,
            "vault_search": latency_ms(facade), "engine_search": latency_ms(engine)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--keep", type=Path, help="vault folder to create/reuse")
    args = parser.parse_args()
    if args.keep:
        print(run(args.keep, args.notes, args.queries))
        return
    with tempfile.TemporaryDirectory() as tmp:
        print(run(Path(tmp) / "vault", args.notes, args.queries))


if __name__ == "__main__":
    main()
