"""Retrieval that can decline: calibrate and measure "nothing relevant" (issue 32, item 3).

Labelled queries, each searched in its own haystack with the real engine (dense on):
- answerable (relevant exists): LoCoMo questions of categories 1-4 (turn notes per
  conversation) and LongMemEval oracle questions that have evidence (session notes);
- nothing relevant: LongMemEval oracle's abstention questions (ids ending `_abs`, whose answer
  is in no session), and `ABSENT`, questions written for this benchmark about topics none of
  these conversations touches, asked of every LoCoMo conversation and of the LongMemEval
  haystacks in turn;
- reported apart, not fitted: LoCoMo category 5 ("adversarial": a question about the other
  speaker's event, whose turns exist, so retrieval does find related text).

Split for honesty: LoCoMo conversations 0-4, even LongMemEval questions and even `ABSENT`
queries fit the logistic model and its floor (relevance.py); conversations 5-9, odd questions
and odd queries are held out, and only they are reported as the result. `--fit` prints the
fitted constants; without it the constants in vault/retrieval/relevance.py are evaluated.

    python -m bench.bench_abstain --locomo ../shared/data/locomo/locomo10.json \
        --longmemeval ../shared/data/longmemeval/longmemeval_oracle.json [--fit] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vault import MiniLmEncoder, SearchEngine, SearchParams, judge_relevance, relevance_constants

from .cache import SqliteEmbeddingCache
from .datasets import Haystack, load_locomo, load_longmemeval
from .runner import QueryMemoEncoder, default_cache_path

ABSENT: tuple[str, ...] = (
    "What is the melting point of tungsten?",
    "How do I configure the ingress controller on our Kubernetes cluster?",
    "Which enzyme unwinds the DNA double helix during replication?",
    "What did the auditor say about the Q3 depreciation schedule?",
    "When does the warranty on the forklift expire?",
    "What is the torque spec for the cylinder head bolts?",
    "Who won the 1954 FIFA World Cup final?",
    "How many moons does Neptune have?",
    "What is the syntax for a Rust trait object with a lifetime bound?",
    "Which port does the PostgreSQL replica listen on?",
    "What was decided about migrating the billing database to sharded MySQL?",
    "What is the boiling point of liquid nitrogen in kelvin?",
    "How do I rebase the release branch onto main and keep the merge commits?",
    "What is the recommended dosage of amoxicillin for a child of 20 kg?",
    "Who is the maintainer of the OpenSSL FIPS module?",
    "What did the landlord say about the radiator in the basement flat?",
    "How is the Black-Scholes formula derived?",
    "Which firmware version fixed the Wi-Fi regression on the router?",
    "What is the half-life of carbon-14?",
    "What is the capital of Mongolia?",
    "How do I calibrate the 3D printer's extruder steps per millimetre?",
    "What are the side effects of the quarterly VAT reconciliation?",
    "Where is the spare key for the server room cabinet?",
    "What is the airspeed velocity of a laden swallow?",
    "Which compiler flag enables link-time optimisation in GCC?",
    "What did the ophthalmologist prescribe for the glaucoma?",
    "How much did the solar inverter replacement cost?",
    "What is the refractive index of sapphire?",
    "Which cipher suites does the load balancer accept?",
    "What is the plot of the opera Wozzeck?",
    "What are the tolerances on the CNC-milled aluminium bracket?",
    "When is the deadline for the patent filing on the heat exchanger?",
    "How many lanes does the Øresund bridge have?",
    "What is the chemical formula of gypsum?",
    "Who signed off on the change to the Terraform state backend?",
    "What does the error code E1147 on the dishwasher mean?",
    "What is the gear ratio of the rear differential?",
    "Which version of the JVM introduced virtual threads?",
    "What is the wingspan of an Airbus A380?",
    "How do I reset the BIOS password on the ThinkPad?",
)


@dataclass(frozen=True)
class Row:
    source: str  # locomo | locomo-adversarial | longmemeval | absent
    fit: bool  # in the fitting half
    relevant: bool  # the label
    dense: float
    coverage: float


def _judged(engine: SearchEngine, hay: Haystack, text: str) -> tuple[float, float]:
    ev = engine.search(hay.corpus, text, 10).relevance
    assert ev is not None
    dense, cover = ev.evidence["dense"], ev.evidence["coverage"]
    return float(dense or 0.0), float(cover or 0.0)


def _adversarial(path: Path) -> dict[int, list[str]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {ci: [str(q["question"]) for q in conv["qa"] if q.get("category") == 5]
            for ci, conv in enumerate(data)}


def rows(engine: SearchEngine, locomo: Path, lme: Path, per_conv: int) -> Iterator[Row]:
    adversarial = _adversarial(locomo)
    for ci, hay in enumerate(load_locomo(locomo)):
        fit = ci < 5
        for q in hay.questions[:per_conv]:
            yield Row("locomo", fit, True, *_judged(engine, hay, q.text))
        for text in adversarial.get(ci, [])[: per_conv // 4]:
            yield Row("locomo-adversarial", fit, False, *_judged(engine, hay, text))
        for ai, text in enumerate(ABSENT):
            yield Row("absent", ai % 2 == 0, False, *_judged(engine, hay, text))
        print(f"locomo conversation {ci} done", file=sys.stderr)
    for qi, hay in enumerate(load_longmemeval(lme, "session", {}, abstention=True)):
        q = hay.questions[0]
        abstains = q.category == "abstention"
        yield Row("longmemeval", qi % 2 == 0, not abstains, *_judged(engine, hay, q.text))
        if qi % 25 == 0:
            text = ABSENT[(qi // 25) % len(ABSENT)]
            yield Row("absent", (qi // 25) % 2 == 0, False, *_judged(engine, hay, text))


def fit_logistic(x: np.ndarray, y: np.ndarray, iters: int = 50, ridge: float = 1e-3
                 ) -> np.ndarray:
    """Coefficients of P(y=1) = σ(Xb) by Newton's method (IRLS) with a small ridge; X gets an
    intercept column. Deterministic."""
    design = np.column_stack([np.ones(len(x)), x])
    b = np.zeros(design.shape[1])
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-design @ b))
        grad = design.T @ (y - p) - ridge * b
        hess = (design * (p * (1 - p))[:, None]).T @ design + ridge * np.eye(len(b))
        step = np.linalg.solve(hess, grad)
        b += step
        if np.max(np.abs(step)) < 1e-9:
            break
    return b


def _floor(p: np.ndarray, y: np.ndarray, keep: float) -> float:
    """The largest floor (3 decimals) that keeps at least `keep` of the answerable (y=1)."""
    answerable = np.sort(p[y == 1])
    if answerable.size == 0:
        return 0.5
    k = int(np.floor((1.0 - keep) * answerable.size))
    return float(np.floor(answerable[k] * 1000) / 1000)


def evaluate(data: list[Row]) -> dict[str, Any]:
    """Precision and recall of "nothing relevant" on the held-out half, by source, with the
    constants in relevance.py; and answerable questions still judged relevant."""
    out: dict[str, Any] = {}
    for mode in ("dense", "lexical"):
        decide = [(r, judge_relevance(r.dense if mode == "dense" else None, r.coverage))
                  for r in data if not r.fit]
        fitted = [(r, j) for r, j in decide if r.source != "locomo-adversarial"]
        declined = [r for r, j in fitted if not j.relevant]
        nothing = [r for r, _ in fitted if not r.relevant]
        tp = sum(1 for r in declined if not r.relevant)
        answerable = [r for r, _ in fitted if r.relevant]
        kept = sum(1 for r, j in fitted if r.relevant and j.relevant)
        by: dict[str, Any] = {}
        for source in ("absent", "longmemeval", "locomo-adversarial"):
            neg = [j for r, j in decide if r.source == source and not r.relevant]
            if neg:
                by[source] = {"n": len(neg), "declined": sum(1 for j in neg if not j.relevant)}
        out[mode] = {
            "precision": round(tp / len(declined), 4) if declined else None,
            "recall": round(tp / len(nothing), 4) if nothing else None,
            "answerable_kept": round(kept / len(answerable), 4) if answerable else None,
            "n_answerable": len(answerable), "n_nothing": len(nothing), "by_source": by}
    return out


def fit(data: list[Row], keep: float) -> dict[str, Any]:
    train = [r for r in data if r.fit and r.source != "locomo-adversarial"]
    y = np.array([1.0 if r.relevant else 0.0 for r in train])
    dense = np.array([[r.dense, r.coverage] for r in train])
    lexical = np.array([[r.coverage] for r in train])
    bd, bl = fit_logistic(dense, y), fit_logistic(lexical, y)
    pd = 1.0 / (1.0 + np.exp(-(bd[0] + dense @ bd[1:])))
    pl = 1.0 / (1.0 + np.exp(-(bl[0] + lexical @ bl[1:])))
    return {"DENSE_MODEL": [round(float(v), 3) for v in bd],
            "DENSE_FLOOR": _floor(pd, y, keep),
            "LEXICAL_MODEL": [round(float(bl[0]), 3), 0.0, round(float(bl[1]), 3)],
            "LEXICAL_FLOOR": _floor(pl, y, keep), "n_train": len(train)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--locomo", type=Path, required=True)
    ap.add_argument("--longmemeval", type=Path, required=True)
    ap.add_argument("--cache", type=Path, default=default_cache_path())
    ap.add_argument("--per-conversation", type=int, default=80,
                    help="answerable LoCoMo questions per conversation (default 80)")
    ap.add_argument("--keep", type=float, default=0.98,
                    help="share of answerable fitting questions the floor keeps")
    ap.add_argument("--fit", action="store_true", help="print fitted constants too")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    cache = SqliteEmbeddingCache(args.cache)
    engine = SearchEngine(SearchParams(), encoder=QueryMemoEncoder(MiniLmEncoder(), cache),
                          cache=cache)
    data = list(rows(engine, args.locomo, args.longmemeval, args.per_conversation))
    report: dict[str, Any] = {"held_out": evaluate(data),
                              "constants": relevance_constants()}
    if args.fit:
        report["fitted"] = fit(data, args.keep)
    cache.close()
    print(json.dumps(report, indent=None if args.json else 2, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
