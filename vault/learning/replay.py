"""Replay: the learned state a sequence of events produces, and the vectors ranking reads of it.

Pure functions of their arguments (the definition `replay == live` is checked against).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from .formulas import LearningParams, decayed
from .pair_table import PairTable
from .state import Event, LearnedState, apply
from .usage import Learned


def learned_of(
    state: LearnedState, ids: Sequence[int], now: float, params: LearningParams
) -> Learned:
    """The `Learned` vectors of a (replayed) state at time `now`: a pure function of both."""
    warmth = np.zeros(len(ids), dtype=np.float64)
    prior = np.zeros(len(ids), dtype=np.float64)
    for k, note in enumerate(ids):
        ns = state.notes.get(note)
        if ns is not None:
            warmth[k] = decayed(ns.activation, now - ns.as_of, ns.accesses, ns.sessions, params)
            prior[k] = ns.q
    archived = [n for n, ns in state.notes.items() if ns.archived_at is not None]
    edges = PairTable().edges(state, now, params).to_positions(ids, archived)
    return Learned(warmth, prior, edges, seq=state.last_seq, clock=now)


def fold(events: Iterable[Event], params: LearningParams) -> LearnedState:
    """The learned state that these events produce, from nothing (the definition of replay)."""
    state = LearnedState()
    for ev in events:
        apply(state, ev, params)
    return state
