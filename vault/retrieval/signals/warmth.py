"""Warmth: the caller-supplied activation of each note (spreading activation, recency).

Learning (vault/learning/, via the facade's `UsageRecorder.learned`) owns the state; this
module only validates and aligns it: a(d) = warmth(d) clipped to [0, 1], one value per corpus
position. The pipeline (retrieval/pipeline.py, stage 6) uses it as a re-ranking boost, never as
a retrieval signal: warm(d) = named(d) * (1 + w_warmth * a(d)), so a warm note that no
query-dependent stage found (named(d) = 0) is not a hit. An all-zero vector means "nothing
learned yet" and the pipeline skips the stage so the ranking equals the learning-free ranking.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ...plural import counted


def warmth_scores(warmth: npt.ArrayLike | None, n_docs: int) -> npt.NDArray[np.float64] | None:
    """The warmth vector clipped to [0, 1], or None when absent or all zero (skip the signal).

    Raises ValueError when the vector is not aligned with the corpus.
    """
    if warmth is None:
        return None
    w = np.asarray(warmth, dtype=np.float64).ravel()
    if w.shape[0] != n_docs:
        raise ValueError(f"warmth has {w.shape[0]} entries for {counted(n_docs, 'note')}")
    w = np.clip(np.nan_to_num(w, nan=0.0, posinf=1.0, neginf=0.0), 0.0, 1.0)
    if not w.any():
        return None
    return w
