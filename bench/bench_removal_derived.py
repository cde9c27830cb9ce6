"""CPU of following a removal in the derived retrieval structures (retrieval/derived.py
`update_derived`) against the rebuild it replaces (`build_derived`), in one sitting, at scale.

    python -m bench.bench_removal_derived --notes 100000 --keep DIR [--rounds 3]

Generates (or reuses) the turns vault of bench/gen_scale.py, syncs it, takes the snapshot and
builds its structures once (`d`). Then removes one note by hand, as the storage layer's
advance would: a corpus without its row (the columns copied to lists, its links gone, the
others' positions shifted) whose `CorpusDelta` names it `removed` and the notes that linked
to it `relinked`. Two removals: a turn of median degree and the note of highest degree (a
hub: every linker relinked). Per round, alternating, CPU seconds (`time.process_time`) of
`update_derived(d, removed)` for each, of a second removal after the turn's (the shifts
composed), then of `build_derived(removed_turn)` without stores
(what the rebuild after a removal does: the lexical digest no longer matches). Checks that
the updated and built structures score every query alike (BM25, conjunctive, names) and have
the same adjacency, and times the queries on both (a removal leaves a shift that each read of
a posting list maps: `Shift.forward`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from bench.gen_scale import generate
from vault import SearchEngine, SearchParams, Vault
from vault.retrieval.derived import Derived, build_derived, update_derived
from vault.storage.columns import Edges
from vault.storage.corpus import Corpus, CorpusDelta

QUERIES = ("who talked about the billing migration yesterday", "auth outage monday",
           "Ada Lovelace", "deploy rollback queue", "the cache schema", "Grace Hopper billing",
           "we talked about it again tomorrow", "schema migration postgres", "Alan Turing",
           "latency spike in search")


def removal(c: Corpus, r: int) -> Corpus:
    """`c` without note `r`, through a delta (module docstring)."""
    n = len(c)
    keep = np.ones(n, dtype=np.bool_)
    keep[r] = False
    to = np.cumsum(keep) - 1
    e = c.edges
    assert isinstance(e, Edges)
    live = keep[e.src] & keep[e.dst]
    linkers = sorted({int(a) for a in e.src[e.dst == r] if a != r})
    relinked = tuple(int(to[a]) for a in linkers)

    def rows(col: Any) -> list[Any]:
        return [col[p] for p in range(n) if p != r]

    return replace(c, generation=c.generation + 1, ids=rows(c.ids), paths=rows(c.paths),
                   titles=rows(c.titles), aliases=rows(c.aliases), bodies=rows(c.bodies),
                   frontmatter=rows(c.frontmatter), content_hashes=rows(c.content_hashes),
                   edges=Edges(to[e.src[live]], to[e.dst[live]]),
                   archived=tuple(rows(c.archived)), stamp=None, base=None,
                   delta=CorpusDelta(c.generation, n, (), relinked, c.delta, (r,)))


def cpu(fn: Any, *args: Any) -> tuple[Any, float]:
    t = time.process_time()
    out = fn(*args)
    return out, time.process_time() - t


def same(a: Derived, b: Derived) -> bool:
    ok = all(np.array_equal(a.bm25.score(q), b.bm25.score(q))
             and np.array_equal(a.conj.score(q), b.conj.score(q))
             and a.names.named_in(q) == b.names.named_in(q) for q in QUERIES)
    return ok and all(np.array_equal(getattr(a.links, k), getattr(b.links, k))
                      for k in ("indptr", "indices", "data"))


def query_cpu(d: Derived, reps: int = 5) -> float:
    """CPU seconds of scoring every query with BM25 and the conjunctive index, per query."""
    t = time.process_time()
    for _ in range(reps):
        for q in QUERIES:
            d.bm25.score(q)
            d.conj.score(q)
    return (time.process_time() - t) / (reps * len(QUERIES))


def run(n: int, keep: Path, rounds: int) -> dict[str, Any]:
    root = keep / str(n)
    if not (root / "turns").is_dir():
        generate(root, n)
    with Vault.init(root, auto_sync=False, engine=SearchEngine(SearchParams())) as v:
        v.sync()
        corpus = v.corpus()
    d, build_s = cpu(build_derived, corpus)
    e = corpus.edges
    assert isinstance(e, Edges)
    degree = np.bincount(np.concatenate([e.src, e.dst]), minlength=len(corpus))
    turns = [p for p in range(len(corpus)) if corpus.paths[p].startswith("turns/")]
    turn = sorted(turns, key=lambda p: (int(degree[p]), p))[len(turns) // 2]
    hub = int(np.argmax(degree))
    cases = {"turn": removal(corpus, turn), "hub": removal(corpus, hub)}
    second = removal(cases["turn"], len(corpus) // 3)  # a later removal, composed
    times: dict[str, list[float]] = {"update_turn": [], "update_hub": [], "update_second": [],
                                     "build": []}
    fresh: Derived | None = None
    updated: dict[str, Derived] = {}
    for _ in range(rounds):
        for name, c in cases.items():
            got, s = cpu(update_derived, d, c)
            assert got is not None
            updated[name] = got
            times[f"update_{name}"].append(s)
        got, s = cpu(update_derived, updated["turn"], second)
        assert got is not None
        times["update_second"].append(s)
        fresh, s = cpu(build_derived, cases["turn"])
        times["build"].append(s)
    assert fresh is not None
    per_query: dict[str, list[float]] = {"updated": [], "built": []}
    for _ in range(rounds):  # alternating
        per_query["updated"].append(1000 * query_cpu(updated["turn"]))
        per_query["built"].append(1000 * query_cpu(fresh))
    query_ms = {k: round(statistics.median(v), 3) for k, v in per_query.items()}
    return {
        "notes": len(corpus), "links": len(e), "first_build_cpu_s": round(build_s, 2),
        "removed": {"turn": {"position": turn, "degree": int(degree[turn])},
                    "hub": {"position": hub, "degree": int(degree[hub]),
                            "relinked": len(cases["hub"].delta.relinked)
                            if cases["hub"].delta else 0}},
        "cpu_s": {k: [round(x, 4) for x in v] for k, v in times.items()},
        "median_cpu_s": {k: round(statistics.median(v), 4) for k, v in times.items()},
        "equal_to_build": same(updated["turn"], fresh),
        "query_cpu_ms": query_ms,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--keep", type=Path, required=True, help="folder for the vault")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(json.dumps(run(args.notes, args.keep, args.rounds), indent=1))


if __name__ == "__main__":
    main()
