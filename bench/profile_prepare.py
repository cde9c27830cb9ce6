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

    python -m bench.profile_prepare --cold-store VAULT [--fresh] [--runs 3]

    python -m bench.profile_prepare --edit K VAULT      (or --remove K VAULT)

edits K notes outside rmh (turn notes spread over the `turns/` folders, each gets one line
appended; with --remove each is deleted; run between `--cold-once` processes: the next
process is the first after a change).

runs the persisted note columns (storage/note_store.py) against the rows in new processes and
asserts the same hits and scores (`cold_store`); each process reports CPU seconds per phase.

    python -m bench.profile_prepare --notes 100000 --keep DIR --cold [--runs 3]
        [--approx-above CHUNKS]

times a cold start instead (issue 33 item 5), untraced: each run is a new process that opens
the vault as `rmh` does (the engine persists its structures under `.rmh/`, the embeddings in
the vault's own cache), syncs, builds the snapshot, prepares, then searches `--runs` + 1 times;
the first process builds and saves what later ones load, two more start cold, and a fourth
starts with the IVF store removed (what a cold start cost before it was persisted; it rebuilds
and saves again). Per process: the seconds of each
phase, the first search's seconds (cold: prepare + search) against the median of the later
ones (warm), and whether every process returned the same hits with the same scores.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
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
    ("conj.codes", conjunctive, "coded"),
    ("conj.distinct", conjunctive, "distinct"),
    ("conj.postings", postings.Postings, "from_row_counts"),
    ("names", names.NameIndex, "build"),
    ("walk", graph.Walk, "build"),
    ("dense", dense.DenseIndex, "build"),
    ("dense.chunks", dense, "note_chunks_of"),
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


COLD_QUERY = "who talked about the billing migration yesterday"


def cold_once(root: Path, runs: int, approx_above: int, query: str = COLD_QUERY,
              stores: bool = True) -> dict[str, Any]:
    """One process's cold start on the vault at `root` (module docstring). Without `stores`
    the engine neither loads nor saves a derived structure: every one is built from the
    corpus in memory (the fresh build a caught-up process's hits are compared with)."""
    clock: dict[str, float] = {}
    cpu: dict[str, float] = {}
    t0 = time.perf_counter()
    enc = SyntheticEncoder()
    params = SearchParams(dense=dense.DenseParams(approx_above=approx_above))

    def engine(own: Any) -> SearchEngine:
        return SearchEngine(params, encoder=enc, cache=own,
                            scratch=str(root / ".rmh") if stores else None)

    with Vault.open(root, auto_sync=False, engine=engine) as v:
        clock["open_s"] = time.perf_counter() - t0
        cpu["open_s"] = c = time.process_time()
        t = time.perf_counter()
        v.sync()
        clock["sync_s"] = time.perf_counter() - t
        cpu["sync_s"], c = time.process_time() - c, time.process_time()
        t = time.perf_counter()
        corpus = v.corpus()
        clock["snapshot_s"] = time.perf_counter() - t
        cpu["snapshot_s"], c = time.process_time() - c, time.process_time()
        t = time.perf_counter()
        v.engine.prepare(corpus)
        clock["prepare_s"] = time.perf_counter() - t
        cpu["prepare_s"], c = time.process_time() - c, time.process_time()
        searches, hits = [], []
        for _ in range(runs + 1):
            t = time.perf_counter()
            result = v.search(query, 10, learn=False)
            searches.append(time.perf_counter() - t)
            hits = [(h.note, h.score) for h in result.hits]
            if "first_search_s" not in cpu:
                cpu["first_search_s"] = time.process_time() - c
    return {**{k: round(x, 3) for k, x in clock.items()},
            "first_search_s": round(searches[0], 4),
            "warm_search_s": round(sorted(searches[1:])[len(searches[1:]) // 2], 4),
            "total_to_first_hit_s": round(time.perf_counter() - t0 - sum(searches[1:]), 3),
            "cpu_s": round(time.process_time(), 3),
            "cpu_phases_s": {k: round(x, 3) for k, x in cpu.items()}, "hits": hits}


def cold(n: int, keep: Path, runs: int, approx_above: int) -> dict[str, Any]:
    """Four new processes on the same vault: the first builds, the next two start cold from
    what it saved, the last starts with the IVF store removed (as before it was persisted)."""
    root = keep / str(n)
    if not (root / "turns").is_dir():
        generate(root, n)
        Vault.init(root, auto_sync=False).close()
    procs = []
    for i in range(4):
        if i == 3:
            for path in (root / ".rmh").glob("dense-ivf*"):
                path.unlink()
        out = subprocess.run([sys.executable, "-m", "bench.profile_prepare", "--cold-once",
                              str(root), "--runs", str(runs), "--approx-above",
                              str(approx_above)], capture_output=True, check=True,
                             text=True, cwd=Path(__file__).resolve().parents[1])
        procs.append(json.loads(out.stdout))
    same = all(p["hits"] == procs[0]["hits"] for p in procs) and bool(procs[0]["hits"])
    return {"notes": n, "approx_above": approx_above,
            "processes": [{k: x for k, x in p.items() if k != "hits"} for p in procs],
            "hits_identical": same}


def cold_store(root: Path, runs: int, approx_above: int, fresh: bool) -> dict[str, Any]:
    """The persisted note columns (issue 33 item 5): new processes on the vault at `root`,
    the first with every structure persisted beside the index removed when `fresh` (a fresh
    build from the rows: lexical, dense and IVF, edges, note columns), then one with only the
    note columns and the stamped values removed (the rows read and saved), then two that
    load them. Every process must return the same hits with the same scores (asserted)."""
    state = root / ".rmh"
    procs = []
    for i in range(4 if fresh else 3):
        if i == 0 and fresh:
            for path in state.iterdir():
                if path.is_file() and not path.name.startswith(("index.sqlite", "write.lock")):
                    path.unlink()
        elif i == (1 if fresh else 0):
            for path in [state / "note-columns.bin", *state.glob("stamped-*.npz")]:
                path.unlink(missing_ok=True)
        out = subprocess.run([sys.executable, "-m", "bench.profile_prepare", "--cold-once",
                              str(root), "--runs", str(runs), "--approx-above",
                              str(approx_above)], capture_output=True, check=True,
                             text=True, cwd=Path(__file__).resolve().parents[1])
        procs.append(json.loads(out.stdout))
    assert bool(procs[0]["hits"]) and all(p["hits"] == procs[0]["hits"] for p in procs), \
        "hits differ between a fresh build and the persisted note columns"
    return {"root": str(root), "fresh_first": fresh,
            "processes": [{k: x for k, x in p.items() if k != "hits"} for p in procs],
            "hits_identical": True, "hits": procs[0]["hits"]}


def edit_outside(root: Path, k: int, remove: bool = False) -> list[str]:
    """Append one line to `k` turn notes spread evenly over the vault's `turns/` folders (a
    change made outside rmh), or with `remove` delete them; returns their paths relative to
    `root`."""
    folders = sorted(p for p in (root / "turns").iterdir() if p.is_dir())
    out: list[str] = []
    for i in range(k):
        folder = folders[i * len(folders) // max(1, k)]
        names = sorted(n for n in folder.iterdir() if n.suffix == ".md")
        note = names[(i * 7919) % len(names)]
        if remove:
            note.unlink()
        else:
            with open(note, "a", encoding="utf-8") as fh:
                fh.write(f"\nedited outside rmh ({i})\n")
        out.append(str(note.relative_to(root)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--keep", type=Path, help="folder to create/reuse vaults under")
    parser.add_argument("--cold", action="store_true", help="time cold starts (needs --keep)")
    parser.add_argument("--cold-once", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--query", default=COLD_QUERY, help="with --cold-once: the query")
    parser.add_argument("--no-stores", action="store_true",
                        help="with --cold-once: build every derived structure in memory")
    parser.add_argument("--cold-store", type=Path, metavar="VAULT",
                        help="the note columns: rows vs store, hits asserted identical")
    parser.add_argument("--fresh", action="store_true",
                        help="with --cold-store: first a process with nothing persisted")
    parser.add_argument("--edit", type=int, metavar="K",
                        help="with a VAULT argument: edit K notes outside rmh, then exit")
    parser.add_argument("--remove", type=int, metavar="K",
                        help="with a VAULT argument: delete K notes outside rmh, then exit")
    parser.add_argument("vault", nargs="?", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--approx-above", type=int, default=dense.DenseParams().approx_above,
                        help="chunks above which dense is an IVF (--cold)")
    args = parser.parse_args()
    if args.edit is not None or args.remove is not None:
        if args.vault is None:
            parser.error("--edit K and --remove K need a VAULT")
        k = args.edit if args.edit is not None else args.remove
        print(json.dumps(edit_outside(args.vault, k, args.edit is None)), flush=True)
        return
    if args.cold_once is not None:
        print(json.dumps(cold_once(args.cold_once, args.runs, args.approx_above, args.query,
                                   not args.no_stores)), flush=True)
        return
    if args.cold_store is not None:
        print(json.dumps(cold_store(args.cold_store, args.runs, args.approx_above, args.fresh),
                         indent=1), flush=True)
        return
    if args.cold:
        if args.keep is None:
            parser.error("--cold needs --keep DIR")
        print(json.dumps(cold(args.notes, args.keep, args.runs, args.approx_above), indent=1),
              flush=True)
        return
    print(json.dumps(run(args.notes, args.keep), indent=1), flush=True)


if __name__ == "__main__":
    main()
