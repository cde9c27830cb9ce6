"""Replay equals live for every learned number a search reads (learning v9, and v10's gate of
a one-word query as a property): generated logs of varied queries (repeated phrases, new
pairings of known words, one-word, stop-word-only and date-only queries, the empty query),
then each stored vector compared bit for bit with the fold of the log, live, as of the last
event, and after reopening from the stored rows."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault import LEDGER_FILE, Ledger
from vault.learning.ledger import learned_of
from vault.learning.topic import content_tokens
from vault.learning.usage import Learned
from vault.notes.text import stem

from .test_ledger_facade import Clock

WORDS = ["tim", "learning", "violin", "language", "career", "high", "points", "assists",
         "john", "game", "the", "of", "august", "2023"]
PROBES = ["", "the of", "in August 2023", "violin", "Which language is Tim learning?",
          "tim learning violin", "career high assists", "john career high points",
          "language tim", "words nobody logged", "high high high",
          "Violins", "learning?", "Tim's", "2023", "August", "the violin of 2023"]  # one word (v10)


def same(a: Learned, b: Learned) -> bool:
    arrays = [(a.warmth, b.warmth), (a.prior, b.prior), (a.free, b.free),
              (a.expansion, b.expansion)]
    return (all(x is not None and y is not None and np.array_equal(x, y) for x, y in arrays)
            and a.cooccurrence.triples() == b.cooccurrence.triples() and a.asked == b.asked
            and a.seq == b.seq)


def run(led: Ledger, clock: Clock, seed: int, sessions: int) -> None:
    rng = random.Random(seed)
    for s in range(sessions):
        sid = f"s{s}"
        led.start_session(sid, clock.t)
        for _ in range(rng.randrange(1, 4)):
            clock.t += rng.uniform(1.0, 3600.0)
            query = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(0, 5)))
            ids = rng.sample(range(12), 6)
            led.on_search(sid, query, [(n, r, 1.0 / (r + 1)) for r, n in enumerate(ids)])
            for n in ids[: rng.randrange(0, 3)]:
                led.on_read(sid, n)
            if rng.random() < 0.3:
                led.on_write(sid, rng.randrange(12, 16), rng.random() < 0.5, ids[1:3])
        if rng.random() < 0.9:
            led.end_session(sid, clock.t, answered=rng.sample(range(12), rng.randrange(0, 2)))


@given(st.integers(0, 10_000), st.integers(1, 8))
@settings(max_examples=25, deadline=None)
def test_every_learned_number_a_search_reads_is_the_fold_of_the_log(
        tmp_path_factory: pytest.TempPathFactory, seed: int, sessions: int) -> None:
    root = tmp_path_factory.mktemp("led")
    clock = Clock()
    led = Ledger.open(root / LEDGER_FILE, clock=clock)
    run(led, clock, seed, sessions)
    ids = list(range(18))
    folded = led.replay()
    assert folded == led.state
    reopened = Ledger.open(root / LEDGER_FILE, clock=clock)
    for query in [None, *PROBES]:
        live = led.learned(ids, query=query)
        again = learned_of(folded, ids, live.clock, led.params, query)
        assert same(live, again), query
        assert same(led.learned(ids, as_of=clock.t, query=query), again), query
        assert same(reopened.learned(ids, query=query), again), query
        assert live.free is not None and live.expansion is not None
        assert (live.expansion >= 0).all() and (live.expansion <= np.maximum(live.prior, 0)
                                                + 1e-12).all()
        one = content_tokens(query or "")
        if len(one) == 1:  # v10: a one-word query's gate: the use words hold it, or the bag
            word, term = stem(one[0]), one[0]
            for k, note in enumerate(ids):
                ns = folded.notes.get(note)
                if ns is not None and ns.q > 0:
                    held = word in ns.use_words or (folded.query_df.get(term, 0) > 0
                                                    and term in ns.use_terms)
                    assert live.prior[k] == (ns.q if held else 0.0), query
    led.close()
    reopened.close()
