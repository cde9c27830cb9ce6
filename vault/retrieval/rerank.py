"""Cross-encoder rerank stage: re-score the fused head with a local ONNX cross-encoder.

The model and what exports load: cross_encoder.py. A reranker that fails on a query (its
error, a score that is not finite, the wrong number of scores) leaves the fused order as it was
and the stage says so ("failed: ..."): search still answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from ..storage.corpus import Corpus
from .cross_encoder import MAX_TOKENS, OnnxCrossEncoder, RerankFailed, sigmoid
from .interrupted import interruption

__all__ = ["MAX_TOKENS", "CrossEncoder", "OnnxCrossEncoder", "RerankFailed", "cross_encode",
           "rerank_order", "sigmoid"]

RERANK_CHARS = 4000  # passage text handed to the cross-encoder (its tokenizer truncates too)


class CrossEncoder(Protocol):
    """Scores (query, passage) pairs; higher is more relevant, each score in [0, 1]."""

    @property
    def fingerprint(self) -> str: ...

    def score(self, query: str, passages: Sequence[str]) -> npt.NDArray[np.float64]: ...


def rerank_order(
    head: Sequence[int], rerank: npt.NDArray[np.float64], fused: npt.NDArray[np.float64]
) -> list[int]:
    """Head positions sorted by rerank score desc, then fused score desc, then their order
    in `head` (which broke ties by path: fusion.stable_order)."""
    keyed = sorted(range(len(head)), key=lambda j: (-rerank[j], -fused[head[j]], j))
    return [head[j] for j in keyed]


def cross_encode(reranker: CrossEncoder | None, corpus: Corpus, query: str, ranked: list[int],
                 final: npt.NDArray[np.float64], top_n: int, keep: int
                 ) -> tuple[list[int], dict[int, float], int, str]:
    """The pipeline's stage 7: the first `top_n` of `ranked` scored by `reranker`, its best
    `keep` first, the rest in the order before; the new order, the scores, how many of the
    order's first the scores placed (0 when the stage did not run), the report."""
    if reranker is None:
        return ranked, {}, 0, "skipped: no model"
    if not ranked:
        return ranked, {}, 0, "skipped: no candidates"
    head = ranked[:top_n]
    passages = [f"{corpus.titles[i]}\n{corpus.bodies[i]}"[:RERANK_CHARS] for i in head]
    try:
        scores = np.asarray(reranker.score(query, passages), dtype=np.float64)
        if scores.shape != (len(head),) or not np.all(np.isfinite(scores)):
            raise RerankFailed(f"{scores.size} scores for {len(head)} passages, or not finite")
    except Exception as exc:  # any reranker's fault costs the stage, never the search
        if (stop := interruption(exc)) is not None:
            raise stop from exc
        return ranked, {}, 0, f"failed: {str(exc)[:200]}; fused order kept"
    rer = {i: float(scores[j]) for j, i in enumerate(head)}
    kept = rerank_order(head, scores, final)[:keep]
    kept_set = set(kept)
    # which of a 2-label model's columns was read as relevant (OnnxCrossEncoder.relevant)
    column = getattr(reranker, "relevant", "")
    said = f"; relevant: {column}" if column else ""
    return (kept + [i for i in ranked if i not in kept_set], rer, len(kept),
            f"ran (top {len(head)}, keep {len(kept)}{said})")
