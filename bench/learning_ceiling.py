"""How much MRR lift can a learned reranking prior give LoCoMo's related held-out questions?
(issue 31; NOTES-L6.md). Reads vaults that `python -m bench.bench_learning --keep DIR` trained
and kept, and re-creates its split (same seed, same shuffle).

Per held-out question, in process (dense off, as `rmh serve --no-dense`):
- the rank of its first evidence turn in the learning-free ranking (depth 1000), and in the
  live learned ranking (the bench's `on`);
- oracle priors through the product's own prior stage (final(d) = warm(d) (1 + x P(d)),
  P(d) in {0, 1}, with the named-note holds and the second pass as in every search):
  * "gold": P = 1 on this question's evidence turns that some training question used (a
    prior that knows which trained note each question needs; the ceiling of any reranking
    prior: no reranking can lift more than lifting exactly the right note);
  * "used": P = 1 on every evidence turn of the training questions, for every question
    (a perfect query-independent prior: it knows what was used, not for what);
  MRR@10 over the x sweep, related and unrelated, paired against the learning-free ranking;
- the same two masks as the learned expansion channel's x(d) (learning v6, fused
  additively: w x(d) / (60 + rank + 1)) over a sweep of its weight w ("gold+w", "used+w");
- the live learned state with the product's knobs turned (`live_variants`);
- where the citing agent's answer notes rank (`answer_ranks`): a citation expansion (an
  answer note's score passed to the turns it links) can lift an evidence turn only where an
  answer note linking it ranks above it.

Run:  python -m bench.learning_ceiling /tmp/l6/base2 --conversations 2
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from bench.bench_learning import DATA, split
from bench.datasets import Haystack, load_locomo
from bench.metrics import paired_bootstrap
from vault import LEDGER_FILE, Corpus, Ledger, SearchEngine, Vault

SCALES = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 100.0)
CHANNEL_WEIGHTS = (0.25, 0.5, 1.0, 2.0, 5.0)
DEPTH = 1000
HEAD = 10  # the "head" variants: the channel only on the learning-free top HEAD
VARIANTS = ("live0", "w1", "w2", "prior0.5", "head w1", "head w2")


def first_rank(paths: Sequence[str], evidence: set[str]) -> int:
    """1-based rank of the first evidence note, 0 when absent."""
    for rank, p in enumerate(paths):
        if p in evidence:
            return rank + 1
    return 0


def rr(rank: int) -> float:
    return 1.0 / rank if 0 < rank <= 10 else 0.0


def conversation(hay: Haystack, root: Path, seed: int) -> dict[str, Any]:
    train, related, unrelated = split(hay, random.Random(f"{seed}:{hay.name}"))
    paths = dict(enumerate(hay.corpus.paths))
    used_paths = {paths[p] for q in train for p in q.evidence}
    ledger = Ledger.open(root / ".rmh" / LEDGER_FILE, clock=time.time)
    vault = Vault.open(root, engine=SearchEngine.lexical(), usage=ledger)  # `--no-dense`
    try:
        corpus = vault.corpus()
        pos = {p: i for i, p in enumerate(corpus.paths)}
        used = np.zeros(len(corpus))
        used[[pos[p] for p in sorted(used_paths)]] = 1.0
        engine = vault.engine
        base_params = engine.params
        day = vault.today()  # every ranking on the live clock's day, as `off` and the server
        cites: dict[str, set[str]] = {}
        for a, b in corpus.edges:
            if corpus.paths[a].startswith("answers/"):
                cites.setdefault(corpus.paths[a], set()).add(corpus.paths[b])
        out: dict[str, Any] = {}
        for group, qs in (("related", related), ("unrelated", unrelated)):
            rows = []
            for q in qs:
                evidence = {paths[p] for p in q.evidence}
                gold = np.zeros(len(corpus))
                gold[[pos[p] for p in sorted(evidence & used_paths)]] = 1.0
                engine.params = base_params
                # on the live clock's day (bench_learning.py: the dates a question names)
                off = vault.search(q.text, DEPTH, as_of=0.0, now=day)
                off_head = [h.note for h in off.hits[:HEAD]]
                live = vault.search(q.text, 10, learn=False)
                row: dict[str, Any] = {
                    "q": q.text,
                    "off": first_rank([h.note for h in off.hits], evidence),
                    "live": first_rank([h.note for h in live.hits], evidence)}
                for x in SCALES:
                    engine.params = replace(base_params, prior_scale=x)
                    for name, prior in (("gold", gold), ("used", used)):
                        if name == "gold" and group == "unrelated":
                            continue
                        res = engine.search(corpus, q.text, 10, prior=prior, now=day)
                        row[f"{name}@{x}"] = first_rank([h.note for h in res.hits], evidence)
                for w in CHANNEL_WEIGHTS:
                    engine.params = replace(base_params, weights={
                        **base_params.weights, "learned": w})
                    for name, mask in (("gold", gold), ("used", used)):
                        if name == "gold" and group == "unrelated":
                            continue
                        res = engine.search(corpus, q.text, 10, expansion=mask, now=day)
                        row[f"{name}+{w}"] = first_rank([h.note for h in res.hits], evidence)
                row.update(live_variants(vault, corpus, q.text, evidence, pos, off_head))
                row.update(answer_ranks([h.note for h in off.hits], evidence, cites))
                rows.append(row)
            out[group] = rows
        engine.params = base_params
        return out
    finally:
        vault.close()


def live_variants(vault: Vault, corpus: Corpus, query: str, evidence: set[str],
                  pos: dict[str, int], head: list[str]) -> dict[str, int]:
    """First evidence rank under the live learned state with the product's knobs turned:
    the channel's weight w ("w1", "w2"), the prior's scale ("prior0.5"), and the channel
    restricted to the learning-free top HEAD ("head w1", "head w2"). "live0" reproduces the
    bench's `on` (the check that the in-process ranking is the server's), ranked on the live
    clock's day as the server ranks (without it the time channel was skipped)."""
    engine, base, day = vault.engine, vault.engine.params, vault.today()
    held = vault.held_words(query)  # as `Vault.search` (v18-v19)
    got = vault.usage.learned(corpus.ids, None, query=query, held=held)
    x = np.zeros(len(corpus)) if got.expansion is None else np.asarray(got.expansion)
    in_head = np.zeros(len(corpus), dtype=np.bool_)
    in_head[[pos[p] for p in head]] = True
    out: dict[str, int] = {}
    for name, w, scale, only_head in (("live0", 0.5, base.prior_scale, False),
                                      ("w1", 1.0, base.prior_scale, False),
                                      ("w2", 2.0, base.prior_scale, False),
                                      ("prior0.5", 0.5, 0.5, False),
                                      ("head w1", 1.0, base.prior_scale, True),
                                      ("head w2", 2.0, base.prior_scale, True)):
        engine.params = replace(base, prior_scale=scale,
                                weights={**base.weights, "learned": w})
        try:
            res = engine.search(corpus, query, 10, warmth=got.warmth, prior=got.prior,
                                free_prior=got.free, cooccurrence=got.cooccurrence,
                                whole=got.whole,
                                expansion=np.where(in_head, x, 0.0) if only_head else x,
                                now=day)
        finally:
            engine.params = base
        out[name] = first_rank([h.note for h in res.hits], evidence)
    return out


def answer_ranks(ranked: list[str], evidence: set[str], cites: dict[str, set[str]]
                 ) -> dict[str, int]:
    """In the learning-free ranking: the first answer note (the citing agent's) that links an
    evidence turn ("ans_gold") and the first that links none ("ans_wrong"), 0 when absent."""
    gold = [p for p in ranked if p in cites and cites[p] & evidence]
    wrong = [p for p in ranked if p in cites and not cites[p] & evidence]
    return {"ans_gold": first_rank(ranked, set(gold[:1])),
            "ans_wrong": first_rank(ranked, set(wrong[:1]))}


def above(rank: int, gold: int) -> bool:
    """Whether a note at `rank` (0: absent) ranks above the evidence at `gold` (0: absent)."""
    return rank > 0 and (gold == 0 or rank < gold)


def table(rows: list[dict[str, Any]], related: bool) -> dict[str, Any]:
    off = [rr(r["off"]) for r in rows]
    ranks = np.array([r["off"] for r in rows])
    found = ranks > 0
    out: dict[str, Any] = {
        "n": len(rows), "mrr_off": float(np.mean(off)) if off else None,
        "off_rank1": int(np.sum(ranks == 1)), "off_rank2_10": int(np.sum(found & (ranks >= 2)
                                                                          & (ranks <= 10))),
        "off_rank11_50": int(np.sum(found & (ranks > 10) & (ranks <= 50))),
        "off_rank51_100": int(np.sum(found & (ranks > 50) & (ranks <= 100))),
        "off_rank101_1000": int(np.sum(found & (ranks > 100))),
        "off_absent": int(np.sum(~found)),
        "live": paired_bootstrap([rr(r["live"]) for r in rows], off, draws=10_000),
        "answer_citing_gold_above_gold": sum(above(r["ans_gold"], r["off"]) for r in rows),
        "answer_citing_gold_top3": sum(0 < r["ans_gold"] <= 3 for r in rows),
        "answer_citing_other_above_gold": sum(above(r["ans_wrong"], r["off"]) for r in rows),
        "answer_citing_other_top3": sum(0 < r["ans_wrong"] <= 3 for r in rows)}
    for name in VARIANTS:
        out[name] = paired_bootstrap([rr(r[name]) for r in rows], off, draws=10_000)
    for x in SCALES:
        for name in ("gold", "used") if related else ("used",):
            on = [rr(r[f"{name}@{x}"]) for r in rows]
            out[f"{name}@{x}"] = paired_bootstrap(on, off, draws=10_000)
    for w in CHANNEL_WEIGHTS:
        for name in ("gold", "used") if related else ("used",):
            on = [rr(r[f"{name}+{w}"]) for r in rows]
            out[f"{name}+{w}"] = paired_bootstrap(on, off, draws=10_000)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("kept", type=Path, help="the folder given to bench_learning --keep")
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--conversations", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    per: dict[str, Any] = {}
    for i, hay in enumerate(load_locomo(args.data)):
        if args.first <= i < args.first + args.conversations:
            per[hay.name] = conversation(hay, args.kept / hay.name, args.seed)
    rel = [r for c in per.values() for r in c["related"]]
    unr = [r for c in per.values() for r in c["unrelated"]]
    report = {"conversations": sorted(per), "related": table(rel, True),
              "unrelated": table(unr, False), "per_question": per}
    text = json.dumps(report, indent=2, sort_keys=True)
    if args.json is not None:
        args.json.write_text(text + "\n", encoding="utf-8")
    print(json.dumps({k: report[k] for k in ("conversations", "related", "unrelated")},
                     indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
