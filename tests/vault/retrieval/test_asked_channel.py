"""The query-log neighbours channel (vault/retrieval/asked_channel.py): x = q g(max cos)."""

from __future__ import annotations

import numpy as np
import pytest

from bench.synthetic_encoder import SyntheticEncoder
from vault.learning.asked import gate
from vault.retrieval.asked_channel import asked_channel, asked_values


def test_each_note_gets_its_score_times_the_gate_of_its_closest_kept_query() -> None:
    enc = SyntheticEncoder()
    query = "dance studio jon opened"
    kept = ("jon opened a dance studio", "gina cats roof")
    asked = ((1, 0.5, kept), (3, 0.8, ("gina cats roof",)))
    x = asked_values(enc, None, query, asked, 5, 0.5)
    qv, kv = enc.encode([query])[0], enc.encode(list(kept))
    best = float(np.max(kv.astype(np.float64) @ qv.astype(np.float64)))
    assert x[1] == pytest.approx(0.5 * float(gate(best, 0.5)), abs=1e-6) and x[1] > 0
    assert x[3] == 0.0 and x[[0, 2, 4]].tolist() == [0.0, 0.0, 0.0]  # below the floor
    with pytest.raises(ValueError, match="position 9"):
        asked_values(enc, None, query, ((9, 0.5, kept),), 5, 0.5)


def test_the_channel_joins_fusion_only_above_the_floor_and_with_an_encoder() -> None:
    sig: dict[str, np.ndarray] = {}
    weights: dict[str, float] = {}
    asked = ((0, 1.0, ("jon opened a dance studio",)),)
    assert asked_channel(sig, weights, None, None, "jon", asked, 1.0, 0.5, 2) == \
        "skipped: no encoder"
    enc = SyntheticEncoder()
    report = asked_channel(sig, weights, enc, None, "gina cats", asked, 1.0, 0.5, 2)
    assert report.startswith("skipped: no kept query") and not sig
    report = asked_channel(sig, weights, enc, None, "jon opened a dance studio", asked, 0.5,
                           0.5, 2)
    assert report == "ran (1 note, weight 0.5, floor 0.5)"  # "1 notes" before HOUSE40
    assert sig["asked"][0] > 0.99 and weights["asked"] == pytest.approx(0.5 * sig["asked"][0])


def test_the_walk_shares_the_gate_among_the_kept_queries_that_pass() -> None:
    enc = SyntheticEncoder()
    query = "jon opened a dance studio"
    asked = ((0, 1.0, ("jon opened a dance studio",)), (1, 1.0, ("jon opened a dance studio!",)),
             (2, 1.0, ("gina cats roof",)))
    plain = asked_values(enc, None, query, asked, 3, 0.5)
    walk = asked_values(enc, None, query, asked, 3, 0.5, walk=True)
    g = plain[:2]
    assert g.min() > 0.5 and plain[2] == 0.0  # both rewordings pass, the cats do not
    assert walk[:2] == pytest.approx(g * g / g.sum()) and walk[2] == 0.0
    alone = asked_values(enc, None, query, asked[:1], 3, 0.5, walk=True)
    assert alone[0] == pytest.approx(plain[0])  # one passing query keeps its whole gate
