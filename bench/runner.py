"""Run a retrieval benchmark through the same `SearchEngine` the Vault uses.

For every question the engine scores its haystack once; from that one pass come the baselines
(BM25 alone, dense alone, plain RRF of the two: sum 1/(60 + rank + 1)) and the full pipeline,
so all methods see the same corpus, tokens and embeddings. Rankings cover eligible notes only
(structural hub notes are archived; see bench/datasets.py). `--ablate` re-runs the full
pipeline with each signal's weight set to 0 in turn.
"""

from __future__ import annotations

import hashlib
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import numpy.typing as npt

from vault import DEFAULT_WEIGHTS, EmbeddingCache, Encoder, SearchEngine, SearchParams, order

from .baselines import Baselines
from .datasets import Haystack
from .metrics import mean_metrics, paired_bootstrap, question_metrics

BASELINES = ("bm25", "dense", "rrf")
ABLATE = ("bm25", "dense", "conjunctive", "graph", "context", "named", "when")
DEPTH = 10
LOCOMO_CATEGORIES = {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop"}


class QueryMemoEncoder:
    """Delegates to an encoder; every text's vector goes through the persistent cache."""

    def __init__(self, inner: Encoder, cache: EmbeddingCache) -> None:
        self.inner = inner
        self.cache = cache

    @property
    def fingerprint(self) -> str:
        return self.inner.fingerprint

    @property
    def dim(self) -> int:
        return self.inner.dim

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        keys = [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts]
        got = self.cache.get_embeddings(self.fingerprint, keys)
        miss = sorted({k: t for k, t in zip(keys, texts, strict=True) if k not in got}.items())
        if miss:
            vecs = self.inner.encode([t for _, t in miss])
            fresh = {k: vecs[i] for i, (k, _) in enumerate(miss)}
            self.cache.put_embeddings(self.fingerprint, fresh)
            got.update(fresh)
        return np.stack([got[k] for k in keys]).astype(np.float32)


@dataclass
class Rows:
    """Per-question metric rows by method, and each question's category, in question order."""

    per_method: dict[str, list[dict[str, float]]]
    categories: list[str]

    def extend(self, other: Rows) -> None:
        for method, rows in other.per_method.items():
            self.per_method[method].extend(rows)
        self.categories.extend(other.categories)


def _top(scores: npt.NDArray[np.float64], eligible: npt.NDArray[np.bool_]) -> list[int]:
    masked = np.where(eligible, scores, -np.inf)
    return [int(i) for i in order(masked)[:DEPTH] if eligible[i]]


def _plain_rrf(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64],
               eligible: npt.NDArray[np.bool_], k: int) -> npt.NDArray[np.float64]:
    out = np.zeros(a.shape[0], dtype=np.float64)
    for s in (a, b):
        o = order(np.where(eligible, s, -np.inf))
        r = np.empty_like(o)
        r[o] = np.arange(o.shape[0])
        out += 1.0 / (k + r + 1.0)
    return out


def methods_of(ablate: bool) -> list[str]:
    return [*BASELINES, "full"] + ([f"-{s}" for s in ABLATE] if ablate else [])


def quotas(haystacks: Sequence[Haystack], limit: int | None) -> list[int]:
    """How many of each haystack's questions a run asks: all, or the first `limit` overall."""
    out: list[int] = []
    left = limit
    for hay in haystacks:
        take = len(hay.questions) if left is None else min(len(hay.questions), left)
        out.append(take)
        left = None if left is None else left - take
    return out


def score_haystack(
    hay: Haystack, engine: SearchEngine, quota: int, ablate: bool = False
) -> tuple[Rows, list[float]]:
    """The metric rows of the first `quota` questions of one haystack, and the latencies of
    all but the first query (which also builds the haystack's index)."""
    methods = methods_of(ablate)
    rows = Rows({m: [] for m in methods}, [])
    lat: list[float] = []
    siblings = {}
    baselines = Baselines(engine)
    for qi, q in enumerate(hay.questions[:quota]):
        t = time.perf_counter()
        s = engine.score(hay.corpus, q.text, now=q.asked_on)
        if qi > 0:
            lat.append(time.perf_counter() - t)
        el = s.eligible
        base = baselines.signals(s.signals, hay.corpus, q.text, now=q.asked_on)
        rank = {
            "bm25": _top(base["bm25"], el),
            "dense": _top(base["dense"], el),
            "rrf": _top(_plain_rrf(base["bm25"], base["dense"], el, engine.params.rrf_k), el),
        }
        if engine.reranker is not None or engine.params.second_pass:  # stages after score
            res = engine.search(hay.corpus, q.text, DEPTH, now=q.asked_on)
            rank["full"] = [hay.corpus.position(h.id) for h in res.hits]
        else:
            rank["full"] = _top(s.final, el)
        if ablate:
            for sig in ABLATE:
                if sig not in siblings:
                    w = {**engine.params.weights, sig: 0.0}
                    siblings[sig] = engine.with_params(replace(engine.params, weights=w))
                a = siblings[sig].score(hay.corpus, q.text, now=q.asked_on)
                rank[f"-{sig}"] = _top(a.final, a.eligible)
        for m in methods:
            rows.per_method[m].append(question_metrics(rank[m], q.evidence))
        rows.categories.append(q.category)
    return rows, lat


def timing_of(seconds: float, lat: Sequence[float]) -> dict[str, float]:
    return {
        "seconds": seconds,
        "query_p50_ms": float(np.percentile(lat, 50) * 1000) if lat else 0.0,
        "query_p95_ms": float(np.percentile(lat, 95) * 1000) if lat else 0.0,
    }


def run(
    haystacks: Iterable[Haystack],
    engine: SearchEngine,
    *,
    limit: int | None = None,
    ablate: bool = False,
    progress: TextIO | None = sys.stderr,
) -> tuple[Rows, dict[str, float]]:
    """Score every question; returns per-question metric rows per method and timings."""
    rows = Rows({m: [] for m in methods_of(ablate)}, [])
    t0 = time.perf_counter()
    lat: list[float] = []
    done = 0
    for hi, hay in enumerate(haystacks):
        if limit is not None and done >= limit:
            break
        quota = quotas([hay], None if limit is None else limit - done)[0]
        part, part_lat = score_haystack(hay, engine, quota, ablate)
        rows.extend(part)
        lat.extend(part_lat)
        done += quota
        if progress is not None:
            full = np.mean([r["recall@10"] for r in rows.per_method["full"]]) if done else 0.0
            print(f"\r  haystack {hi + 1}: {done} questions, full recall@10 {full:.3f}, "
                  f"{time.perf_counter() - t0:.0f}s", end="", file=progress, flush=True)
    if progress is not None:
        print(file=progress)
    return rows, timing_of(time.perf_counter() - t0, lat)


def summarize(rows: Rows, headline: str, category_names: Mapping[str, str] | None = None
              ) -> dict[str, Any]:
    """methods / by_category / ci / ablation, as `rmh bench --json` prints them."""
    methods = {m: mean_metrics(r) for m, r in rows.per_method.items()}
    by_cat: dict[str, Any] = {}
    for cat in sorted(set(rows.categories)):
        idx = [i for i, c in enumerate(rows.categories) if c == cat]
        label = f"{cat} ({category_names[cat]})" if category_names and cat in category_names \
            else cat
        by_cat[label] = {
            "questions": len(idx),
            **{m: mean_metrics([r[i] for i in idx]) for m, r in rows.per_method.items()
               if not m.startswith("-")},
        }
    best = max(BASELINES, key=lambda m: (methods[m].get(headline, 0.0), m))
    ci: dict[str, Any] = {"metric": headline, "best_baseline": best}
    for base in sorted({best, "rrf"}):
        ci[f"full-{base}"] = {
            key: paired_bootstrap([r[key] for r in rows.per_method["full"]],
                                  [r[key] for r in rows.per_method[base]])
            for key in sorted({headline, "recall@10", "ndcg@10", "recall_all@5"})
        }
    ablation = {m: {headline: methods[m][headline],
                    "delta": methods[m][headline] - methods["full"][headline]}
                for m in methods if m.startswith("-")}
    return {"methods": methods, "by_category": by_cat, "ci": ci, "ablation": ablation}


def render(report: Mapping[str, Any], headline: str) -> str:
    """The human table: methods x metrics@k, categories, interval, ablation."""
    cols = [f"{m}@{k}" for m in ("recall_any", "recall_all", "recall", "ndcg") for k in (1, 5, 10)]
    lines = [f"{report['title']}", f"  {report['setup']}",
             f"  questions: {report['questions']}  excluded: {report['excluded']}", ""]
    head = "method        " + " ".join(f"{c:>13}" for c in cols)
    lines.append(head)
    for m, vals in report["methods"].items():
        lines.append(f"{m:<14}" + " ".join(f"{vals[c]:>13.3f}" for c in cols))
    lines.append("")
    lines.append(f"by category ({headline}):")
    for cat, v in report["by_category"].items():
        cells = "  ".join(f"{m} {v[m][headline]:.3f}" for m in (*BASELINES, "full"))
        lines.append(f"  {cat:<28} n={v['questions']:<5} {cells}")
    ci = report["ci"]
    for key, val in ci.items():
        if key.startswith("full-"):
            d = val[headline]
            lines.append(f"{key} {headline}: {d['mean']:+.3f} "
                         f"(95% paired bootstrap {d['lo']:+.3f} .. {d['hi']:+.3f})")
    if report["ablation"]:
        lines.append("ablation (weight 0):")
        for m, v in report["ablation"].items():
            lines.append(f"  {m:<14} {headline} {v[headline]:.3f} ({v['delta']:+.3f})")
    t = report["timing"]
    lines.append(f"time {t['seconds']:.0f}s; query p50 {t['query_p50_ms']:.1f} ms, "
                 f"p95 {t['query_p95_ms']:.1f} ms (warm, cached embeddings)")
    return "\n".join(lines)


def default_cache_path() -> Path:
    return Path(__file__).resolve().parent / "out" / "embeddings.sqlite"


def params_json(p: SearchParams) -> dict[str, Any]:
    return {"weights": {s: p.weight(s) for s in sorted(DEFAULT_WEIGHTS)}, "rrf_k": p.rrf_k,
            "normalize": p.normalize, "alpha": p.alpha, "top_seeds": p.top_seeds}
