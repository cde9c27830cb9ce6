"""`rmh index --ray`: embed a vault's missing chunks as a Ray Data job, into the vault's cache.

Ray is an optional extra (`pip install 'rmh[ray]'`), imported here only, and this module only
when `--ray` is given (vault/ never sees it). The driver (this process) lists the vault's dense
units exactly as the engine embeds them (`vault.corpus_chunks` with the engine's params) and
keeps those whose key (`vault.embedding_key`) the cache lacks, in sorted-key order: the order
`encode_cached` embeds them in locally. They go to Ray as a Dataset of (key, text) rows, one
block per BLOCK rows (the slice `encode_cached` hands to one `encode` call), and `map_batches`
runs each block as one batch through `EmbedActor`, an actor class that builds one
`MiniLmEncoder` per actor (`workers` actors, one CPU each). Every `encode` call thus sees the
texts the local path would give it, in the same order, so the vectors are the same bytes.
The driver checks each batch's encoder fingerprint against its own (a different model wheel on
a worker would mix vector spaces) and writes the vectors into the cache as batches arrive, one
transaction per block (`put_embeddings` sorts by key), so a job cut short keeps what it did.
"""

from __future__ import annotations

import importlib
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import numpy.typing as npt

from vault import (
    Corpus,
    EmbeddingCache,
    Encoder,
    MiniLmEncoder,
    corpus_chunks,
    counted,
    embedding_key,
)

from .errors import HarnessError


class RayFailed(HarnessError):
    """A Ray job could not run or did not finish: Ray missing, a cluster unreachable, a
    worker that failed or returned what this rmh did not send (the message says which)."""

    code_name = "ray_failed"


BLOCK = 512  # rows per Ray block and batch (four of encode_cached's slices: PROGRESS_STEP)
LOOKUP = 4096  # keys per cache presence query (bounds the vectors read at once)
LOCAL = "local"
INSTALL = "--ray needs the ray extra: pip install 'rmh[ray]'"

Progress = Callable[[int, int, str], None]


def ray_module() -> Any:
    """The `ray` package, or RayFailed saying how to install it."""
    try:
        return importlib.import_module("ray")
    except ImportError as exc:
        raise RayFailed(f"{INSTALL} ({exc})") from exc


@contextmanager
def cluster(address: str, workers: int | None) -> Iterator[int]:
    """Connect to Ray for the duration; yields the number of embedding actors to run.

    `address` "local" starts a new cluster of `workers` CPUs on this machine (default: its
    cores), shut down afterwards; anything else is handed to `ray.init(address=...)`
    ("ray://HOST:10001", "HOST:6379", or "auto": RAY_ADDRESS, else a cluster `ray start`ed on
    this machine). Where Ray is already initialised (a test, a notebook) that cluster is used
    and left running. On a cluster the default is one actor per CPU."""
    ray = ray_module()
    started = not ray.is_initialized()
    if started:
        quiet = {"logging_level": "warning", "log_to_driver": False}
        try:
            if address == LOCAL:
                # "local" to Ray too: a new cluster, never one RAY_ADDRESS or a `ray start`
                # on this machine points at
                ray.init(address=LOCAL, num_cpus=workers or os.cpu_count() or 1,
                         include_dashboard=False, **quiet)
            else:
                ray.init(address=address, **quiet)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise RayFailed(f"cannot connect to Ray at {address!r}: {exc}") from exc
    try:
        cpus = int(ray.cluster_resources().get("CPU", 1))
        yield max(1, workers or cpus)
    finally:
        if started:
            ray.shutdown()


def missing_units(
    texts: Sequence[str], fingerprint: str, cache: EmbeddingCache
) -> list[tuple[str, str]]:
    """(key, text) of every distinct text the cache lacks under `fingerprint`, by key."""
    by_key: dict[str, str] = {}
    for text in texts:
        by_key.setdefault(embedding_key(text), text)
    keys = sorted(by_key)
    present: set[str] = set()
    for start in range(0, len(keys), LOOKUP):
        present.update(cache.get_embeddings(fingerprint, keys[start : start + LOOKUP]))
    return [(k, by_key[k]) for k in keys if k not in present]


class EmbedActor:
    """One `MiniLmEncoder` per Ray actor; a batch in, its vectors and the fingerprint out."""

    def __init__(self, threads: int = 1) -> None:
        self.encoder = MiniLmEncoder(threads=threads)

    def __call__(self, batch: dict[str, npt.NDArray[Any]]) -> dict[str, npt.NDArray[Any]]:
        blocks = batch["block"]
        vecs = np.zeros((blocks.shape[0], self.encoder.dim), dtype=np.float32)
        for block in sorted(set(blocks.tolist())):  # one encode call per block, rows in order
            rows = np.flatnonzero(blocks == block)
            vecs[rows] = self.encoder.encode([str(t) for t in batch["text"][rows]])
        fps = np.array([self.encoder.fingerprint] * blocks.shape[0])
        return {"key": batch["key"], "vec": vecs, "fp": fps}


def embed_on_ray(
    units: Sequence[tuple[str, str]],
    encoder: Encoder,
    cache: EmbeddingCache,
    workers: int,
    progress: Progress | None = None,
    block: int = BLOCK,
) -> int:
    """Embed `units` ((key, text), sorted by key) on the connected cluster with up to
    `workers` actors, writing each block's vectors into `cache` as it arrives; returns how
    many were written. Only `block` = BLOCK reproduces the local path's `encode` calls."""
    if not units:
        return 0
    ray = ray_module()
    pa = importlib.import_module("pyarrow")
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    tables = []
    for number, start in enumerate(range(0, len(units), block)):
        part = units[start : start + block]
        tables.append(pa.table({"block": [number] * len(part), "key": [k for k, _ in part],
                                "text": [t for _, t in part]}))
    pool = ray.data.ActorPoolStrategy(size=min(workers, len(tables)))
    dataset = ray.data.from_arrow(tables).map_batches(
        EmbedActor, batch_size=None, batch_format="numpy", compute=pool, num_cpus=1,
        max_restarts=0,  # a worker that cannot run EmbedActor (no rmh there) fails the job
        fn_constructor_kwargs={"threads": 1})
    done = 0
    try:
        for batch in dataset.iter_batches(batch_size=None, batch_format="numpy"):
            items = accepted(batch, encoder.fingerprint)
            cache.put_embeddings(encoder.fingerprint, items)
            done += len(items)
            if progress is not None:
                progress(done, len(units), "embedding on ray")
    except ray.exceptions.RayError as exc:
        raise RayFailed(f"the Ray job failed after {done} of {counted(len(units), 'chunk')} "
                        f"(kept in the cache): {worker_error(exc)}") from exc
    return done


def worker_error(exc: BaseException) -> str:
    """The last error line a Ray error carries (its chain included), with the usual remedy
    when a worker cannot import rmh."""
    text: list[str] = []
    seen: BaseException | None = exc
    while seen is not None:
        text += [ln.strip() for ln in str(seen).splitlines()]
        seen = seen.__cause__
    errors = [ln for ln in text if re.match(r"^[\w.]*(Error|Exception)\b.*:", ln)]
    last = errors[-1] if errors else (text[0] if text and text[0] else type(exc).__name__)
    if "No module named" in last:
        last += " (install rmh and its model wheel on every Ray node)"
    return last[:300]


def accepted(batch: dict[str, npt.NDArray[Any]], fingerprint: str) -> dict[str, np.ndarray]:
    """A batch `EmbedActor` returned as key -> vector, refused (RayFailed) when a worker's
    encoder fingerprint is not `fingerprint` (another model wheel: another vector space)."""
    theirs = sorted(set(batch["fp"].tolist()))
    if theirs != [fingerprint]:
        raise RayFailed(
            "a Ray worker's embedder differs from this one (fingerprint "
            f"{', '.join(fp[:12] for fp in theirs)} vs {fingerprint[:12]}): install the same "
            "rmh and model wheel on every node")
    vecs = np.asarray(batch["vec"], dtype=np.float32)
    return {str(k): vecs[i] for i, k in enumerate(batch["key"].tolist())}


def index_on_ray(
    corpus: Corpus,
    encoder: Encoder,
    cache: EmbeddingCache,
    params: tuple[int, int],
    address: str,
    workers: int | None,
    progress: Progress | None = None,
    block: int = BLOCK,
) -> dict[str, Any]:
    """Fill `cache` with every missing chunk vector of `corpus` through Ray; `params` are the
    engine's (max_tokens, max_note_units). Returns what it did (JSON-safe)."""
    texts, _, _ = corpus_chunks(corpus, encoder.count_tokens, *params)
    units = missing_units(texts, encoder.fingerprint, cache)
    report: dict[str, Any] = {"address": address, "chunks": len(texts), "missing": len(units),
                              "embedded": 0, "workers": 0, "connect_seconds": 0.0,
                              "seconds": 0.0}
    if not units:
        return report
    t0 = time.perf_counter()
    with cluster(address, workers) as actors:
        t1 = time.perf_counter()
        report["workers"] = min(actors, -(-len(units) // block))
        report["embedded"] = embed_on_ray(units, encoder, cache, actors, progress, block)
        t2 = time.perf_counter()
    report["connect_seconds"] = round(t1 - t0, 3)  # starting or joining the cluster
    report["seconds"] = round(t2 - t1, 3)  # the job: actors start, embed, vectors written
    return report
