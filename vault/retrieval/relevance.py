"""Whether a search found anything relevant at all: a calibrated floor under the top hits.

Fused scores rank notes against each other; they say nothing about whether the best note is
about the query (a vault with nothing on the topic still has a best note). This stage judges
the query's result as a whole from two pieces of evidence that do not depend on the fusion
weights, so it holds when fusion changes:

- `dense`: the best cosine any eligible note's best chunk reaches, cos(e(q), e(c)) of the
  dense signal (sentence encoders put unrelated texts near 0.0-0.3 and paraphrases above);
- `coverage`: the share of the query's content terms, weighted by their inverse document
  frequency over the vault, that the best-covered of the top `TOP` hits contains in its
  title, aliases, frontmatter title, description, tags and other properties or body, as BM25
  reads them (covered.py: compared by
  stem, the words of a date expression left out).

P(relevant) = σ(b₀ + b₁·dense + b₂·coverage) (logistic calibration in the manner of Platt
1999), or σ(b₀ + b₂·coverage) when the dense signal did not run; `relevant` is P ≥ the floor.
The coefficients and floors are fitted by `bench/bench_abstain.py` (see BENCHMARKS.md,
"Retrieval that can decline", for the files they were fitted on and the held-out numbers);
the floor is chosen to decline at most ~2 % of answerable training questions, so declining is
the exception. Nothing here is random or order-dependent.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..storage.corpus import Corpus
from .covered import coverage, day_words, query_terms
from .signals.bm25 import described

TOP = 3  # hits whose text is checked for the query's terms

# (b0, b_dense, b_coverage) and the floors, fitted by `python -m bench.bench_abstain --fit`
# on its fitting half only (LoCoMo conversations 0-4, even LongMemEval oracle questions, even
# written absent-topic queries; 834 queries), floors set to keep 98 % of the answerable ones;
# refit in session 19 when coverage began to compare stems and to leave date expressions out.
DENSE_MODEL = (-6.253, 12.765, 8.616)
DENSE_FLOOR = 0.19
LEXICAL_MODEL = (-2.583, 0.0, 13.055)
LEXICAL_FLOOR = 0.144


@dataclass(frozen=True)
class Relevance:
    """The judgement on one search: `relevant`, the calibrated probability and the floor it
    was held against, and the evidence (JSON-safe)."""

    relevant: bool
    probability: float
    floor: float
    evidence: dict[str, float | None]

    def to_json(self) -> dict[str, Any]:
        return {"relevant": self.relevant, "probability": round(self.probability, 4),
                "floor": self.floor, "gap": round(self.probability - self.floor, 4),
                "evidence": {k: None if v is None else round(v, 4)
                             for k, v in sorted(self.evidence.items())}}


NOTHING = Relevance(False, 0.0, DENSE_FLOOR, {"dense": None, "coverage": 0.0})


def constants() -> dict[str, Any]:
    """The fitted constants in force (for reports)."""
    return {"DENSE_MODEL": list(DENSE_MODEL), "DENSE_FLOOR": DENSE_FLOOR,
            "LEXICAL_MODEL": list(LEXICAL_MODEL), "LEXICAL_FLOOR": LEXICAL_FLOOR, "TOP": TOP}


def judge(dense: float | None, cover: float) -> Relevance:
    """The calibrated decision from the evidence (module docstring)."""
    if dense is None:
        b0, _, b2 = LEXICAL_MODEL
        z, floor = b0 + b2 * cover, LEXICAL_FLOOR
    else:
        b0, b1, b2 = DENSE_MODEL
        z, floor = b0 + b1 * dense + b2 * cover, DENSE_FLOOR
    p = 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))
    return Relevance(p >= floor, p, floor, {"dense": dense, "coverage": cover})


def judge_head(corpus: Corpus, query: str, dense: npt.NDArray[np.float64] | None,
               eligible: npt.NDArray[np.bool_], head: Sequence[int],
               frequency: Callable[[Sequence[str]], Sequence[int]],
               timed: npt.NDArray[np.float64] | None = None) -> Relevance:
    """`judge` for a search's `head` positions: the best eligible dense cosine (None without
    the dense signal) and the query's coverage by the head's notes (`frequency`: the index's
    document frequency of terms). With `timed`, the time channel of a query that asks for a
    time and nothing else (topicless.py), the judgement is whether a head note lies in that
    time (t = 1): its words are frame words, so coverage and dense say nothing."""
    if not head:
        return NOTHING
    if timed is not None:
        best_t = max(float(timed[i]) for i in head)
        return Relevance(best_t >= 1.0, best_t, 1.0, {"time": best_t})
    terms, days = query_terms(query), day_words(query)
    best = float(np.max(dense, where=eligible, initial=0.0)) if dense is not None else None
    cover = coverage(terms, frequency(terms), len(corpus),
                     ["\n".join([corpus.titles[i], *corpus.aliases[i],
                                 described(corpus.frontmatter[i], corpus.titles[i],
                                           corpus.bodies[i]), corpus.bodies[i]])
                      for i in head], days, frequency(days) if days else ())
    return judge(best, cover)
