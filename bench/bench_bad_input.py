"""Bad input stays cheap: one 1 MB paragraph of 100,000 wiki-links in an ordinary vault.

    python -m bench.bench_bad_input [--links 100000] [--notes 200] [--uncapped]

Per configuration, in a fresh temporary vault (bench.gen_vault) with a fresh in-memory
embedding cache and the MiniLM encoder: the ordinary vault is indexed and embedded, search
latency is measured, then the huge note is written through `Vault.write` (parse + index), the
next search is timed (it chunks and embeds the new note before answering: what an agent's
write costs the server), and search latency is measured again with the note indexed. A query
naming a link of the note's last kilobyte checks that the note stays findable by its lexical
signals although only its first units are embedded.

`--uncapped` adds `max_note_units = 0` (every window of the note embedded: the dense cost
before the cap, with today's linear chunker; the old chunker re-tokenised its candidate per
word on top of that). Prints a markdown table for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.gen_vault import TOPICS, generate
from bench.report import print_table
from vault import MemoryEmbeddingCache, MiniLmEncoder, SearchEngine, SearchParams, Vault


def huge_note(links: int) -> str:
    """One paragraph: `links` distinct wiki-links separated by spaces."""
    return " ".join(f"[[T{i:05d}]]" for i in range(links)) + "\n"


def _latency(v: Vault, queries: list[str]) -> tuple[float, float]:
    lat = []
    for q in queries:
        t0 = time.perf_counter()
        v.search(q, 10)
        lat.append(time.perf_counter() - t0)
    arr = np.asarray(lat) * 1000
    return float(np.percentile(arr, 50)), float(np.percentile(arr, 95))


def run(links: int, notes: int, queries: int, cap: int, enc: MiniLmEncoder) -> dict[str, Any]:
    rng = np.random.default_rng(11)
    qs = [" ".join(rng.choice(TOPICS, size=3)) for _ in range(queries)]
    text = huge_note(links)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        generate(root, notes)
        params = SearchParams(max_note_units=cap)
        with Vault.init(root, auto_sync=False, engine=SearchEngine(
                params, encoder=enc, cache=MemoryEmbeddingCache())) as v:
            v.sync()
            base = v.engine.prepare(v.corpus())
            before = _latency(v, qs)
            t0 = time.perf_counter()
            v.write("Huge.md", text)
            write_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            v.search(qs[0], 10)  # chunks and embeds the new note first
            first_s = time.perf_counter() - t0
            after = v.engine.prepare(v.corpus())
            during = _latency(v, qs)
            tail = f"T{links - 7:05d}"
            hits = v.search(tail, 10).hits
            rank = next((r for r, h in enumerate(hits, 1) if h.note == "Huge.md"), 0)
    return {
        "max_note_units": cap,
        "note_bytes": len(text.encode()),
        "write_index_s": write_s,
        "next_search_s": first_s,
        "huge_chunks": after["chunks"] - base["chunks"],
        "capped_notes": after["capped_notes"],
        "search_p50_ms_before": before[0],
        "search_p50_ms_with": during[0],
        "search_p95_ms_with": during[1],
        "tail_link_rank": rank,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--links", type=int, default=100_000)
    parser.add_argument("--notes", type=int, default=200)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--uncapped", action="store_true")
    args = parser.parse_args()
    enc = MiniLmEncoder(threads=1)
    caps = [SearchParams().max_note_units] + ([0] if args.uncapped else [])
    rows = [run(args.links, args.notes, args.queries, cap, enc) for cap in caps]
    print_table(rows)


if __name__ == "__main__":
    main()
