"""Query-log document expansion (learning v6, vault/learning/expansion.py): the stems of the
queries a note was used for, weighed by the query log, replayed equal to live."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault import LEDGER_FILE, Ledger, Vault
from vault.learning.expansion import asking_queries, coverage, query_words, word_weights
from vault.learning.ledger import learned_of
from vault.learning.replay import expansion_of, free_of, prior_of, query_weights, word_query
from vault.learning.rewards import Event
from vault.learning.state import LearnedState, NoteState
from vault.learning.topic import query_terms

from .test_ledger_facade import Clock


def search(seq: int, query: str, notes: list[int]) -> Event:
    return Event(seq, float(seq), "search", "s", None,
                 {"query": query, "shown": [[n, r, 1.0] for r, n in enumerate(notes)]})


def test_query_words_are_bm25_stems_without_stop_words() -> None:
    assert query_words("Why did Jon start his dance studios?") == ["danc", "jon", "start",
                                                                  "studio"]
    assert query_words("what is the") == []


def test_a_query_s_date_expressions_are_no_learned_words_or_phrases() -> None:
    """v8: a time the question names is matched as a time, never as words (notes/clocks.py
    `untimed`), in the learned words and the topic gate's phrases alike."""
    assert query_words("What happened to John's job in August 2023?") == ["happen", "job",
                                                                         "john"]
    assert query_terms("What did Maria do last weekend before April 10, 2023?") == [
        "maria"]
    assert "august" not in query_words("the week before August 3, 2023")


def test_a_note_used_for_a_dated_question_is_not_lifted_by_the_date_alone(
        tmp_path: Path) -> None:
    """LoCoMo (NOTES-LRN.md): a turn used for "What happened to John's job in August 2023?"
    passed the evidence of "What did John do the week before August 3, 2023 involving his
    kids?" through "august" and "2023" (the expansion channel) and its whole score (the
    topic-free part); neither acts on a question that shares only the date."""
    clock = Clock()
    (tmp_path / ".rmh").mkdir()
    ledger = Ledger.open(tmp_path / ".rmh" / LEDGER_FILE, clock=clock)
    with Vault.open(tmp_path, usage=ledger) as v:
        v.write("John.md", "John.\n")
        v.write("Layoff.md", "[[John]] lost his job at the firm; a rough month.\n")
        v.write("Kids.md", "[[John]] took his kids to the lake for a week.\n")
        for s in range(2):
            ledger.start_session(f"s{s}", clock.t)
            v.search("What happened to John's job in August 2023?", session=f"s{s}")
            v.read("Layoff", session=f"s{s}")
            clock.t += 60.0
            ledger.end_session(f"s{s}", clock.t)
        ids = v.corpus().ids
        layoff = ids.index(v.resolve("Layoff"))
        kids = "What did Maria do the week before August 3, 2023 involving her kids?"
        got = ledger.learned(ids, query=kids)
        assert got.expansion is not None and got.free is not None
        assert got.expansion[layoff] == 0.0 and got.free[layoff] == 0.0
        assert got.prior[layoff] == 0.0
        again = ledger.learned(ids, query="Why did John's job end?")  # its own topic: lifted
        assert again.expansion is not None and again.expansion[layoff] > 0.0
    ledger.close()


def test_unlogged_words_dilute_and_logged_words_weigh_by_rarity() -> None:
    df = {"danc": 1, "jon": 4}
    pairs, total = word_weights(["jon", "danc", "rome"], df, 4)
    assert [w for w, _ in pairs] == ["danc", "jon"]
    assert [x for _, x in pairs] == pytest.approx([math.log(5.0), math.log(2.0)])
    assert total == pytest.approx(math.log(5.0) * 2 + math.log(2))  # "rome": ln(1 + N)
    assert coverage((pairs, total), {"danc": 1, "jon": 2}) == pytest.approx(
        (math.log(5.0) + math.log(2)) / total)
    assert coverage((pairs, total), {}) == 0.0
    assert coverage(word_weights([], df, 4), {"jon": 1}) == 0.0


def test_a_note_is_credited_with_the_query_it_was_read_from() -> None:
    events = [search(1, "dance studio offer", [7, 8]), search(2, "trip to rome", [7, 9]),
              Event(3, 3.0, "read", "s", 7, {}),
              Event(4, 4.0, "write", "s", 20, {"linked": [8], "created": True})]
    asked = asking_queries(events)
    assert asked[7] == ["trip to rome"]  # read after the second search showed it
    assert asked[8] == ["dance studio offer"]  # cited: the last search that showed it
    assert asked[9] == ["trip to rome"]  # never acted on: every query that showed it


@given(st.floats(-0.25, 1.0), st.lists(st.sampled_from(["jon", "danc", "rome", "gina"]),
                                       max_size=4),
       st.dictionaries(st.sampled_from(["jon", "danc", "rome"]), st.integers(1, 5)))
@settings(max_examples=200, deadline=None)
def test_the_channel_value_is_bounded_and_zero_without_use_or_shared_words(
        q: float, words: list[str], bag: dict[str, int]) -> None:
    state = LearnedState(searches=5, word_df={"jon": 3, "danc": 1},
                         query_df={"jon": 2, "danc": 1, "danc jon": 1})
    ns = NoteState(q=q, use_words=bag, use_terms={"jon": 1, "danc jon": 1})
    query = " ".join(words)
    x = expansion_of(ns, word_query(state, query), query_weights(state, query))
    assert 0.0 <= x <= max(q, 0.0)
    if q <= 0 or not set(words) & set(bag) & {"jon", "danc"}:
        assert x == 0.0
    assert expansion_of(ns, None) == 0.0
    assert expansion_of(ns, word_query(state, query)) == 0.0  # no phrases: no gate, nothing


@given(st.floats(0.01, 1.0), st.lists(st.sampled_from(
    ["john", "career", "high", "assists", "points", "game", "violin", "tim"]), max_size=6),
    st.dictionaries(st.sampled_from(["career high", "game john", "high points", "tim violin"]),
                    st.integers(1, 3)),
    st.dictionaries(st.sampled_from(["john", "career", "high", "point", "game", "assist"]),
                    st.integers(1, 3)))
@settings(max_examples=300, deadline=None)
def test_the_use_a_query_shares_acts_once_the_channel_holding_only_the_gated_share(
        q: float, words: list[str], terms: dict[str, int], used: dict[str, int]) -> None:
    """v9 (NOTES-LRN9.md): the word coverage c of a note's use acts once. The channel
    carries the share q g c the topic gate gives the query, the multiplicative free part the
    rest q (1 - g) c, so together q c; before v9 the channel carried q c and the free part
    q (1 - g) c on top, and a turn used for a neighbouring question was lifted twice over."""
    state = LearnedState(searches=8, query_df={"career high": 2, "game john": 2,
                                               "high points": 1, "tim violin": 1},
                         word_df={"john": 4, "career": 2, "high": 2, "point": 1, "game": 2,
                                  "assist": 1, "tim": 3, "violin": 1})
    ns = NoteState(q=q, use_terms=terms, use_words=used)
    query = " ".join(words)
    phrases, ws = query_weights(state, query), word_query(state, query)
    assert phrases is not None and ws is not None
    x, free, prior = expansion_of(ns, ws, phrases), free_of(ns, phrases, ws), prior_of(ns, phrases)
    assert x + free == pytest.approx(q * coverage(ws, used))
    assert x <= prior + 1e-12  # the channel never carries more than the gated prior


def test_a_neighbouring_question_in_known_words_gets_less_than_the_full_lift() -> None:
    """The LoCoMo case (NOTES-GATE.md): a turn used for John's career-high in points, asked
    about his career-high in assists, a word the log knows from another question. v8 gave it
    gate 1 (the new phrase "high assists" left out) and the channel q c on top of the free
    part; v9 counts the new pairing against the gate and the channel holds only q g c."""
    points = "What kind of game did John have a career-high in points in?"
    assists = "What kind of game did John have a career-high in assists in?"
    state = LearnedState(searches=10, query_df={t: 1 for t in query_terms(points)},
                         word_df={w: 1 for w in [*query_words(points), "assist"]})
    ns = NoteState(q=0.8, use_terms={t: 1 for t in query_terms(points)},
                   use_words={w: 1 for w in query_words(points)})
    phrases, ws = query_weights(state, assists), word_query(state, assists)
    assert phrases is not None and ws is not None
    g, c = prior_of(ns, phrases) / ns.q, coverage(ws, ns.use_words)
    assert g == pytest.approx(4 / 5) and 0.0 < c < 1.0  # four shared phrases, one new pairing
    assert expansion_of(ns, ws, phrases) == pytest.approx(0.8 * g * c)
    assert expansion_of(ns, ws, phrases) + free_of(ns, phrases, ws) == pytest.approx(0.8 * c)
    same = query_weights(state, points)
    assert same is not None and prior_of(ns, same) == pytest.approx(0.8)  # its own question


def test_live_equals_replay_and_the_bag_survives_reopening(tmp_path: Path) -> None:
    clock = Clock()
    (tmp_path / ".rmh").mkdir()
    ledger = Ledger.open(tmp_path / ".rmh" / LEDGER_FILE, clock=clock)
    with Vault.open(tmp_path, usage=ledger) as v:
        v.write("Studio.md", "Jon opened a place where people learn to move.\n")
        v.write("Rome.md", "Jon spent a week in Rome in spring.\n")
        v.write("Cats.md", "Gina's cats sleep all day.\n")
        for s in range(2):
            ledger.start_session(f"s{s}", clock.t)
            v.search("Jon dance studio opened", session=f"s{s}")
            v.read("Studio", session=f"s{s}")
            v.search("Jon spring Rome", session=f"s{s}")
            clock.t += 60.0
            ledger.end_session(f"s{s}", clock.t)
        studio = v.resolve("Studio")
        assert ledger.state.notes[studio].use_words == {"danc": 2, "jon": 2, "open": 2,
                                                        "studio": 2}
        ids = v.corpus().ids
        for query in ("What does Jon teach at the dance studio?", "Gina's cats"):
            live = ledger.learned(ids, query=query)
            again = learned_of(ledger.replay(), ids, live.clock, ledger.params, query)
            assert live.expansion is not None and again.expansion is not None
            assert np.array_equal(live.expansion, again.expansion)
        on = ledger.learned(ids, query="What does Jon teach at the dance studio?").expansion
        off = ledger.learned(ids, query="Gina's cats").expansion
        assert on is not None and off is not None
        assert on[ids.index(studio)] > 0 and not off.any()  # no shared word: nothing
        hit = v.search("What does Jon teach at the dance studio?", learn=False).hits[0]
        assert hit.title == "Studio" and hit.receipt["signals"]["learned"]["contribution"] > 0
        before = v.search("What does Jon teach at the dance studio?", as_of=0.0)
        assert "learned" not in before.stages  # nothing learned before the log
    ledger.close()
    reopened = Ledger.open(tmp_path / ".rmh" / LEDGER_FILE, clock=clock)
    assert reopened.state == reopened.replay()  # stored rows (bags, word counts) = the fold
    assert reopened.state.word_df["studio"] == 2 and reopened.state.notes[studio].use_words
    reopened.close()
