"""Where a search's time goes at scale: the stage breakdown of `Vault.search`, as a command.

    python -m bench.profile_search --notes 100000 --keep DIR [--queries 30]

Opens (or generates) the turns vault of bench/bench_scale.py with the same synthetic encoder,
builds every retrieval structure, then runs `--queries` of bench_scale's questions through
`Vault.search` with a timer wrapped around each stage function the pipeline and the facade
call (the functions themselves are unchanged; only the names the callers look up are
rebound for the run). Prints one JSON document: search p50/p95, per stage the mean and p95
milliseconds per query and its share of the mean search time ("other" is what no timer
covers: eligibility masks, the named, warmth and prior arithmetic, the result's basis), the derived
arrays' MiB and the process's RSS when ready and at its peak (VmHWM).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from bench.bench_scale import ready_vault
from bench.report import status_kb
from vault import Bm25Index, Vault, core
from vault.retrieval import pipeline
from vault.retrieval.signals.conjunctive import ConjunctiveIndex

# The modules whose names the engine and the facade call through: a profiler rebinds what
# they look up, so it names vault's internals (a white-box tool: tests/test_import_directions.py).

# (stage name, owner object, attribute): the names the pipeline and the facade call through
STAGES: tuple[tuple[str, Any, str], ...] = (
    ("bm25", Bm25Index, "score_tokens"),
    ("conjunctive", ConjunctiveIndex, "score_tokens"),
    ("dense", pipeline, "dense_scores"),
    ("graph", pipeline.SearchEngine, "_graph"),
    ("fusion", pipeline, "fuse"),
    ("context", pipeline, "context_stage"),
    ("named", pipeline, "named_stage"),
    ("protect", pipeline, "protect_stage"),
    ("top", pipeline, "top"),
    ("receipts", pipeline, "hit_of"),
    ("snippets", core, "with_snippets"),
)


def facade_stages(v: Vault) -> tuple[tuple[str, Any, str], ...]:
    """The facade's own steps around the engine, on this vault's objects: the freshness
    check, the corpus with its archive flags, reading the learned vectors, and learning from
    the shown hits."""
    return (("fresh", v.live, "fresh"), ("corpus", v, "corpus"),
            ("learned", v.usage, "learned"), ("learn", v.usage, "on_search"))


@contextmanager
def timed_stages(spent: dict[str, list[float]], stages: tuple[tuple[str, Any, str], ...]
                 ) -> Iterator[None]:
    """Rebind each of `stages` to a timing wrapper for the duration of the block; every
    call's seconds are appended to `spent[stage]`."""
    saved: list[tuple[Any, str, Any]] = []

    def wrap(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent.setdefault(name, []).append(time.perf_counter() - t0)
        return timed

    for name, owner, attr in stages:
        fn = getattr(owner, attr)
        saved.append((owner, attr, fn))
        setattr(owner, attr, wrap(name, fn))
    try:
        yield
    finally:
        for owner, attr, fn in reversed(saved):
            if isinstance(owner, type) or owner in (pipeline, core):
                setattr(owner, attr, fn)
            else:  # an instance: drop the override, its class's method shows again
                delattr(owner, attr)


def profile(n: int, keep: Path | None, queries: int) -> dict[str, Any]:
    with ready_vault(n, keep, queries) as ready:
        v, prepared, qs = ready.vault, ready.prepared, ready.questions
        prepare_s, rss_ready = ready.timing["prepare_s"], ready.rss_ready_kb
        stages_all = STAGES + facade_stages(v)
        spent: dict[str, list[float]] = {name: [] for name, _, _ in stages_all}
        total: list[float] = []
        with timed_stages(spent, stages_all):
            for q, _ in qs:
                before = {k: len(x) for k, x in spent.items()}  # one entry per query
                t0 = time.perf_counter()
                v.search(q)
                total.append(time.perf_counter() - t0)
                for k, x in spent.items():  # one number per query and stage
                    got = x[before[k]:]
                    del x[before[k]:]
                    x.append(sum(got))
    mean_total = float(np.mean(total))
    stages: dict[str, dict[str, float]] = {}
    covered = np.zeros(len(total))
    for name in spent:
        per = np.asarray(spent[name])
        covered += per
        stages[name] = {"mean_ms": round(float(per.mean()) * 1000, 1),
                        "p95_ms": round(float(np.percentile(per, 95)) * 1000, 1),
                        "share": round(float(per.mean()) / mean_total, 3)}
    other = np.asarray(total) - covered
    stages["other"] = {"mean_ms": round(float(other.mean()) * 1000, 1),
                       "p95_ms": round(float(np.percentile(other, 95)) * 1000, 1),
                       "share": round(float(other.mean()) / mean_total, 3)}
    a = np.asarray(total) * 1000
    return {"notes": n, "chunks": prepared["chunks"], "dense": prepared["dense"],
            "prepare_s": round(prepare_s, 1), "queries": len(total),
            "derived_array_mb": {k: round(b / 2**20, 1)
                                 for k, b in prepared["array_bytes"].items()},
            "rss_ready_mb": round(rss_ready / 1024),
            "peak_rss_mb": round(status_kb("VmHWM") / 1024),
            "search_ms": {"mean": round(float(a.mean()), 1),
                          "p50": round(float(np.percentile(a, 50)), 1),
                          "p95": round(float(np.percentile(a, 95)), 1)},
            "stages": stages}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--keep", type=Path, help="folder to create/reuse vaults under")
    args = parser.parse_args()
    print(json.dumps(profile(args.notes, args.keep, args.queries)), flush=True)


if __name__ == "__main__":
    main()
