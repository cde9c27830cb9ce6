"""Warmth signal: the caller-supplied activation of each note (spreading activation, recency).

Learning (vault/learning.py, via the facade's `UsageRecorder.warmth`) owns the state; this
signal only validates and aligns it: raw warmth(d) in [0, 1], clipped, one value per corpus
position. An all-zero vector means "nothing learned yet" and the pipeline skips the signal so
the ranking equals the learning-free ranking.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def warmth_scores(warmth: npt.ArrayLike | None, n_docs: int) -> npt.NDArray[np.float64] | None:
    """The warmth vector clipped to [0, 1], or None when absent or all zero (skip the signal).

    Raises ValueError when the vector is not aligned with the corpus.
    """
    if warmth is None:
        return None
    w = np.asarray(warmth, dtype=np.float64).ravel()
    if w.shape[0] != n_docs:
        raise ValueError(f"warmth has {w.shape[0]} entries for {n_docs} notes")
    w = np.clip(np.nan_to_num(w, nan=0.0, posinf=1.0, neginf=0.0), 0.0, 1.0)
    if not w.any():
        return None
    return w
