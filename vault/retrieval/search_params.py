"""The search's configuration: the fused signals, the default weight of every signal and
stage, and `SearchParams` (rmh.toml [search] and [rerank]); the engine is pipeline.py."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..learning.asked import FLOOR, WALK
from .fusion import RRF_DEPTH, RRF_K
from .signals.dense import DenseParams
from .signals.graph import ALPHA, BETA, PUSH_ABOVE, TOP_SEEDS

SIGNALS = ("bm25", "dense", "conjunctive", "graph")  # the fused, query-dependent signals
# the other weights are those of the post-fusion stages 4-6 and the learned channels
# Defaults chosen on LoCoMo and LongMemEval-S (BENCHMARKS.md); configurable in rmh.toml.
DEFAULT_WEIGHTS: Mapping[str, float] = {
    "bm25": 0.5,
    "dense": 1.0,
    "conjunctive": 1.0,
    "graph": 0.5,
    "warmth": 0.0,  # off: measured through rmh serve, warmth cost unrelated MRR (BENCHMARKS.md)
    "context": 0.6,
    "named": 0.5,
    "protect": 1.0,  # stage 5b ratio R (stages.py); 0 = off
    "learned": 0.5,  # the learned expansion channel, fused (vault/learning/expansion.py)
    "asked": 0.0, "asked_floor": FLOOR, "asked_walk": WALK,  # query-log neighbours (asked.py)
    "couse": 0.0, "spread": 0.0,  # off: query-dependent association (association.py)
    "passed": 0.0,  # demotion of notes passed over more than used (scope.passed_over_stage)
    "when": 1.0,  # the time the query names lifts the notes dated in it (when.py)
}
PRIOR_SCALE = 0.2


@dataclass(frozen=True)
class SearchParams:
    """Ranking configuration (from rmh.toml [search] and [rerank]); weights merge defaults."""

    weights: Mapping[str, float] = field(default_factory=dict)
    rrf_k: int = RRF_K
    rrf_depth: int = RRF_DEPTH  # notes ranked per signal in fusion (0 = all)
    redundancy_head: int = 0  # the conjunctive gate's m (fusion.gate); off: cost LoCoMo recall
    calibrate: bool = False  # fusion weights from pseudo-queries (calibration.py; BENCHMARKS.md)
    cloze: bool = False  # the conjunctive weight from the vault's cloze balance (cloze.py)
    second_pass: bool = True  # the passage pass over the head (second_pass.py)
    rerank_top_n: int = 15
    rerank_keep: int = 10
    normalize: str = "range"  # fusion.NORMALIZE: "max" was the default before session 32
    alpha: float = ALPHA
    beta: float = BETA
    top_seeds: int = TOP_SEEDS
    push_above: int = PUSH_ABOVE  # notes from which PageRank is pushed, not iterated (0: never)
    prior_scale: float = PRIOR_SCALE
    scope: int = 5  # warmth and co-occurrence act near the query's top hits (scope.py; 0: all)
    max_tokens: int = 256
    # Dense units (chunks) embedded per note: the first 64 windows (~16k tokens, ~60 KB of
    # prose) is far above any note of the benchmark vaults and bounds what one huge note costs
    # the encoder (bench/bench_bad_input.py). 0 = no cap.
    max_note_units: int = 64
    dense: DenseParams = field(default_factory=DenseParams)  # layout: exact or IVF, compaction
    include_archived: bool = False

    def weight(self, signal: str) -> float:
        if signal in self.weights:
            return float(self.weights[signal])
        return DEFAULT_WEIGHTS.get(signal, 1.0)
