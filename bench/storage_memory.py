"""What the storage room holds in memory: RSS after each step and the deep size of each part.

    python -m bench.storage_memory VAULT [--prepare]

Opens an indexed vault (a `cp -a` copy of a kept bench/gen_scale.py vault: opening writes the
SQLite WAL files), syncs it, builds the corpus and its link graph (and with `--prepare` the
retrieval structures), printing the process's RSS and VmHWM after each step, then the deep
size of the stat cache, of each corpus column and of the graph (containers and what they
hold, each object once; numpy arrays by their buffer). Deep sizes are exact; RSS includes
allocator slack.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.report import status_kb
from bench.synthetic_encoder import SyntheticEncoder
from vault import SearchEngine, SearchParams, Vault

MIB = 2**20
COLUMNS = ("ids", "paths", "titles", "aliases", "bodies", "frontmatter", "content_hashes",
           "edges", "archived")


def deep(obj: object) -> int:
    """Bytes of `obj` and everything it holds (dicts, sequences, slots, instance dicts)."""
    seen: set[int] = set()
    stack: list[Any] = [obj]
    total = 0
    while stack:
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        if isinstance(o, np.ndarray):
            total += o.nbytes if o.base is None else sys.getsizeof(o)
            continue
        total += sys.getsizeof(o)
        if isinstance(o, dict):
            stack.extend(o.keys())
            stack.extend(o.values())
        elif isinstance(o, (list, tuple, set, frozenset)):
            stack.extend(o)
        elif not isinstance(o, (str, bytes, int, float, range, type)) and o is not None:
            if hasattr(o, "__dict__"):
                stack.append(vars(o))
            for cls in type(o).__mro__:
                stack.extend(getattr(o, s) for s in getattr(cls, "__slots__", ())
                             if hasattr(o, s))
    return total


def _rss(step: str, t0: float) -> None:
    print(f"{step}: {time.perf_counter() - t0:.1f} s, RSS {status_kb('VmRSS') / 1024:.0f} MB,"
          f" VmHWM {status_kb('VmHWM') / 1024:.0f} MB", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("vault", type=Path)
    parser.add_argument("--prepare", action="store_true")
    args = parser.parse_args()
    engine = SearchEngine(SearchParams(), encoder=SyntheticEncoder(), cache=None)
    with Vault.init(args.vault, auto_sync=False, engine=engine) as v:
        t0 = time.perf_counter()
        v.sync()
        _rss("sync", t0)
        print(f"stat cache {deep(v.index._stats) / MIB:.1f} MiB", flush=True)
        t0 = time.perf_counter()
        c = v.corpus()
        _rss("corpus", t0)
        for name in COLUMNS:
            col = getattr(c, name)
            print(f"  {name} {type(col).__name__} {deep(col) / MIB:.1f} MiB", flush=True)
        t0 = time.perf_counter()
        graph = c.graph
        _rss("graph", t0)
        print(f"  graph {type(graph).__name__} {deep(graph) / MIB:.1f} MiB", flush=True)
        if args.prepare:
            t0 = time.perf_counter()
            v.engine.prepare(c)
            _rss("prepare", t0)


if __name__ == "__main__":
    main()
