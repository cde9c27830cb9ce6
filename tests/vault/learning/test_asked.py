"""Query-log neighbours (learning v7, vault/learning/asked.py): the text of the last queries a
used note was used for, bounded, replayed equal to live, and a channel that fires on a
paraphrase of a used query and not on a question about something else."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.synthetic_encoder import SyntheticEncoder
from vault import LEDGER_FILE, LearningParams, Ledger, SearchEngine, SearchParams, Vault
from vault.learning.asked import add_queries, gate, recent
from vault.learning.ledger import learned_of
from vault.learning.replay import fold
from vault.learning.rewards import Event

from .test_ledger_facade import Clock

# a paraphrase's words mapped onto the used question's: what a sentence encoder does for
# meaning, done by a table so that the test knows which questions mean the same
SAME = {"established": "founded", "employer": "organisation", "when": "year", "set": "founded"}
STOP = {"in", "which", "the", "was", "for", "s", "do", "is", "a"}


class MeaningEncoder(SyntheticEncoder):
    """The synthetic bag-of-words encoder over content words, synonyms folded (SAME)."""

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return super().encode([" ".join(SAME.get(w, w) for w in re.findall(r"\w+", t.lower())
                                        if w not in STOP) for t in texts])


@given(st.lists(st.tuples(st.lists(st.sampled_from(["a", "b", "c", "d", " ", "e f"]),
                                   max_size=3), st.integers(1, 50)), max_size=30),
       st.integers(1, 4))
@settings(max_examples=200, deadline=None)
def test_the_kept_queries_are_the_newest_within_the_cap(
        adds: list[tuple[list[str], int]], cap: int) -> None:
    kept: dict[str, int] = {}
    last: dict[str, int] = {}
    for queries, stamp in adds:
        add_queries(kept, queries, stamp, cap)
        for q in {q.strip() for q in queries} - {""}:
            last[q] = max(stamp, last.get(q, stamp))
        assert len(kept) <= cap and "" not in kept
    # every kept query carries its newest stamp, and nothing dropped is newer than a kept one
    assert all(kept[q] == last[q] for q in kept)
    dropped = set(last) - set(kept)
    if dropped and kept:
        assert max(last[q] for q in dropped) <= min(kept.values())
    assert list(recent(kept)) == sorted(kept, key=lambda q: (-kept[q], q))


def test_the_gate_is_zero_below_the_floor_and_one_at_identity() -> None:
    g = gate([-1.0, 0.5, 0.7, 0.85, 1.0], 0.7)
    assert g.tolist() == pytest.approx([0.0, 0.0, 0.0, 0.5, 1.0])
    with pytest.raises(ValueError, match="floor"):
        gate([0.5], 1.0)


def search(seq: int, query: str, notes: list[int], session: str) -> Event:
    return Event(seq, float(seq), "search", session, None,
                 {"query": query, "shown": [[n, r, 1.0] for r, n in enumerate(notes)]})


def test_a_used_note_keeps_the_last_queries_it_was_used_for() -> None:
    params = LearningParams(queries_cap=3)
    events: list[Event] = []
    for s in range(5):
        base = 10 * s
        events += [search(base + 1, f"question {s} about the studio", [7, 8], f"s{s}"),
                   Event(base + 2, base + 2.0, "read", f"s{s}", 7, {}),
                   Event(base + 3, base + 3.0, "end", f"s{s}", None, {})]
    state = fold(events, params)
    assert state.notes[7].use_queries == {"question 2 about the studio": 23,
                                          "question 3 about the studio": 33,
                                          "question 4 about the studio": 43}
    assert not state.notes[8].use_queries  # shown in a list the agent used: passed over


def test_the_channel_fires_on_a_paraphrase_and_replay_equals_live(tmp_path: Path) -> None:
    clock = Clock()
    (tmp_path / ".rmh").mkdir()
    ledger = Ledger.open(tmp_path / ".rmh" / LEDGER_FILE, clock=clock)
    # the word channel off, so what lifts the note is the query-log neighbours alone
    params = SearchParams(weights={"asked": 1.0, "learned": 0.0, "asked_floor": 0.7})

    def engine(own: object) -> SearchEngine:
        return SearchEngine(params, encoder=MeaningEncoder())

    used = "In which year was the organisation Ravi Lindqvist works for founded?"
    with Vault.open(tmp_path, engine=engine, usage=ledger) as v:
        v.write("Acme.md", "Acme Corp was founded in 1921 in Oslo. Ravi Lindqvist works there.\n")
        v.write("Ravi.md", "Ravi Lindqvist is an engineer at Acme Corp.\n")
        v.write("Cats.md", "Gina's cats sleep all day on the warm roof.\n")
        for s in range(2):
            ledger.start_session(f"s{s}", clock.t)
            v.search(used, session=f"s{s}")
            v.read("Acme", session=f"s{s}")
            clock.t += 60.0
            ledger.end_session(f"s{s}", clock.t)
        acme = v.resolve("Acme")
        assert list(ledger.state.notes[acme].use_queries) == [used]
        ids = v.corpus().ids
        paraphrase = "When was Ravi Lindqvist's employer established?"
        unrelated = "Where do Gina's cats sleep?"
        for query in (paraphrase, unrelated):
            live = ledger.learned(ids, query=query)
            again = learned_of(ledger.replay(), ids, live.clock, ledger.params, query)
            assert live.asked == again.asked == ((ids.index(acme), live.asked[0][1], (used,)),)
        on = v.search(paraphrase, learn=False)
        assert on.stages["asked"].startswith("ran (1 note,")
        credited = {h.title: h.receipt["signals"].get("asked", {}).get("contribution", 0.0)
                    for h in on.hits}
        assert credited["Acme"] > 0 and credited.get("Ravi", 0.0) == 0.0
        off = v.search(unrelated, learn=False)
        assert off.stages["asked"].startswith("skipped: no kept query within similarity")
        assert all("asked" not in h.receipt["signals"] for h in off.hits)
        assert "asked" not in v.search(paraphrase, as_of=0.0).stages  # nothing learned then
    ledger.close()
    reopened = Ledger.open(tmp_path / ".rmh" / LEDGER_FILE, clock=clock)
    assert reopened.state == reopened.replay()  # stored rows (kept queries) = the fold
    assert list(reopened.state.notes[acme].use_queries) == [used]
    reopened.close()


class CountingEncoder(MeaningEncoder):
    """MeaningEncoder that records every text it is asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.asked.extend(texts)
        return super().encode(texts)


def test_a_search_embeds_its_query_once_for_dense_and_the_channel(tmp_path: Path) -> None:
    clock = Clock()
    (tmp_path / ".rmh").mkdir()
    ledger = Ledger.open(tmp_path / ".rmh" / LEDGER_FILE, clock=clock)
    encoder = CountingEncoder()
    params = SearchParams(weights={"asked": 1.0, "asked_floor": 0.7})
    used = "In which year was the organisation Ravi Lindqvist works for founded?"
    with Vault.open(tmp_path, engine=lambda own: SearchEngine(params, encoder=encoder),
                    usage=ledger) as v:
        v.write("Acme.md", "Acme Corp was founded in 1921 in Oslo. Ravi Lindqvist works there.\n")
        v.write("Cats.md", "Gina's cats sleep all day on the warm roof.\n")
        ledger.start_session("s0", clock.t)
        v.search(used, session="s0")
        v.read("Acme", session="s0")
        clock.t += 60.0
        ledger.end_session("s0", clock.t)
        paraphrase = "When was Ravi Lindqvist's employer established?"
        encoder.asked.clear()
        result = v.search(paraphrase, learn=False)
        assert "dense" in result.stages and result.stages["asked"].startswith("ran")
        assert encoder.asked.count(paraphrase) == 1  # the dense signal's vector, shared
    ledger.close()
