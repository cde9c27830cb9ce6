"""Storage at scale (issue 17): index, no-op sync, edit -> next snapshot, snapshot memory.

    python -m bench.bench_scale_store --notes 100000 [--notes 1000000] [--keep DIR]

Per size: generates the turns vault (bench/gen_scale.py), indexes it through the Vault facade
(auto_sync off, so every sync is the one timed), then times a no-op full sync (p50 of 5, wall
and critical-path CPU: this process's CPU plus the busiest scan worker's), the
first snapshot (every row read, links resolved) and its undirected graph, and edits through
two paths, each followed by what the next search needs (`Vault.corpus()` and the graph):

- API: `Vault.write` of an existing note (indexed at once, snapshot advanced incrementally);
- disk: the file rewritten behind rmh's back, then a full no-op-style `sync()` (no watcher);
- add: `Vault.write` of a new note.

`Vault.search` overhead is timed with the ranking engine excluded: a fixed engine returns the
10 highest ids (said so in the output), so what is left is the facade's per-search work
(snapshot check, archive flags, learned vectors, snippets). Memory: VmRSS before and after the
snapshot, and VmHWM (peak) of the process. With --keep DIR the vault (and its index) is kept
under DIR/N and reused by a later run (then "full index" is the kept index's catch-up sync).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

from bench.gen_scale import generate
from bench.report import children_cpu, print_table, status_kb
from vault import Corpus, Hit, SearchEngine, SearchParams, SearchResult, Vault


class FixedEngine(SearchEngine):
    """Not a ranker: the k highest ids, so `Vault.search` minus this is the facade's cost
    (the engine's other parts are the default engine's, unused: nothing here prepares it)."""

    def __init__(self) -> None:
        super().__init__(SearchParams())

    def search(self, corpus: Corpus, query: str, k: int = 10, **_: Any) -> SearchResult:
        hits = tuple(Hit(corpus.ids[p], corpus.paths[p], corpus.titles[p], 1.0)
                     for p in range(len(corpus) - 1, max(-1, len(corpus) - 1 - k), -1))
        return SearchResult(query, hits, {"engine": "fixed (benchmark)"})


def _noop_sync(v: Vault) -> tuple[float, float]:
    """(wall seconds, critical-path CPU seconds) of one no-op sync: this process's CPU plus
    the busiest worker's, what the wall time would be on idle cores (the 2 cores here are
    shared, so the wall time alone says more about the load than about the scan)."""
    before, c0, t0 = children_cpu(), time.process_time(), time.perf_counter()
    v.sync()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    after = children_cpu()
    return wall, cpu + max((sum(after[p]) - sum(before.get(p, (0.0, 0.0))) for p in after),
                           default=0.0)


def _timed(fn: Any) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _next(v: Vault) -> None:
    """What the next search needs from storage: the corpus and the link graph."""
    v.corpus()
    assert v.live.snapshot().corpus.graph is not None


def _write_next(v: Vault, path: str, text: str) -> None:
    v.write(path, text)
    _next(v)


def _sync_next(v: Vault) -> None:
    v.sync()
    _next(v)


def run(n: int, keep: Path | None, edits: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = (keep if keep is not None else Path(tmp)) / str(n)
        gen_s = float("nan")
        if not (root / "turns").is_dir():
            t0 = time.perf_counter()
            generate(root, n)
            gen_s = time.perf_counter() - t0
        with Vault.init(root, auto_sync=False, engine=FixedEngine()) as v:
            index_s = _timed(v.sync)
            rss0 = status_kb("VmRSS")
            snap_s = _timed(v.corpus)
            rss1 = status_kb("VmRSS")
            graph_s = _timed(lambda: v.live.snapshot().corpus.graph)
            rss2 = status_kb("VmRSS")
            noops = [_noop_sync(v) for _ in range(5)]
            noop = sorted(w for w, _ in noops)
            paths = v.live.snapshot().corpus.paths
            api, disk, add, deltas = [], [], [], 0
            for j in range(edits):
                path = paths[(j * 7919) % len(paths)]
                text = v.store.read_text(path)
                edited = text + f"\napi edit {j}\n"
                api.append(_timed(partial(_write_next, v, path, edited)))
                deltas += v.live.snapshot().corpus.delta is not None
                other = paths[(j * 104729 + 1) % len(paths)]
                (root / other).write_text(v.store.read_text(other) + f"\ndisk edit {j}\n")
                disk.append(_timed(partial(_sync_next, v)))
                deltas += v.live.snapshot().corpus.delta is not None
                new = f"new/n{j:05d}.md"
                body = f"a new turn {j} [[t{j:07d}]] [[{paths[0][:-3]}]]\n"
                add.append(_timed(partial(_write_next, v, new, body)))
                deltas += v.live.snapshot().corpus.delta is not None
            search = sorted(_timed(lambda: v.search("budget review", learn=True))
                            for _ in range(50))
            return {
                "notes": n,
                "generate_s": gen_s,
                "full_index_s": index_s,
                "noop_sync_p50_s": statistics.median(noop),
                "noop_sync_cpu_critical_p50_s": statistics.median(c for _, c in noops),
                "snapshot_s": snap_s,
                "graph_s": graph_s,
                "api_edit_p50_s": statistics.median(api),
                "disk_edit_sync_p50_s": statistics.median(disk),
                "add_p50_s": statistics.median(add),
                "edit_max_s": max(api + disk + add),
                "incremental": f"{deltas}/{3 * edits}",
                "search_overhead_p50_ms": 1000 * statistics.median(search),
                "snapshot_rss_mb": (rss1 - rss0) / 1024,
                "graph_rss_mb": (rss2 - rss1) / 1024,
                "peak_rss_mb": status_kb("VmHWM") / 1024,
            }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--notes", type=int, action="append")
    parser.add_argument("--keep", type=Path, help="keep (and reuse) the vaults under this folder")
    parser.add_argument("--edits", type=int, default=10)
    args = parser.parse_args()
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    print(f"cpus: {os.cpu_count()}; engine: fixed (ranking excluded: storage and facade only)")
    rows = [run(n, args.keep, args.edits) for n in (args.notes or [100_000])]
    print_table(rows)


if __name__ == "__main__":
    main()
