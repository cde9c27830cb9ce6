"""The learned score acts on the queries its evidence was about (vault/learning/topic.py)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vault import Ledger
from vault.learning.topic import (
    add_terms,
    content_tokens,
    gate,
    gate_of,
    held_words,
    query_terms,
    weights,
)

words = st.lists(st.sampled_from(["ravi lindqvist", "year born", "press aalto", "born"]),
                 max_size=6)


def test_query_phrases() -> None:
    assert query_terms("When was Ravi Lindqvist's employer established?") == sorted(
        ["ravi lindqvist", "lindqvist employer", "employer established"])
    assert query_terms("Billing?") == ["billing"] and query_terms("the of") == []


def test_gate_golden() -> None:
    df = {"year organisation": 10, "works founded": 10, "ravi lindqvist": 1,
          "felix ferro": 1, "mira ferro": 1}
    bag = {"year organisation": 1, "organisation ravi": 1, "ravi lindqvist": 1,
           "lindqvist works": 1, "works founded": 1}
    rare, common = math.log1p(10 / 1), math.log1p(10 / 10)
    # the paraphrase: its new phrases ("employer established") are unknown to the log
    assert gate(query_terms("When was Ravi Lindqvist's employer established?"), bag, df, 10) \
        == pytest.approx(1.0)
    # only a common phrase shared: a small share
    assert gate(["works founded", "mira ferro"], bag, df, 10) == pytest.approx(
        common / (common + rare))
    # names share words, not phrases: a question about Mira Ferro is not about Felix Ferro
    assert gate(query_terms("Is Mira Ferro older than Felix Brandt?"), {"felix ferro": 2},
                df, 10) == 0.0
    assert gate([], bag, df, 10) == 0.0 and gate(["ravi lindqvist"], {}, df, 10) == 0.0


@given(words, st.dictionaries(st.sampled_from(["ravi lindqvist", "born"]), st.integers(1, 9)),
       st.dictionaries(st.sampled_from(["ravi lindqvist", "year born", "press aalto", "born"]),
                       st.integers(1, 9)))
def test_gate_is_a_share(terms: list[str], bag: dict[str, int], df: dict[str, int]) -> None:
    g = gate(terms, bag, df, 20)
    assert 0.0 <= g <= 1.0
    assert gate(terms, {**bag, **{t: 1 for t in terms}}, df, 20) >= g  # more about it: more


def test_bags_are_capped_most_frequent_first() -> None:
    bag: dict[str, int] = {}
    add_terms(bag, ["b", "a", "c"], cap=2)
    assert bag == {"a": 1, "b": 1}  # ties by term
    add_terms(bag, ["c"], cap=2)  # a new topic enters a full bag, over the older ties
    assert bag == {"a": 1, "c": 1}
    add_terms(bag, ["c"], cap=2)
    add_terms(bag, ["d"], cap=2)
    assert bag == {"c": 2, "d": 1} and list(bag) == sorted(bag)


def test_ledger_prior_acts_on_related_queries_only(tmp_path: Path) -> None:
    t = [1000.0]
    led = Ledger.open(tmp_path / "learned.sqlite", clock=lambda: t[0])
    for s, (query, shown, read) in enumerate([
        ("In which year was the organisation that Ravi Lindqvist works for founded?",
         [(1, 0, 1.0), (2, 1, 0.63)], 1),
        ("Which organisation was founded earlier, Brandt Press or Aalto Labs?",
         [(3, 0, 1.0), (1, 1, 0.63)], 3),
    ]):
        led.start_session(f"s{s}", t[0])
        led.on_search(f"s{s}", query, shown)
        led.on_read(f"s{s}", read)
        led.end_session(f"s{s}", t[0])
    related = "When was Ravi Lindqvist's employer established?"
    other = "Did The Silent Harbour come out before The Iron Atlas?"
    q1 = led.state.notes[1].q
    assert q1 > 0.0 and led.prior([1])[0] == q1  # no query: the whole score
    assert led.prior([1], related)[0] == pytest.approx(q1)  # the same need, other words
    assert led.prior([1], other)[0] == 0.0  # a question about other things: no effect
    # note 1 was also passed over for the Brandt/Aalto question: its use still wins, and a
    # question about those organisations is not what note 1 was used for
    assert led.prior([1], "Was Brandt Press set up before Aalto Labs?")[0] < q1 / 2
    assert led.learned([1, 2], query=related).prior.tolist() == led.prior([1, 2], related).tolist()
    assert led.learned([1, 2], as_of=t[0], query=related).prior.tolist() == \
        led.prior([1, 2], related).tolist()  # replay == live, with the query
    led.close()


def test_a_new_pairing_of_known_words_counts_against_the_gate() -> None:
    """v9 (NOTES-LRN9.md): a phrase no logged query held counts ln(1 + N) against the gate
    when the log knows each of its words (a different question about known things), and is
    left out when a word of it is new (a rewording: the paraphrase keeps gate 1)."""
    points = "What kind of game did John have a career-high in points in?"
    assists = "What kind of game did John have a career-high in assists in?"
    df = {t: 1 for t in query_terms(points)} | {"basketball assists": 1, "john score": 1}
    bag = {t: 1 for t in query_terms(points)}
    n = 10
    rare, unseen = math.log1p(n / 1), math.log1p(n)
    known = {"kind": 1, "game": 1, "john": 2, "career": 1, "high": 1, "point": 1}
    # "high assists" is new; "assist" unknown to the log: a rewording, left out (v8's gate)
    assert gate(query_terms(assists), bag, df, n, known) == pytest.approx(1.0)
    known["assist"] = 1  # another logged question held "assists": a new pairing of known words
    assert gate(query_terms(assists), bag, df, n, known) == pytest.approx(
        4 * rare / (4 * rare + unseen))
    assert gate(query_terms(assists), bag, df, n) == pytest.approx(1.0)  # without word counts
    phrases = weights(query_terms(assists), df, n, known)
    assert phrases.new == pytest.approx(unseen) and len(phrases.logged) == 4
    assert gate_of(phrases, bag, dilute=False) == pytest.approx(1.0)  # a demotion's gate
    assert gate(query_terms(points), bag, df, n, known) == pytest.approx(1.0)  # the same one


def test_a_one_word_query_is_gated_by_the_note_s_use_words() -> None:
    """v10: a query of one content term has no phrase; its gate is whether the note's use
    words (stems) hold it, so a keyword search for what a note was used for gets the whole
    score (v9 gave it 0: the lone known word counted as a new pairing), another word none."""
    asked = "When did Tim start learning the violin?"
    df = {t: 1 for t in query_terms(asked)}
    bag = {t: 1 for t in query_terms(asked)}
    use_words = {"tim": 1, "start": 1, "learn": 1, "violin": 1}
    known = dict(use_words)
    violin = weights(query_terms("violin?"), df, 10, known)
    assert violin.word == "violin" and violin.logged == [] and violin.new > 0
    assert gate_of(violin, bag) == 0.0  # phrases alone: nothing to match
    assert gate_of(violin, bag, words=use_words) == 1.0
    assert gate_of(weights(query_terms("Violins"), df, 10, known), bag, words=use_words) == 1.0
    assert gate_of(weights(query_terms("piano"), df, 10, known), bag, words=use_words) == 0.0
    two = weights(query_terms("Tim violin"), df, 10, known)  # a new pairing of two use words
    assert two.word == "" and two.pairs == (("tim", "violin"),)
    assert gate_of(two, bag) == 0.0  # phrases alone: v10's gate
    assert gate_of(two, bag, words=use_words) == 1.0  # v11: the note's use words hold both
    assert weights(query_terms("the and of"), df, 10, known).word == ""  # no content term


def test_a_one_word_query_the_note_was_used_after_keeps_its_phrase_gate() -> None:
    """A one-word query that showed the note in sessions that used it ("violin", then a read
    after another search: its use words hold only the asking query's, "concert schedul") is
    in the note's use bag as a logged term: its gate stays 1 (v9 gave 1; the use words add
    a way to 1, never take one away)."""
    df = {"violin": 3, "concert schedule": 3}
    bag = {"violin": 3, "concert schedule": 3}
    use_words = {"concert": 3, "schedul": 3}
    violin = weights(query_terms("violin"), df, 6, {"violin": 3, **use_words})
    assert gate_of(violin, bag) == 1.0  # v9
    assert gate_of(violin, bag, words=use_words) == 1.0
    piano = weights(query_terms("piano"), df, 6, {"piano": 1, **use_words})
    assert gate_of(piano, bag, words=use_words) == 0.0


def test_a_new_pairing_matches_only_when_the_note_was_used_for_both_words() -> None:
    """v11: a pairing no logged query held counts for a note exactly when both its words are
    the note's use words; one word outside them (a different question about a known thing)
    counts against, as in v9; the demotion's gate (dilute False) never counts new pairings."""
    asked = "When did Tim start learning the violin?"
    df = {t: 1 for t in query_terms(asked)}
    bag = {t: 1 for t in query_terms(asked)}
    use_words = {"tim": 1, "start": 1, "learn": 1, "violin": 1}
    known = {**use_words, "piano": 2, "languag": 1}
    n = 10
    rare, unseen = math.log1p(n / 1), math.log1p(n)
    piano = weights(query_terms("Tim piano"), df, n, known)
    assert gate_of(piano, bag, words=use_words) == 0.0  # "piano": not what it was used for
    mixed = weights(query_terms("When did Tim start learning the violin piano?"), df, n, known)
    # logged: "tim start", "start learning", "learning violin"; new: "violin piano"
    assert gate_of(mixed, bag, words=use_words) == pytest.approx(3 * rare / (3 * rare + unseen))
    both = weights(query_terms("Tim start violin"), df, n, known)  # "start violin" is new
    assert gate_of(both, bag, words=use_words) == pytest.approx(1.0)
    assert gate_of(both, bag, dilute=False, words=use_words) == pytest.approx(1.0)
    assert gate_of(weights(query_terms("language violin"), df, n, known), bag,
                   words=use_words) == 0.0


def test_a_question_s_loose_times_are_no_learned_words() -> None:
    """v11: the times a question names without a year ("in June", "on Sunday", "on Aug
    15th") are no topic, as the search's relevance reads them (notes/times_asked.py
    `untimed_asked`); v10 kept them as words, so a turn used for "camping in June" matched
    any other question asked "in June"."""
    assert content_tokens("When did Melanie go camping in June?") == ("melanie", "go", "camping")
    assert "sunday" not in content_tokens("What type of date is Andrew going on Sunday?")
    assert query_terms("What did Tim's teammates give him when they met on Aug 15th?") == \
        query_terms("What did Tim's teammates give him when they met?")
    assert "june" in content_tokens("Who is June?")  # a name, no time


def test_ledger_prior_takes_the_words_notes_hold_as_learned_does(tmp_path: Path) -> None:
    """`Ledger.prior` with `held` (v18) is `learned(...).prior`, live and replayed: it took no
    `held`, so it gave the pre-v18 gate to a question whose new words some note holds."""
    t = [1000.0]
    led = Ledger.open(tmp_path / "learned.sqlite", clock=lambda: t[0])
    led.start_session("s0", t[0])
    led.on_search("s0", "In which year was the organisation Ravi Lindqvist works for founded?",
                  [(1, 0, 1.0), (2, 1, 0.63)])
    led.on_read("s0", 1)
    led.end_session("s0", t[0])
    for query in ("When was Ravi Lindqvist's employer established?",
                  "Where did Ravi Lindqvist study chemistry?"):
        held = held_words(query, lambda tokens: [1] * len(tokens),  # every word in note 3
                          lambda tokens: [frozenset({3})] * len(tokens))
        got = led.prior([1, 2], query, held).tolist()
        assert got == led.learned([1, 2], query=query, held=held).prior.tolist()
        assert got == led.learned([1, 2], as_of=t[0], query=query, held=held).prior.tolist()
        assert got[0] < led.prior([1, 2], query)[0]  # the held new words count against it
    led.close()
