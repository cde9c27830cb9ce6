"""Replay: the learned state a sequence of events produces, and the vectors ranking reads of it.

Pure functions of their arguments (the definition `replay == live` is checked against).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from .damage import ROW_DAMAGE, damaged_event
from .evidence import passed_score
from .expansion import Weighted, coverage, query_words, word_weights
from .formulas import LearningParams, decayed
from .pair_table import PairTable
from .state import Event, LearnedState, NoteState, apply
from .topic import NO_HELD, Held, Phrases, gate_of, query_terms, weights
from .usage import Learned
from .vectors import NoteVectors

WHOLE = 1.0 - 1e-9  # a gate this close to 1 is 1 (its hit and total are sums of the same weights)


def use_gate(ns: NoteState, phrases: Phrases, note: int | None = None) -> float:
    """The topic gate of a positive score: the share of the query its use was about (topic.py
    `gate_of` of its use bags), the g of `prior_of`, `free_of` and `expansion_of` alike;
    `note`: the note's id, whose own text may hold the query's new words (v19)."""
    return gate_of(phrases, ns.use_terms, words=ns.use_words, note=note)


def whole_of(ns: NoteState, weighted: Phrases | None) -> bool:
    """Whether the note's learned score is wholly about the query: its strict topic gate is 1,
    the gate of the bag its sign came from without v19's exemption for a note whose own text
    holds the query's new words (every phrase of the query in the bag, or for a use bag a new
    pairing of its use words; the query's new pairings and new words count against a skip
    bag as against a use bag). Only a lift wholly about the query may pass a note the
    learning-free ranking placed above it (v24), and only a pass-over wholly about it lets a
    lift that is not pass the note (v25; vault/retrieval/scope.py `hold_unlicensed`,
    vault/retrieval/learned_stages.py); False for q = 0 and without a query."""
    if weighted is None or ns.q == 0.0:
        return False
    if ns.q > 0.0:
        return use_gate(ns, weighted) >= WHOLE
    return gate_of(weighted, ns.skip_terms) >= WHOLE


def prior_of(ns: NoteState, weighted: Phrases | None, note: int | None = None) -> float:
    """The note's learned score as it acts on a query whose phrase weights are `weighted`
    (topic.py `weights`): q times the gate of the bag its sign came from; q itself when no
    query is given. A query's new pairings of known words dilute the gate of a lift only
    (v9, topic.py): a note passed over for a query's phrases is demoted on them as before
    (counted on the demotion too, LoCoMo conversations 5-10 lost unrelated MRR -0.0049 ->
    -0.0064, NOTES-LRN9.md). `note`: its id (`use_gate`)."""
    if weighted is None or ns.q == 0.0:
        return ns.q
    if ns.q > 0.0:
        return ns.q * use_gate(ns, weighted, note)
    return ns.q * gate_of(weighted, ns.skip_terms, dilute=False)


def free_of(ns: NoteState, weighted: Phrases | None,
            words: Weighted | None = None, params: LearningParams | None = None,
            note: int | None = None) -> float:
    """The part of a positive learned score its topic gate left out, as it acts on this query:
    q (1 - g) c, g the topic gate (phrases, topic.py) and c the share of the query's words the
    note's use words hold (`coverage`, the expansion channel's: words weighted by their rarity
    in the query log, a word no logged query held counting against the match). What the
    note's use says about it beyond its topic (v5; the pipeline applies it only below the
    notes the query names, vault/retrieval/scope.py `free_prior_stage`), in proportion to how
    much of this query the note was used for (v8): a question that shares no word with the
    queries a note was used for leaves it untouched, as the expansion channel does. Before
    v8 it acted whole on every query, and it was the largest learned cost to LoCoMo's
    unrelated questions: turns used for other questions passed the evidence for a question
    they shared no word with but the speaker's name (NOTES-LRN.md).
    For a negative score, the confident pass-over score of evidence.py (`passed_score`,
    <= 0): a note passed over so often that even the optimistic end of its posterior use rate
    is below the prior rate is passed over whatever is asked (the pipeline demotes by it only
    with `weights.passed`, scope.py; NOTES-L6). 0 for q = 0 and without a query (`prior_of`
    is then ungated). `note`: its id (`use_gate`)."""
    if weighted is None or ns.q == 0.0:
        return 0.0
    if ns.q < 0.0:
        return passed_score(ns.used, ns.skipped, params or LearningParams())
    if words is None or not ns.use_words:
        return 0.0
    return ns.q * (1.0 - use_gate(ns, weighted, note)) * coverage(words, ns.use_words)


def expansion_of(ns: NoteState, weighted: Weighted | None,
                 phrases: Phrases | None = None, note: int | None = None) -> float:
    """The expansion channel's value q g c (expansion.py): q times the topic gate g of the
    query's `phrases` (topic.py) times the share c of the query's words the note's use words
    hold; 0 for q <= 0, no query, no words or no phrases. The channel carries only the share
    of the score the gate gives this query (v9); the rest, q (1 - g) c, acts once, as the
    multiplicative `free_of`. `note`: its id (`use_gate`)."""
    if weighted is None or phrases is None or ns.q <= 0.0 or not ns.use_words:
        return 0.0
    return ns.q * use_gate(ns, phrases, note) * coverage(weighted, ns.use_words)


def word_query(state: LearnedState, query: str | None) -> Weighted | None:
    """The query's word weights against the state's query log (None without a query)."""
    if query is None:
        return None
    return word_weights(query_words(query), state.word_df, state.searches)


def query_weights(state: LearnedState, query: str | None,
                  held: Held = NO_HELD) -> Phrases | None:
    """The query's phrase weights against the state's query log (None without a query);
    `held`: the stems of the query's words some note holds, each with the notes holding it
    (topic.py `held_words`, v18-v19)."""
    if query is None:
        return None
    return weights(query_terms(query), state.query_df, state.searches, state.word_df, held)


def learned_of(
    state: LearnedState, ids: Sequence[int], now: float, params: LearningParams,
    query: str | None = None, held: Held = NO_HELD,
) -> Learned:
    """The `Learned` vectors of a (replayed) state at time `now` for `query` (its prior gated
    by topic.py; ungated without one): a pure function of its arguments."""
    weighted = query_weights(state, query, held)
    words = word_query(state, query)
    expansion = np.zeros(len(ids), dtype=np.float64)
    warmth = np.zeros(len(ids), dtype=np.float64)
    prior = np.zeros(len(ids), dtype=np.float64)
    free = np.zeros(len(ids), dtype=np.float64)
    whole = np.zeros(len(ids), dtype=np.bool_)
    for k, note in enumerate(ids):
        ns = state.notes.get(note)
        if ns is not None:
            warmth[k] = decayed(ns.activation, now - ns.as_of, ns.accesses, ns.sessions, params)
            prior[k] = prior_of(ns, weighted, note)
            free[k] = free_of(ns, weighted, words, params, note)
            expansion[k] = expansion_of(ns, words, weighted, note)
            whole[k] = whole_of(ns, weighted)
    archived = [n for n, ns in state.notes.items() if ns.archived_at is not None]
    edges = PairTable().edges(state, now, params).to_positions(ids, archived)
    return Learned(warmth, prior, edges, seq=state.last_seq, clock=now, free=free,
                   expansion=expansion, asked=NoteVectors().asked(state.notes, ids),
                   whole=whole)


def fold(events: Iterable[Event], params: LearningParams,
         start: LearnedState | None = None) -> LearnedState:
    """The learned state that these events produce, from nothing or from `start` (a compacted
    log's base, compact.py; folded into in place): the definition of replay."""
    state = LearnedState() if start is None else start
    for ev in events:
        try:
            apply(state, ev, params)
        except ROW_DAMAGE as exc:  # a payload of the wrong shape: LedgerError naming it
            raise damaged_event(ev.seq, exc) from exc
    return state
