"""Does learning from use help? A replayed usage simulation on LoCoMo (DESIGN.md §5, issue 7).

Per conversation (one in-memory vault of turn notes, bench/datasets.py), questions of
categories 1-4 are split at random (fixed seed) into a training half and a held-out half.
Simulated agents work through the training questions in sessions (`--per-session` questions a
session, one session a simulated day, every training question asked `--repeats` times in
different sessions). For each question the agent searches (k = 10, with the live learned
warmth, Q prior and co-occurrence edges), reads the evidence notes it finds in the hits, and
writes an answer note that cites them with [[links]]; the session then ends and rewards apply.
All of it goes through a real `Ledger` (learned.sqlite on disk, every event committed).

Then, at the simulated time of the last session, held-out questions are searched (nothing
logged) with and without learned state: MRR@10 of the first evidence note, with a paired
bootstrap 95 % interval of the difference (questions resampled in pairs). Ablations switch on
one learned input at a time. The search pipeline is the retrieval helper's `SearchEngine`
without models (bm25, conjunctive, graph: no dense encoder, no reranker; warmth and the Q
prior re-rank what those found), so the numbers are comparable to the lexical rows of
BENCHMARKS.md.

Run:  python -m bench.bench_learning [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from bench.datasets import Haystack, Question, load_locomo
from bench.metrics import paired_bootstrap
from vault import (
    DEFAULT_WEIGHTS,
    LEARNING_VERSION,
    Corpus,
    LearningParams,
    Ledger,
    SearchEngine,
    SearchParams,
    examination_probability,
)

DATA = Path("../shared/data/locomo/locomo10.json")  # relative to the repository root
DAY = 86_400.0
START = 1_700_000_000.0
ANSWER_IDS = 10_000_000  # ids of the simulated answer notes (not in the corpus)


def reciprocal_rank(ranking: Sequence[int], evidence: frozenset[int]) -> float:
    for rank, pos in enumerate(ranking[:10]):
        if pos in evidence:
            return 1.0 / (rank + 1)
    return 0.0


class Clock:
    def __init__(self) -> None:
        self.t = START

    def __call__(self) -> float:
        return self.t


def positions(engine: SearchEngine, corpus: Corpus, q: Question, ledger: Ledger | None,
              use: frozenset[str] = frozenset({"warmth", "prior", "cooc"})) -> list[int]:
    ids = corpus.ids
    kw: dict[str, Any] = {}
    if ledger is not None:
        if "warmth" in use:
            kw["warmth"] = ledger.warmth(ids)
        if "prior" in use:
            kw["prior"] = ledger.prior(ids)
        if "cooc" in use:
            kw["cooccurrence"] = ledger.cooccurrence(ids)
    hits = engine.search(corpus, q.text, 10, **kw).hits
    return [corpus.position(h.id) for h in hits]


def simulate(hay: Haystack, args: argparse.Namespace, params: LearningParams, tmp: Path
             ) -> dict[str, Any]:
    corpus = hay.corpus
    rng = random.Random(f"{args.seed}:{hay.name}")
    qs = list(hay.questions)
    rng.shuffle(qs)
    train, held = qs[: len(qs) // 2], qs[len(qs) // 2:]
    engine = SearchEngine.lexical(SearchParams(weights={"warmth": args.warmth_weight}))
    clock = Clock()
    ledger = Ledger.open(tmp / f"{hay.name}.sqlite", clock=clock, params=params)
    before_train = [reciprocal_rank(positions(engine, corpus, q, None), q.evidence) for q in train]
    before_held = [reciprocal_rank(positions(engine, corpus, q, None), q.evidence) for q in held]
    empty = [positions(engine, corpus, q, ledger) for q in held]
    assert empty == [positions(engine, corpus, q, None) for q in held], "empty state moved ranks"
    schedule = []
    for _ in range(args.repeats):
        order = train[:]
        rng.shuffle(order)
        schedule.extend(order)
    answer = ANSWER_IDS
    for s, start in enumerate(range(0, len(schedule), args.per_session)):
        sid = f"{hay.name}-s{s}"
        ledger.start_session(sid, clock.t)
        for q in schedule[start:start + args.per_session]:
            ranking = positions(engine, corpus, q, ledger)
            shown = [(corpus.ids[p], r, examination_probability(r)) for r, p in enumerate(ranking)]
            ledger.on_search(sid, q.text, shown, corpus.graph)
            found = [corpus.ids[p] for p in ranking if p in q.evidence]
            for note in found:
                ledger.on_read(sid, note, corpus.graph)
            if found:
                answer += 1
                ledger.on_write(sid, answer, True, found, corpus.graph)
            clock.t += 600.0
        ledger.end_session(sid, clock.t)
        clock.t += DAY
    after: dict[str, list[float]] = {}
    for name, use in (("all", {"warmth", "prior", "cooc"}), ("prior", {"prior"}),
                      ("warmth", {"warmth"}), ("cooc", {"cooc"})):
        after[name] = [reciprocal_rank(positions(engine, corpus, q, ledger, frozenset(use)),
                                       q.evidence) for q in held]
    after_train = [reciprocal_rank(positions(engine, corpus, q, ledger), q.evidence)
                   for q in train]
    # the simulated answer notes exist in the agent's vault, not in the benchmark corpus
    health = ledger.health([*corpus.ids, *range(ANSWER_IDS + 1, answer + 1)], clock.t)
    ledger.close()
    return {"name": hay.name, "before_held": before_held, "after_held": after,
            "before_train": before_train, "after_train": after_train, "health": health,
            "searches": len(schedule)}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--per-session", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--first", type=int, default=0, help="skip this many conversations")
    ap.add_argument("--conversations", type=int, default=10)
    ap.add_argument("--prior-lambda", type=float, default=LearningParams().prior_lambda)
    ap.add_argument("--unused-penalty", type=float, default=LearningParams().unused_penalty)
    ap.add_argument("--warmth-weight", type=float, default=DEFAULT_WEIGHTS["warmth"],
                    help="the search warmth boost scale w_warmth (pipeline stage 6)")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    params = LearningParams(prior_lambda=args.prior_lambda, unused_penalty=args.unused_penalty)
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, hay in enumerate(load_locomo(args.data)):
            if i < args.first:
                continue
            if i >= args.first + args.conversations:
                break
            runs.append(simulate(hay, args, params, Path(tmp)))
            print(f"{hay.name}: {runs[-1]['searches']} searches", file=sys.stderr)
    before = [x for r in runs for x in r["before_held"]]
    report: dict[str, Any] = {
        "learning_version": LEARNING_VERSION,
        "params": asdict(params),
        "setup": {"repeats": args.repeats, "per_session": args.per_session, "seed": args.seed,
                  "conversations": [r["name"] for r in runs], "engine": "SearchEngine.lexical()",
                  "warmth_weight": args.warmth_weight,
                  "held_out": len(before),
                  "train": sum(len(r["before_train"]) for r in runs)},
        "held_out_mrr_before": float(np.mean(before)),
    }
    for name in ("all", "prior", "warmth", "cooc"):
        after = [x for r in runs for x in r["after_held"][name]]
        report[f"held_out_mrr_after_{name}"] = float(np.mean(after))
        report[f"held_out_delta_{name}"] = paired_bootstrap(after, before, draws=10_000)
    tb = [x for r in runs for x in r["before_train"]]
    ta = [x for r in runs for x in r["after_train"]]
    report["train_mrr_before"] = float(np.mean(tb))
    report["train_mrr_after"] = float(np.mean(ta))
    report["train_delta"] = paired_bootstrap(ta, tb, draws=10_000)
    pear = [r["health"]["exposure_q_pearson"] for r in runs]
    report["health"] = {
        "exposure_q_pearson": [None if p is None else round(p, 3) for p in pear],
        "use_rate_q_pearson": [None if r["health"]["use_rate_q_pearson"] is None
                               else round(r["health"]["use_rate_q_pearson"], 3) for r in runs],
        "missing_rows": sum(r["health"]["missing_rows"] for r in runs),
        "forward_citations": sum(r["health"]["forward_citations"] for r in runs),
        "edge_weight_p50": [r["health"]["edges"]["weights"].get("p50") for r in runs],
    }
    text = json.dumps(report, indent=2, sort_keys=True)
    if args.json is not None:
        args.json.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
