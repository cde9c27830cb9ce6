"""A query's IVF scan at 10^6-note size: `IvfStore.scan` against gathering every probed row.

    python -m bench.bench_ivf_scan [--rows 2960000] [--lists 1720] [--queries 20] [--scratch DIR]

Random int8 codes (the row and list counts of bench_scale's 10^6 vault: 2.96 M chunks,
sqrt(rows) lists) with Pareto-distributed list sizes (the synthetic vectors' lists are
uneven: at 10^5 the largest is 7x the mean), 32 probed lists a query. Prints milliseconds per
query for the scan (SCAN_BLOCK rows at a time), the gather of all probed rows into one float32
copy (the scan before session 5), and one float32 copy per whole list; and whether the scores
agree to 1e-5 of the largest score (BLAS rounding differs with the block shape, so not bit for bit).
With `--scratch DIR` (a folder on disk) also the scan of the same codes kept in a RowFile there
(`scan_on_disk`: one pread per probed list; its scores must equal the in-memory scan's exactly),
read warm, from the page cache.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from vault.retrieval.signals.ivf import IvfStore, MemoryCodes  # not public: white-box
from vault.storage.row_file import RowFile


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=2_960_000)
    parser.add_argument("--lists", type=int, default=1720)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--scratch", help="a folder on disk: also scan the codes from a file")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    rows, k, dim = args.rows, args.lists, 384
    sizes = rng.pareto(1.5, k) + 1
    sizes = (sizes / sizes.sum() * rows).astype(np.int64)
    sizes[-1] += rows - sizes.sum()
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    codes = rng.integers(-127, 128, (rows, dim), dtype=np.int8)
    store = IvfStore(np.zeros((k, dim), np.float32), np.zeros(dim, np.float32), offsets,
                     MemoryCodes(codes), rng.random(rows).astype(np.float32),
                     np.arange(rows, dtype=np.int32))
    probes = [np.sort(rng.choice(k, 32, replace=False)).astype(np.int32)
              for _ in range(args.queries)]
    qs = [rng.standard_normal(dim).astype(np.float32) for _ in probes]

    def gather(q: np.ndarray, lists: np.ndarray) -> np.ndarray:
        at = np.concatenate([np.arange(offsets[j], offsets[j + 1]) for j in lists.tolist()])
        out: np.ndarray = (codes[at].astype(np.float32) @ q) * store.scale[at]
        return out

    def whole_lists(q: np.ndarray, lists: np.ndarray) -> np.ndarray:
        parts = [(codes[offsets[j]:offsets[j + 1]].astype(np.float32) @ q)
                 * store.scale[offsets[j]:offsets[j + 1]] for j in lists.tolist()]
        return np.concatenate(parts)

    def scan(q: np.ndarray, lists: np.ndarray) -> np.ndarray:
        out: np.ndarray = store.scan(q, lists)[1]
        return out

    ways: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
        "scan": scan, "gather_all": gather, "whole_lists": whole_lists}
    same_on_disk = None
    if args.scratch:
        held = RowFile(args.scratch, rows, dim)
        held.put(0, codes)
        on_disk = IvfStore(store.centroids, store.mean, offsets, held, store.scale, store.note)

        def scan_on_disk(q: np.ndarray, lists: np.ndarray) -> np.ndarray:
            out: np.ndarray = on_disk.scan(q, lists)[1]
            return out

        ways["scan_on_disk"] = scan_on_disk
        same_on_disk = all(scan(q, p).tobytes() == scan_on_disk(q, p).tobytes()
                           for q, p in zip(qs, probes, strict=True))
    for _ in range(2):  # the second round is the one printed (warm)
        ms: dict[str, float] = {}
        for name, fn in ways.items():
            t0 = time.perf_counter()
            for q, lists in zip(qs, probes, strict=True):
                fn(q, lists)
            ms[name] = round((time.perf_counter() - t0) / len(qs) * 1000, 2)
    rows_probed = float(np.mean([sizes[p].sum() for p in probes]))
    pairs = [(scan(q, p), gather(q, p)) for q, p in zip(qs, probes, strict=True)]
    agree = all(float(np.abs(a - b).max()) <= 1e-5 * float(np.abs(b).max()) for a, b in pairs)
    print({"rows": rows, "lists": k, "rows_probed_mean": round(rows_probed),
           "ms_per_query": ms, "scores_agree": agree, "on_disk_identical": same_on_disk})


if __name__ == "__main__":
    main()
