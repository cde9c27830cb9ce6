"""`rmh bench locomo|longmemeval --data FILE` / `rmh bench beir --data DIR [--split S]`:
retrieval benchmarks through rmh's SearchEngine.

Each conversation (LoCoMo) or question haystack (LongMemEval) becomes an in-memory vault
Corpus (bench/datasets.py) and every question is one query to the same `SearchEngine` the
Vault facade uses; a BEIR collection (bench/beir.py) is one vault of its documents. Chunk
and query embeddings persist in bench/out/embeddings.sqlite (or --cache FILE), so a second
run embeds nothing. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bench import (
    LOCOMO_CATEGORIES,
    BeirError,
    DatasetError,
    QueryMemoEncoder,
    SqliteEmbeddingCache,
    default_cache_path,
    load_beir,
    load_locomo,
    load_longmemeval,
    locomo_excluded,
    params_json,
    render,
    render_beir,
    run,
    run_beir,
    summarize,
    summarize_beir,
)
from harness import fail, positive_int
from vault import MiniLmEncoder, OnnxCrossEncoder, SearchEngine, SearchParams

SETUP = ("in-memory Corpus per conversation/haystack, scored by the SearchEngine the Vault uses; "
         "baselines from the same pass")


def _weights(text: str | None) -> dict[str, float]:
    if not text:
        return {}
    out: dict[str, float] = {}
    for part in text.split(","):
        name, _, val = part.partition("=")
        try:
            out[name.strip()] = float(val)
        except ValueError:
            fail(f"bad --weights entry {part!r} (want name=number)")
    return out


def _engine(args: argparse.Namespace) -> tuple[SearchEngine, SqliteEmbeddingCache]:
    cache = SqliteEmbeddingCache(Path(args.cache) if args.cache else default_cache_path())
    encoder = QueryMemoEncoder(MiniLmEncoder(threads=args.threads), cache)
    # no time bound here (harness/run_bound.py bounds `rmh search`): a benchmark's numbers
    # must not depend on the machine's load, which a run stopped at a deadline would make
    reranker = OnnxCrossEncoder.load(args.rerank) if args.rerank else None
    params = SearchParams(weights=_weights(args.weights), normalize=args.normalize,
                          redundancy_head=args.redundancy_head, calibrate=args.calibrate,
                          cloze=args.cloze, second_pass=args.second_pass == "on")
    return SearchEngine(params, encoder=encoder, reranker=reranker, cache=cache), cache


def cmd_beir(args: argparse.Namespace) -> int:
    data = Path(args.data)
    if not data.is_dir():
        fail(f"no such BEIR folder: {data}")
    try:
        beir = load_beir(data, args.split)
    except BeirError as e:
        fail(str(e))
    engine, cache = _engine(args)
    print(f"rmh bench beir: {data} ({args.split}, {len(beir.corpus)} documents, "
          f"{len(beir.queries)} queries)", file=sys.stderr)
    cached = Path(args.cache) if args.cache else default_cache_path()
    # the first query builds the index: minutes of embedding, silent but for this line
    print(f"  the first query indexes all {len(beir.corpus)} documents (--limit bounds the "
          f"queries only; embeddings are cached in {cached} for the next run)", file=sys.stderr)
    rows, timing = run_beir(beir, engine, limit=args.limit)
    cache.close()
    report: dict[str, Any] = {
        "title": f"BEIR {data.name} ({args.split})",
        "benchmark": "beir",
        "data": str(data),
        "split": args.split,
        "setup": "the collection as one in-memory vault (a note per document), scored by the "
                 "SearchEngine the Vault uses; baselines from the same pass",
        "documents": len(beir.corpus),
        "questions": len(rows["full"]),
        "dropped_judgements": beir.dropped_judgements,
        "unreachable_judgements": beir.unreachable_judgements,
        "no_relevant": beir.no_relevant,
        "params": params_json(engine.params),
        "rerank": "skipped: no model" if engine.reranker is None else "ran",
        "timing": timing,
        **summarize_beir(rows),
    }
    print(json.dumps(report, sort_keys=True) if args.json else render_beir(report))
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    if args.benchmark == "beir":
        return cmd_beir(args)
    data = Path(args.data)
    if not data.is_file():
        fail(f"no such data file: {data}")
    engine, cache = _engine(args)
    params, reranker, encoder = engine.params, engine.reranker, engine.encoder
    assert encoder is not None  # _engine always sets one
    excluded: dict[str, int] = {}
    if args.benchmark == "locomo":
        haystacks = load_locomo(data)
        try:
            excluded = locomo_excluded(data)
        except DatasetError as e:
            fail(str(e))
        headline, names, title = "recall@10", LOCOMO_CATEGORIES, "LoCoMo (turn level)"
    else:
        haystacks = load_longmemeval(data, args.granularity, excluded)
        headline, names = "recall_all@5", None
        title = f"LongMemEval-S ({args.granularity} level)"
    print(f"rmh bench {args.benchmark}: {data}", file=sys.stderr)
    try:  # the loaders check each item as it is read (bench/datasets.py)
        if args.ray is not None:  # the haystacks as Ray tasks (bench/ray_bench.py)
            from .ray_bench import BenchSpec, run_on_ray

            spec = BenchSpec(params, threads=args.threads, rerank=args.rerank,
                             ablate=args.ablate)
            rows, timing = run_on_ray(list(haystacks), spec, encoder, cache, args.ray,
                                      args.ray_workers, limit=args.limit)
        else:
            rows, timing = run(haystacks, engine, limit=args.limit, ablate=args.ablate)
    except DatasetError as e:
        print(file=sys.stderr)  # ends the progress line
        fail(str(e))
    finally:
        cache.close()
    if not rows.categories:
        fail(f"{data}: no question to ask (excluded: {json.dumps(excluded, sort_keys=True)})")
    report: dict[str, Any] = {
        "title": title,
        "benchmark": args.benchmark,
        "data": str(data),
        "granularity": args.granularity if args.benchmark == "longmemeval" else "turn",
        "setup": SETUP,
        "questions": len(rows.categories),
        "excluded": excluded,
        "params": params_json(params),
        "rerank": "skipped: no model" if reranker is None else "ran",
        "timing": timing,
        **summarize(rows, headline, names),
    }
    if args.json:
        print(json.dumps(report, sort_keys=True))
    else:
        print(render(report, headline))
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("bench", help="retrieval benchmarks (LoCoMo, LongMemEval-S, BEIR)")
    p.add_argument("benchmark", choices=("locomo", "longmemeval", "beir"))
    p.add_argument("--data", required=True, metavar="FILE",
                   help="the benchmark's JSON file (beir: the collection's folder)")
    p.add_argument("--split", choices=("test", "train", "dev"), default="test",
                   help="BEIR qrels split (default: test)")
    p.add_argument("--granularity", choices=("session", "turn"), default="session",
                   help="LongMemEval document unit (default: session)")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="first N questions")
    p.add_argument("--ablate", action="store_true", help="also run without each signal")
    p.add_argument("--json", action="store_true", help="one JSON document on stdout")
    p.add_argument("--weights", metavar="S=W,...", help="override fusion weights")
    p.add_argument("--normalize", choices=("range", "max", "none"),
                   default=SearchParams().normalize,
                   help="score normalisation in fusion (vault fusion.py; default: range)")
    p.add_argument("--redundancy-head", type=int, default=0, metavar="M",
                   help="gate the conjunctive weight by its head's overlap with BM25's over "
                   "M notes (vault fusion.gate; default 0: off)")
    p.add_argument("--calibrate", action="store_true",
                   help="fusion weights from each haystack's own pseudo-queries (vault "
                   "retrieval/calibration.py; default: off)")
    p.add_argument("--cloze", action="store_true",
                   help="the conjunctive weight from each haystack's own sentence-cloze "
                   "queries (vault retrieval/cloze.py; default: off)")
    p.add_argument("--second-pass", choices=("on", "off"),
                   default="on" if SearchParams().second_pass else "off",
                   help="the passage pass over the top 30 (vault "
                   "retrieval/second_pass.py; default: the engine's)")
    p.add_argument("--rerank", metavar="DIR",
                   help="cross-encoder folder (model.onnx, tokenizer.json)")
    p.add_argument("--cache", metavar="FILE", help="embedding cache (default bench/out/)")
    p.add_argument("--threads", type=int, default=1, help="onnxruntime intra-op threads")
    p.add_argument("--ray", default=None, metavar="ADDRESS",
                   help="run the haystacks as Ray tasks: 'local', 'auto' or ray://HOST:10001 "
                   "(needs `pip install 'rmh[ray]'`); the report is the local one but timing")
    p.add_argument("--ray-workers", type=positive_int, default=None, metavar="N",
                   help="haystacks at a time on Ray (default: the cluster's CPUs)")
    p.set_defaults(func=cmd_bench)
