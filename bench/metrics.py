"""Retrieval metrics over a ranked list of positions and a set of evidence positions.

recall_any@k  = 1 if any evidence item is in the top k (LongMemEval "recall_any")
recall_all@k  = 1 if every evidence item is in the top k (LongMemEval "recall_all", official)
recall@k      = |top k ∩ E| / |E| (LoCoMo's recall: mean fraction of evidence found)
ndcg@k        = DCG@k / IDCG@k with binary relevance and LongMemEval's own DCG,
                DCG = rel_1 + sum_{i=2..k} rel_i / log2(i)  (ranks 1 and 2 both undiscounted),
                so the numbers match its official evaluation code ("ndcg_any").
The paired bootstrap resamples questions with a fixed seed (numpy PCG64(0), 2000 draws).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

KS = (1, 5, 10)
METRICS = ("recall_any", "recall_all", "recall", "ndcg")


def _dcg(rel: Sequence[float]) -> float:
    if not rel:
        return 0.0
    return float(rel[0] + sum(r / np.log2(i + 1) for i, r in enumerate(rel[1:], start=1)))


def question_metrics(ranking: Sequence[int], evidence: frozenset[int]) -> dict[str, float]:
    """All metrics at every k in KS for one question ("recall@10", "ndcg@5", ...)."""
    out: dict[str, float] = {}
    for k in KS:
        top = ranking[:k]
        found = sum(1 for i in top if i in evidence)
        out[f"recall_any@{k}"] = float(found > 0)
        out[f"recall_all@{k}"] = float(found == len(evidence))
        out[f"recall@{k}"] = found / len(evidence)
        ideal = _dcg([1.0] * min(k, len(evidence)))
        out[f"ndcg@{k}"] = _dcg([1.0 if i in evidence else 0.0 for i in top]) / ideal
    return out


def mean_metrics(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    """Mean of each metric over questions (sorted keys)."""
    if not rows:
        return {}
    return {key: float(np.mean([r[key] for r in rows])) for key in sorted(rows[0])}


def paired_bootstrap(
    a: Sequence[float], b: Sequence[float], draws: int = 2000, seed: int = 0
) -> dict[str, float]:
    """Mean of a - b with a percentile 95 % interval from resampling questions in pairs."""
    diff = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    if diff.size == 0:
        return {"mean": 0.0, "lo": 0.0, "hi": 0.0}
    rng = np.random.Generator(np.random.PCG64(seed))
    idx = rng.integers(0, diff.size, size=(draws, diff.size))
    means = diff[idx].mean(axis=1)
    return {
        "mean": float(diff.mean()),
        "lo": float(np.percentile(means, 2.5)),
        "hi": float(np.percentile(means, 97.5)),
    }
