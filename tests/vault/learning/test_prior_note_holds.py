"""A question's word new to the query log that some note holds counts against the topic gate
of every note but those whose own text holds it (v19, learning/topic.py, NOTES-LRN15.md): a
user who describes what they asked about before with a word of its own note ("Lindqvist Works
in Ferrisburg") keeps that note's lift, while a note whose use was about the same names and
does not hold the word loses it as in v18 (NOTES-LRN13.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault import LEDGER_FILE, Ledger, Vault
from vault.learning.expansion import query_words
from vault.learning.formulas import LearningParams
from vault.learning.replay import learned_of
from vault.learning.state import LearnedState, NoteState
from vault.learning.topic import held_words, query_terms

from .test_ledger_facade import Clock

NAMES = ("James Samantha", "Evan Sam", "Calvin Dave", "Audrey Andrew", "Tim John")
TRAINED = ("cooking class omelette", "hiking trail weekend", "guitar lessons studio")
NEW = ("discover McGee bar", "avoid injuries weightlifting", "album released Tokyo")


def trained(names: str, topic: str) -> tuple[LearnedState, str]:
    """A log of 12 searches, 3 of them the question notes 7, 8 and 9 were used for."""
    a, b = names.split()
    asked = f"What did {a} and {b} do at the {topic}?"
    notes = {n: NoteState(q=0.8, used=8.0, use_terms={t: 3 for t in query_terms(asked)},
                          use_words={w: 3 for w in query_words(asked)}) for n in (7, 8, 9)}
    return LearnedState(searches=12, query_df={t: 3 for t in query_terms(asked)},
                        word_df={w: 3 for w in query_words(asked)}, notes=notes), asked


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(NAMES), st.sampled_from(TRAINED), st.sampled_from(NEW))
def test_a_note_holding_the_new_words_keeps_its_gate_one_not_holding_them_loses_it(
        names: str, topic: str, new: str) -> None:
    state, _ = trained(names, topic)
    a, b = names.split()
    other = f"What did {a} and {b} {new}?"
    words = query_words(new)
    # note 7 holds every new word, note 9 only the first, note 8 none (note 99 holds all)
    held = {w: frozenset({7, 99} | ({9} if w == words[0] else set())) for w in words}
    prior = learned_of(state, [7, 8, 9], 0.0, LearningParams(), other, held).prior.tolist()
    assert prior[0] == pytest.approx(0.8)  # its own words: the names are its whole topic
    assert 0.0 < prior[1] < 0.8 / 2  # v18's gate: the question is about something else
    assert prior[1] <= prior[2] < prior[0]  # a phrase counts unless the note holds it whole
    nobody = learned_of(state, [7, 8, 9], 0.0, LearningParams(), other,
                        {w: frozenset({99}) for w in words}).prior.tolist()
    assert nobody[0] == pytest.approx(prior[1])  # without the holding, 7 is as 8 (v18)


def test_ledger_prior_and_learned_read_each_note_s_holding_live_and_replayed(
        tmp_path: Path) -> None:
    t = [1000.0]
    led = Ledger.open(tmp_path / "learned.sqlite", clock=lambda: t[0])
    led.start_session("s0", t[0])
    led.on_search("s0", "When was Lindqvist Works founded?", [(1, 0, 1.0), (2, 1, 0.63)])
    led.on_read("s0", 1)
    led.on_read("s0", 2)
    led.end_session("s0", t[0])
    query = "Was Lindqvist Works in Ferrisburg founded before Moreau Press?"
    held = held_words(query, lambda tokens: [1] * len(tokens),
                      lambda tokens: [frozenset({1, 5}) if tok == "ferrisburg"
                                      else frozenset({5}) for tok in tokens])
    got = led.prior([1, 2], query, held).tolist()
    assert got == led.learned([1, 2], query=query, held=held).prior.tolist()
    assert got == led.learned([1, 2], as_of=t[0], query=query, held=held).prior.tolist()
    assert got[1] < got[0]  # note 1 holds "ferrisburg", note 2 does not
    live = led.learned([1, 2], query=query, held=held)
    replayed = learned_of(led.replay(), [1, 2], t[0], led.params, query, held)
    for name in ("prior", "free", "expansion"):
        assert getattr(live, name).tolist() == getattr(replayed, name).tolist(), name
    led.close()


TOWNS = ("Ferrisburg", "Brega", "Hollin")


def test_a_described_paraphrase_keeps_the_described_note_s_lift_through_the_engine(
        tmp_path: Path) -> None:
    """The knowledge workload's `--paraphrases described` in small: an organisation asked
    about, then described by its headquarters' town, which its own note holds and so do the
    town's and its people's notes (v18 halved the organisation's lift, NOTES-LRN14.md)."""
    clock = Clock()
    (tmp_path / ".rmh").mkdir()
    ledger = Ledger.open(tmp_path / ".rmh" / LEDGER_FILE, clock=clock)
    with Vault.open(tmp_path, usage=ledger) as v:
        v.write("Lindqvist Works.md", "Lindqvist Works is a company founded in 1921. "
                "Its headquarters are in [[Ferrisburg]].\n")
        v.write("Moreau Press.md", "Moreau Press is a publisher founded in 1934. "
                "Its headquarters are in [[Brega]].\n")
        for town in TOWNS:
            v.write(f"{town}.md", f"{town} is a town by the river.\n")
            v.write(f"Ana {town}.md", f"Ana was born in [[{town}]] and writes novels.\n")
        for s in range(3):
            ledger.start_session(f"s{s}", clock.t)
            v.search("When was Lindqvist Works founded?", session=f"s{s}")
            v.read("Lindqvist Works", session=f"s{s}")
            v.search("When was Moreau Press founded?", session=f"s{s}")
            v.read("Moreau Press", session=f"s{s}")
            clock.t += 60.0
            ledger.end_session(f"s{s}", clock.t)
        q = ledger.state.notes[v.resolve("Lindqvist Works")].q
        assert q > 0.5

        def factors(question: str) -> dict[str, float]:
            hits = v.search(question, learn=False).hits
            return {h.title: float(h.receipt["prior_factor"]) for h in hits}

        # a town no note holds is a rewording (v9): it leaves every gate as it was
        reworded = factors("Was Lindqvist Works in Zorbaville founded before Moreau Press?")
        described = factors("Was Lindqvist Works in Ferrisburg founded before Moreau Press?")
        assert reworded["Lindqvist Works"] > 1.0
        # the town is in its own note: the description costs it nothing (v18: x1.076 of x1.096)
        assert described["Lindqvist Works"] == pytest.approx(reworded["Lindqvist Works"])
        # Moreau Press does not hold "Ferrisburg": the town counts against its gate (v18)
        assert 1.0 < described["Moreau Press"] < reworded["Moreau Press"]
        # replay equals live: the same log up to now ranks and lifts alike
        question = "Was Lindqvist Works in Ferrisburg founded before Moreau Press?"
        live = v.search(question, learn=False).hits
        replayed = v.search(question, as_of=clock.t).hits
        assert [(h.title, h.receipt["prior_factor"]) for h in live] == \
            [(h.title, h.receipt["prior_factor"]) for h in replayed]
    ledger.close()
