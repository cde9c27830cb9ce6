"""DMF survival score and interaction-count decay."""

from __future__ import annotations

import math
from datetime import date

import pytest

from vault.conversation.entities import extract
from vault.conversation.survival import (
    BIAS,
    WEIGHTS,
    archivable,
    effective,
    features,
    half_life,
    logistic,
    score,
)
from vault.notes.clocks import resolve


def omega(text: str, role: str = "user") -> float:
    refs = resolve(text, date(2024, 5, 9))
    lexicon = frozenset({"carla", "paris"})
    ents = extract(text, speaker="A", lexicon=lexicon, anchor=date(2024, 5, 9))
    return score(text, ents, refs, role).omega


def test_formula_matches_hand_computation() -> None:
    x = features("haha thanks!", (), (), "user")
    assert x == {"density": pytest.approx(2 / 2 * 2 / 8), "question": 0.0, "commitment": 0.0,
                 "preference": 0.0, "dates": 0.0, "names": 0.0, "provenance": 1.0, "statement": 0.0,
                 "filler": 1.0}
    z = BIAS + WEIGHTS["density"] * 0.25 + WEIGHTS["provenance"] + WEIGHTS["filler"]
    expected = 1 / (1 + math.exp(-z))
    assert score("haha thanks!", (), (), "user").omega == pytest.approx(expected)


def test_informative_turns_outlive_filler() -> None:
    rich = omega("I will fly to Paris with Carla next Friday; I love the museums there.")
    assert rich > omega("Haha, thanks!") + 0.4
    assert omega("I prefer tabs over spaces in Python code.") > omega("tabs and spaces in code")
    assert omega("What time does the pottery class start?") > omega("the pottery class")
    said = "Carla moved to Paris last year."
    assert omega(said, "assistant") < omega(said)


def test_decay_counts_interactions_not_time() -> None:
    assert effective(0.8, 0) == 0.8
    assert effective(0.8, int(half_life(0.8))) == pytest.approx(0.4, rel=0.01)
    assert effective(0.8, -5) == 0.8
    assert effective(0.9, 300) / 0.9 > effective(0.2, 300) / 0.2  # strong memories decay slower
    assert not archivable(0.5, 10) and archivable(0.1, 1000)


def test_logistic_is_stable() -> None:
    assert logistic(-1000.0) == 0.0 and logistic(1000.0) == 1.0 and logistic(0.0) == 0.5


def test_first_person_facts_outscore_filler_seed_examples() -> None:
    """Issue 16: "I live in Paris." read as filler (Ω = 0.10); the 4D seed's statements too."""
    paris = omega("I live in Paris.")
    assert paris > 0.5 and paris > omega("Haha, thanks!") + 0.4
    x = features("I live in Paris.", (), (), "user")
    assert (x["statement"], x["filler"]) == (1.0, 0.0)
    assert omega("My team uses tabs rather than spaces.") > omega("That's cool.") + 0.3
    assert omega("I also dislike verbose error messages.") > omega("Okay, noted.") + 0.3
