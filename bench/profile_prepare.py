"""Where `engine.prepare`'s memory goes at scale: traced bytes per build step, as a command.

    python -m bench.profile_prepare --notes 100000 --keep DIR

Opens (or generates) the turns vault of bench/bench_scale.py with the same synthetic encoder,
syncs it, takes the snapshot, then runs `engine.prepare` under `tracemalloc` with a wrapper
around each build step the engine calls (the functions are unchanged; only the names the
callers look up are rebound for the run, as bench/profile_search.py does). Per step: the
traced MiB when it starts and ends, its peak (nested steps included) and the transient
(peak - end), and its seconds (slowed by tracing, ~2x). Also the process's RSS before and
after prepare and its VmHWM. Python allocations and numpy arrays are traced; scipy's C++
temporaries and allocator fragmentation are not, so RSS can exceed the traced peak.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.gen_scale import generate
from bench.report import status_kb
from bench.synthetic_encoder import SyntheticEncoder
from vault import SearchEngine, SearchParams, Vault
from vault.retrieval import derived, names
from vault.retrieval.signals import bm25, conjunctive, dense, graph, ivf, postings, unit_codes

MIB = 2**20

# (step name, owner, attribute): the names prepare's callers look up
STEPS: tuple[tuple[str, Any, str], ...] = (
    ("adjacency", derived, "adjacency"),
    ("bm25", bm25.Bm25Index, "from_documents"),
    ("bm25.postings", postings.Postings, "from_csc"),
    ("conj", conjunctive.ConjunctiveIndex, "from_texts"),
    ("conj.codes", conjunctive, "many_codes"),
    ("conj.distinct", conjunctive, "distinct"),
    ("conj.postings", postings.Postings, "from_row_counts"),
    ("names", names.NameIndex, "build"),
    ("walk", graph.Walk, "build"),
    ("dense", dense.DenseIndex, "build"),
    ("dense.chunks", dense, "_note_chunks"),
    ("dense.ivf_build", dense, "_ivf_build"),
    ("dense.ivf_train", ivf.IvfStore, "train"),
)
_ = unit_codes  # conj.codes and conj.distinct are its functions, called through conjunctive


@contextmanager
def traced_steps(report: list[dict[str, Any]]) -> Iterator[None]:
    """Rebind every step to a tracing wrapper for the block; each call appends its row."""
    peaks = [0]  # running peak of the enclosing step, since reset_peak clears the global one
    saved: list[tuple[Any, str, Any]] = []

    def wrap(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def traced(*args: Any, **kwargs: Any) -> Any:
            start, peak = tracemalloc.get_traced_memory()
            peaks[-1] = max(peaks[-1], peak)
            tracemalloc.reset_peak()
            peaks.append(start)
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                end, peak = tracemalloc.get_traced_memory()
                top = max(peaks.pop(), peak)
                peaks[-1] = max(peaks[-1], top)
                tracemalloc.reset_peak()
                report.append({"step": name, "depth": len(peaks) - 1,
                               "start_mib": round(start / MIB), "end_mib": round(end / MIB),
                               "peak_mib": round(top / MIB),
                               "transient_mib": round((top - end) / MIB),
                               "s": round(time.perf_counter() - t0, 1)})
        return traced

    for name, owner, attr in STEPS:
        raw = vars(owner)[attr]  # a classmethod stays a classmethod when put back
        saved.append((owner, attr, raw))
        setattr(owner, attr, wrap(name, getattr(owner, attr)))
    try:
        yield
    finally:
        for owner, attr, raw in reversed(saved):
            setattr(owner, attr, raw)


def run(n: int, keep: Path | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = (keep if keep is not None else Path(tmp)) / str(n)
        if not (root / "turns").is_dir():
            generate(root, n)
        engine = SearchEngine(SearchParams(), encoder=SyntheticEncoder(), cache=None)
        with Vault.init(root, auto_sync=False, engine=engine) as v:
            v.sync()
            corpus = v.corpus()
            rss_before = status_kb("VmRSS")
            steps: list[dict[str, Any]] = []
            tracemalloc.start(1)
            try:
                t0 = time.perf_counter()
                with traced_steps(steps):
                    prepared = engine.prepare(corpus)
                seconds = time.perf_counter() - t0
                traced_end = tracemalloc.get_traced_memory()[0]
            finally:
                tracemalloc.stop()
            return {
                "notes": n, "prepare_s_traced": round(seconds, 1),
                "traced_end_mib": round(traced_end / MIB), "steps": steps,
                "rss_before_prepare_mb": round(rss_before / 1024),
                "rss_after_prepare_mb": round(status_kb("VmRSS") / 1024),
                "peak_rss_mb": round(status_kb("VmHWM") / 1024),
                "derived_array_mb": {k: round(b / MIB, 1)
                                     for k, b in prepared["array_bytes"].items()},
            }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--keep", type=Path, help="folder to create/reuse vaults under")
    args = parser.parse_args()
    print(json.dumps(run(args.notes, args.keep), indent=1), flush=True)


if __name__ == "__main__":
    main()
