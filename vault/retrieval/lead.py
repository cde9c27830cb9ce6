"""When the dense channel's first hit is not outvoted: a per-query fusion weight from each
first-stage channel's confidence in its own first hit, read off its score distribution.

A channel's confidence in its first hit is its top score's margin over the runner-up as a
share of its head's range,

    gap_s = (x_1 - x_2) / (x_1 - x_m),   x_1 >= ... >= x_m the first m positive scores of s,

m = fusion.REDUNDANCY_HEAD (20), 0 for a head of fewer than 3 notes or no range. It is free of
the channel's scale (BM25 ~ 1..30, cosines in [-1, 1]), so the channels can be compared on one
query: a score distribution whose first document stands clear of the rest signals a query
the ranker is sure of, a flat head one it is not (query performance prediction from score
distributions: Zhou & Croft 2007, "Query performance prediction in web search environments"
(WIG); Shtok, Kurland, Carmel, Raiber & Markovits 2012, "Predicting query performance by
query-drift estimation" (NQC); Cummins 2014, "Document score distribution models for query
performance inference and prediction"), and per-query estimates of that kind can weight
the lists of a fusion (Markovits, Shtok, Kurland & Carmel 2012, "Predicting query
performance for fusion-based retrieval").

The rule (`dense_lead`): when dense's gap is above that of every lexical channel that is
weighted for this query (bm25, conjunctive), dense's weight for this query is raised to the
sum of theirs. BM25 and the conjunctive channel read the same words, so their votes are
correlated (Lee 1997; Vogt & Cottrell 1999): together they outvote dense wherever the two
disagree, which is right when the lexical lists are the surer ones and wrong when dense is.
The raise gives dense's list the lexical side's whole vote, no more: a note the lexical
channels both rank first still counts as much as dense's first. No constant is fitted; the
head is fusion's existing m. Measured in session 39 (NOTES-FUS40.md): dense's first hit is
relevant more often than bm25's where the rule fires on every dev set looked at, less often
elsewhere on the lexical sets (locomo_facts).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from .fusion import REDUNDANCY_HEAD, Paths, top

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
LEXICAL = ("bm25", "conjunctive")


def first_gap(scores: F64, head: I64 | None = None, m: int = REDUNDANCY_HEAD,
              paths: Paths = None) -> float:
    """(x_1 - x_2) / (x_1 - x_m) over the first m positive `scores` (module docstring); `head`
    may give `top(scores, M)` for some M >= m, computed already. 0 for fewer than 3 of them or
    no range."""
    x = np.asarray(scores, dtype=np.float64)
    h = head if head is not None and head.shape[0] >= min(m, int((x > 0).sum())) else top(
        x, m, paths=paths)
    v = x[h[:m]]
    v = v[v > 0]
    if v.shape[0] < 3 or not v[0] > v[-1]:
        return 0.0
    return float((v[0] - v[1]) / (v[0] - v[-1]))


def dense_lead(weights: Mapping[str, float], signals: Mapping[str, F64],
               heads: Mapping[str, I64] | None = None, paths: Paths = None
               ) -> tuple[dict[str, float], str]:
    """The fusion weights for one query: `weights`, dense's raised to the weighted lexical
    channels' sum when its `first_gap` is above each of theirs (module docstring), and a report
    for the receipt."""
    out = dict(weights)
    lexical = [s for s in LEXICAL if s in signals and out.get(s, 1.0) > 0]
    wd = out.get("dense", 1.0)
    if "dense" not in signals or wd <= 0 or not lexical:
        return out, ""
    total = sum(out.get(s, 1.0) for s in lexical)
    if total <= wd:
        return out, ""
    known = {} if heads is None else heads
    gap = {s: first_gap(signals[s], known.get(s), paths=paths) for s in ("dense", *lexical)}
    if not all(gap["dense"] > gap[s] for s in lexical):
        return out, ""
    out["dense"] = total
    sure = ", ".join(f"{s} {gap[s]:.2f}" for s in lexical)
    return out, (f", dense x{total / wd:.2f}: its first hit stands clearer ({gap['dense']:.2f}"
                 f" of its head's range) than {sure}")
