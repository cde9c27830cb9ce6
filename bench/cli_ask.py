"""`rmh bench-ask knowledge|locomo`: the ask loop against search at a 10-note budget.

    rmh bench-ask knowledge [--seed 15] [--dense] [--ablate [NAMES]] [--json]
    rmh bench-ask locomo --data FILE [--cache FILE] [--json]
    rmh bench-ask longmemeval --data FILE [--granularity session|turn] [--cache FILE]

knowledge: the generated vault of linked entity notes (bench/knowledge.py); the lexical
engine unless --dense (then MiniLM, embeddings in --cache). locomo: the LoCoMo turn vaults
(bench/datasets.py) with the dense engine. longmemeval: one haystack per LongMemEval-S question
(official retrieval protocol, abstention questions excluded), dense engine, categories = the
question types (multi-session is the multi-hop one). Methods, all from one scoring pass per question
(bench/ask_runner.py): bm25, dense, rrf, full (= search(question, k=10)), the link-stage
variants full-context-named and full-raw-lend (the old uncapped lending), and `ask` with its
ablations (ask-links, ask-bridge, ask-uncovered, ask-feedback: that part off; ask-pool1: pass 1
searched k deep, not POOL * k; ask-nofb-pool1: both, the loop as it was before the feedback
round; ask-1pass: one pass only; ask-keep0 / ask-keep5: 0 / 5 search hits kept first).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

from bench import (
    Asker,
    DatasetError,
    QueryMemoEncoder,
    SqliteEmbeddingCache,
    default_cache_path,
    load_locomo,
    load_longmemeval,
    render_ask,
    run_ask,
    summarize_ask,
)
from bench import generate_knowledge as generate
from harness import LoopParams, ask_loop
from vault import Corpus, MiniLmEncoder, SearchEngine, SearchParams

from .corpus_searchable import CorpusSearchable

ABLATIONS: dict[str, LoopParams] = {
    "ask": LoopParams(),
    "ask-links": LoopParams(links=False),
    "ask-bridge": LoopParams(bridges=False),
    "ask-uncovered": LoopParams(uncovered=False),
    "ask-feedback": LoopParams(feedback=False),
    "ask-pool1": LoopParams(pool=1),
    "ask-nofb-pool1": LoopParams(feedback=False, pool=1),
    "ask-1pass": LoopParams(max_passes=1),
    "ask-keep0": LoopParams(keep_first=0),
    "ask-keep5": LoopParams(keep_first=5),
}
PAIRS = (("ask", "full", "recall@10"), ("ask", "full", "recall_all@10"),
         ("full", "rrf", "recall_all@2"), ("full", "rrf", "recall@10"),
         ("full", "full-raw-lend", "recall_all@2"))


def asker(engine: SearchEngine, params: LoopParams) -> Asker:
    """The ask loop (no broker: retrieval only) as ranked corpus positions."""
    libraries: dict[int, CorpusSearchable] = {}

    def go(corpus: Corpus, question: str, budget: int, now: date | None) -> list[int]:
        lib = libraries.get(corpus.generation)
        if lib is None or lib.corpus is not corpus:
            libraries.clear()
            lib = libraries[corpus.generation] = CorpusSearchable(corpus, engine)
        lib.now = now
        result = ask_loop(question, lib, budget=budget, params=params)
        return [lib.position(n) for n in result.notes]

    return go


def variants(engine: SearchEngine) -> dict[str, SearchEngine]:
    p = engine.params
    return {
        "full-context-named": engine.with_params(
            replace(p, weights={**p.weights, "context": 0.0, "named": 0.0})),
        "full-raw-lend": engine.with_params(replace(p, weights={**p.weights, "protect": 0.0})),
    }


def cmd_bench_ask(args: argparse.Namespace) -> int:
    cache = None
    if args.benchmark == "knowledge" and not args.dense:
        engine = SearchEngine.lexical(SearchParams())
        haystacks = [generate(args.seed)]
        title = f"knowledge notes (seed {args.seed}), lexical engine"
    else:
        cache = SqliteEmbeddingCache(Path(args.cache) if args.cache else default_cache_path())
        encoder = QueryMemoEncoder(MiniLmEncoder(threads=args.threads), cache)
        engine = SearchEngine(SearchParams(), encoder=encoder, cache=cache)
        if args.benchmark == "knowledge":
            haystacks, title = [generate(args.seed)], f"knowledge notes (seed {args.seed}), dense"
        elif not args.data:
            print(f"{args.benchmark} needs --data FILE", file=sys.stderr)
            return 2
        else:
            try:
                if args.benchmark == "locomo":
                    haystacks = list(load_locomo(Path(args.data)))
                    title = "LoCoMo (turn level), dense engine"
                else:
                    haystacks = list(load_longmemeval(Path(args.data), args.granularity, {}))
                    title = f"LongMemEval-S ({args.granularity} level), dense engine"
            except (DatasetError, OSError) as e:
                print(f"rmh: {e}", file=sys.stderr)
                return 1
    print(f"rmh bench-ask {args.benchmark}", file=sys.stderr)
    chosen = set(args.ablate.split(",")) if args.ablate else set()
    unknown = chosen - set(ABLATIONS) - {"all"}
    if unknown:
        print(f"unknown ablation(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    askers = {name: asker(engine, p) for name, p in ABLATIONS.items()
              if name == "ask" or "all" in chosen or name in chosen}
    result = run_ask(haystacks, engine, searches=variants(engine), askers=askers, limit=args.limit)
    if cache is not None:
        cache.close()
    report: dict[str, Any] = {"title": title, **summarize_ask(result, PAIRS)}
    if args.json:
        print(json.dumps(report, sort_keys=True))
    else:
        print(render_ask(report))
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("bench-ask", help="ask at a 10-note budget against search (benchmarks)")
    p.add_argument("benchmark", choices=("knowledge", "locomo", "longmemeval"))
    p.add_argument("--data", metavar="FILE", help="LoCoMo or LongMemEval JSON")
    p.add_argument("--granularity", choices=("session", "turn"), default="session",
                   help="longmemeval: one note per session (default) or per user turn")
    p.add_argument("--seed", type=int, default=15, help="knowledge generator seed")
    p.add_argument("--dense", action="store_true", help="knowledge: MiniLM too (slower)")
    p.add_argument("--ablate", nargs="?", const="all", default="", metavar="NAMES",
                   help="also the loop's ablations (all, or a comma list: "
                   + ", ".join(n for n in ABLATIONS if n != "ask") + ")")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="first N questions")
    p.add_argument("--cache", metavar="FILE", help="embedding cache (default bench/out/)")
    p.add_argument("--threads", type=int, default=1, help="onnxruntime intra-op threads")
    p.add_argument("--json", action="store_true", help="one JSON document on stdout")
    p.set_defaults(func=cmd_bench_ask)
