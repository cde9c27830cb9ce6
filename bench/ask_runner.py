"""Search against `ask` at an equal note budget, with baselines from the same scoring pass.

For every question the engine scores the haystack once; from that pass come BM25 alone, dense
alone (when an encoder is set), plain RRF of the two (sum 1/(60 + rank + 1)) and the full
pipeline's top `budget` (what search(question, k=budget) returns without a reranker). Each
extra engine in `searches` (link-stage variants) and each asker (the ask loop and its
ablations: a callable from (corpus, question, budget, the day it is asked) to ranked corpus
positions, at most `budget` of them) runs on the same corpus; every ranking reads the time the
question names against the day it is asked on, as `rmh bench` does. Metrics per question:
recall_all@2/5/10 (every evidence note in the top k) and recall@10 (the share of evidence
notes found in a 10-note budget: "evidence recall"). Paired bootstrap intervals
(bench/metrics.py) per category.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import date
from typing import Any, TextIO

import numpy as np
import numpy.typing as npt

from vault import Corpus, SearchEngine, order

from .datasets import Haystack
from .metrics import paired_bootstrap

Asker = Callable[[Corpus, str, int, date | None], list[int]]  # ..., the day it is asked
KS = (2, 5, 10)
BUDGET = 10


def metrics(ranking: Sequence[int], evidence: frozenset[int]) -> dict[str, float]:
    """recall_all@2/5/10 and recall@10 of one ranked list."""
    out = {f"recall_all@{k}": float(evidence <= set(ranking[:k])) for k in KS}
    out["recall@10"] = len(evidence & set(ranking[:BUDGET])) / len(evidence)
    return out


def _top(scores: npt.NDArray[np.float64], eligible: npt.NDArray[np.bool_]) -> list[int]:
    idx = order(np.where(eligible, scores, -np.inf))
    return [int(i) for i in idx[:BUDGET] if eligible[i] and scores[i] > 0]


def _plain_rrf(sig: Sequence[npt.NDArray[np.float64]], eligible: npt.NDArray[np.bool_],
               k: int) -> npt.NDArray[np.float64]:
    out = np.zeros(eligible.shape[0], dtype=np.float64)
    for s in sig:
        o = order(np.where(eligible, s, -np.inf))
        r = np.empty_like(o)
        r[o] = np.arange(o.shape[0])
        out += np.where(s > 0, 1.0 / (k + r + 1.0), 0.0)
    return out


def run(haystacks: Iterable[Haystack], engine: SearchEngine, *,
        searches: Mapping[str, SearchEngine] | None = None,
        askers: Mapping[str, Asker] | None = None, limit: int | None = None,
        progress: TextIO | None = sys.stderr) -> dict[str, Any]:
    """Per-question rows {method: metrics}, categories and timing (see `summarize`)."""
    rows: dict[str, list[dict[str, float]]] = {}
    cats: list[str] = []
    t0 = time.perf_counter()
    ask_s = 0.0
    for hay in haystacks:
        for q in hay.questions:
            if limit is not None and len(cats) >= limit:
                break
            s = engine.score(hay.corpus, q.text, now=q.asked_on)  # as bench/runner.py
            el = s.eligible
            first = [s.signals[n] for n in ("bm25", "dense") if n in s.signals]
            rank = {n: _top(s.signals[n], el) for n in ("bm25", "dense") if n in s.signals}
            rank["rrf"] = _top(_plain_rrf(first, el, engine.params.rrf_k), el)
            rank["full"] = _top(s.final, el)
            for name, other in (searches or {}).items():
                o = other.score(hay.corpus, q.text, now=q.asked_on)
                rank[name] = _top(o.final, o.eligible)
            t = time.perf_counter()
            for name, asker in (askers or {}).items():
                rank[name] = asker(hay.corpus, q.text, BUDGET, q.asked_on)[:BUDGET]
            ask_s += time.perf_counter() - t
            for name, r in rank.items():
                rows.setdefault(name, []).append(metrics(r, q.evidence))
            cats.append(q.category)
            if progress is not None and len(cats) % 25 == 0:
                print(f"\r  {len(cats)} questions, {time.perf_counter() - t0:.0f}s", end="",
                      file=progress, flush=True)
    if progress is not None:
        print(file=progress)
    return {"rows": rows, "categories": cats,
            "timing": {"seconds": time.perf_counter() - t0, "ask_seconds": ask_s}}


def _means(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    return {k: float(np.mean([r[k] for r in rows])) for k in sorted(rows[0])} if rows else {}


def summarize(result: Mapping[str, Any], pairs: Sequence[tuple[str, str, str]]
              ) -> dict[str, Any]:
    """Means per method (all and per category) and paired intervals for (a, b, metric)."""
    rows, cats = result["rows"], result["categories"]
    out: dict[str, Any] = {"questions": len(cats), "timing": result["timing"],
                           "all": {m: _means(r) for m, r in rows.items()}, "by_category": {}}
    for cat in sorted(set(cats)):
        idx = [i for i, c in enumerate(cats) if c == cat]
        sub = {m: [r[i] for i in idx] for m, r in rows.items()}
        ci = {f"{a}-{b} {key}": paired_bootstrap([r[key] for r in sub[a]],
                                                 [r[key] for r in sub[b]])
              for a, b, key in pairs if a in sub and b in sub}
        out["by_category"][cat] = {"questions": len(idx),
                                   "methods": {m: _means(r) for m, r in sub.items()}, "ci": ci}
    return out


def render(report: Mapping[str, Any]) -> str:
    """Methods x metrics per category, then the intervals."""
    cols = [*(f"recall_all@{k}" for k in KS), "recall@10"]
    lines = [str(report.get("title", "")), ""]
    for cat, block in report["by_category"].items():
        lines.append(f"{cat} (n={block['questions']})")
        lines.append("  method            " + " ".join(f"{c:>13}" for c in cols))
        for m, vals in block["methods"].items():
            lines.append(f"  {m:<18}" + " ".join(f"{vals[c]:>13.3f}" for c in cols))
        for key, d in block["ci"].items():
            lines.append(f"  {key}: {d['mean']:+.3f} ({d['lo']:+.3f} .. {d['hi']:+.3f})")
        lines.append("")
    t = report["timing"]
    lines.append(f"time {t['seconds']:.0f}s (ask loops {t['ask_seconds']:.0f}s)")
    return "\n".join(lines)
