"""`rmh bench-ask knowledge|locomo`: the ask loop against search at a 10-note budget.

    rmh bench-ask knowledge [--seed 15] [--dense] [--json]
    rmh bench-ask locomo --data FILE [--cache FILE] [--json]

knowledge: the generated vault of linked entity notes (bench/knowledge.py); the lexical
engine unless --dense (then MiniLM, embeddings in --cache). locomo: the LoCoMo turn vaults
(bench/datasets.py) with the dense engine. Methods, all from one scoring pass per question
(bench/ask_runner.py): bm25, dense, rrf, full (= search(question, k=10)), the link-stage
variants full-context-named and full-raw-lend (the old uncapped lending), and `ask` with its
ablations (ask-links, ask-bridge, ask-uncovered: that part off; ask-1pass: one pass only).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench import (
    Asker,
    QueryMemoEncoder,
    SqliteEmbeddingCache,
    default_cache_path,
    load_locomo,
    render_ask,
    run_ask,
    summarize_ask,
)
from bench import generate_knowledge as generate
from vault import Corpus, MiniLmEncoder, SearchEngine, SearchParams

from ..ask import LoopParams, ask
from ..corpus_library import CorpusLibrary

ABLATIONS: dict[str, LoopParams] = {
    "ask": LoopParams(),
    "ask-links": LoopParams(links=False),
    "ask-bridge": LoopParams(bridges=False),
    "ask-uncovered": LoopParams(uncovered=False),
    "ask-1pass": LoopParams(max_passes=1),
    "ask-keep0": LoopParams(keep_first=0),
}
PAIRS = (("ask", "full", "recall@10"), ("ask", "full", "recall_all@10"),
         ("full", "rrf", "recall_all@2"), ("full", "rrf", "recall@10"),
         ("full", "full-raw-lend", "recall_all@2"))


def asker(engine: SearchEngine, params: LoopParams) -> Asker:
    """The ask loop (no broker: retrieval only) as ranked corpus positions."""
    libraries: dict[int, CorpusLibrary] = {}

    def go(corpus: Corpus, question: str, budget: int) -> list[int]:
        lib = libraries.get(corpus.generation)
        if lib is None or lib.corpus is not corpus:
            libraries.clear()
            lib = libraries[corpus.generation] = CorpusLibrary(corpus, engine)
        result = ask(question, lib, budget=budget, params=params)
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
        else:
            if not args.data:
                print("locomo needs --data FILE", file=sys.stderr)
                return 2
            haystacks = list(load_locomo(Path(args.data)))
            title = "LoCoMo (turn level), dense engine"
    print(f"rmh bench-ask {args.benchmark}", file=sys.stderr)
    askers = {name: asker(engine, p) for name, p in ABLATIONS.items()
              if args.ablate or name == "ask"}
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
    p.add_argument("benchmark", choices=("knowledge", "locomo"))
    p.add_argument("--data", metavar="FILE", help="LoCoMo JSON (locomo only)")
    p.add_argument("--seed", type=int, default=15, help="knowledge generator seed")
    p.add_argument("--dense", action="store_true", help="knowledge: MiniLM too (slower)")
    p.add_argument("--ablate", action="store_true", help="also the loop's ablations")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="first N questions")
    p.add_argument("--cache", metavar="FILE", help="embedding cache (default bench/out/)")
    p.add_argument("--threads", type=int, default=1, help="onnxruntime intra-op threads")
    p.add_argument("--json", action="store_true", help="one JSON document on stdout")
    p.set_defaults(func=cmd_bench_ask)
