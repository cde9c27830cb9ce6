"""The channels the plain baselines are made of (BM25 and dense, as the engine computes them),
read for one query whatever weights the engine under test was given.

The engine runs only the channels it weights above 0, so `--weights dense=0` leaves no dense
signal in its score; the baselines then come from the same engine with BM25 and dense back at
their default weights (one more score per query, only in that case). A channel the engine
cannot compute at all (no encoder) scores nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import date

import numpy as np
import numpy.typing as npt

from vault import DEFAULT_WEIGHTS, Corpus, SearchEngine

CHANNELS = ("bm25", "dense")
F64 = npt.NDArray[np.float64]


class Baselines:
    """`signals(score, corpus, query)`: the CHANNELS for a query `engine` has scored."""

    def __init__(self, engine: SearchEngine) -> None:
        self.engine = engine
        self._on: SearchEngine | None = None

    def signals(self, signals: Mapping[str, F64], corpus: Corpus, query: str,
                now: date | None = None) -> dict[str, F64]:
        if any(c not in signals and self.engine.params.weight(c) == 0 for c in CHANNELS):
            if self._on is None:
                weights = {**self.engine.params.weights, **{c: DEFAULT_WEIGHTS[c]
                                                            for c in CHANNELS}}
                self._on = self.engine.with_params(replace(self.engine.params, weights=weights))
            signals = dict(self._on.score(corpus, query, now=now).signals)
        return {c: signals.get(c, np.zeros(len(corpus))) for c in CHANNELS}
