"""Golden cases of the deterministic statement extraction (no model)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault.conversation.statements import extract_statements, functional

SPEAKERS = ("Alice", "Bob")

GOLDEN = [
    ("I love cats!", [("alice", "opinion:cat", "likes", "preference", None)]),
    ("I don't like olives, but I really love pizza.",
     [("alice", "opinion:olive", "dislikes", "preference", None),
      ("alice", "opinion:pizza", "likes", "preference", None)]),
    ("I hate mornings.", [("alice", "opinion:morning", "dislikes", "preference", None)]),
    ("I'm a big fan of jazz.", [("alice", "opinion:jazz", "likes", "preference", None)]),
    ("I prefer tabs over spaces.", [("alice", "opinion:tab", "likes", "preference", None)]),
    ("My favourite colour is blue.", [("alice", "favourite:colour", "blue", "preference", None)]),
    ("I moved to Rome last month.", [("alice", "lives_in", "rome", "fact", None)]),
    ("I live in Paris now.", [("alice", "lives_in", "paris", "fact", None)]),
    ("I work at Google and I love it.", [("alice", "works_at", "google", "fact", None)]),
    ("Carla is my teacher.", [("alice", "role:teacher", "carla", "fact", None)]),
    ("My wife is Sarah.", [("alice", "role:wife", "sarah", "fact", None)]),
    ("I'm a nurse.", [("alice", "is_a", "nurse", "fact", None)]),
    ("I'm working on the Payments API.",
     [("alice", "works_on", "payments api", "relation", "works_on")]),
    ("I use VS Code these days.", [("alice", "uses", "vs code", "relation", "uses")]),
    ("I own a red bike.", [("alice", "owns", "red bike", "relation", "owns")]),
    ("The Payments API depends on the Auth service.",
     [("payments api", "depends_on", "auth service", "relation", "depends_on")]),
    ("Dan reports to Maria.", [("dan", "reports_to", "maria", "relation", "reports_to")]),
    ("My boss is Maria.", [("alice", "reports_to", "maria", "relation", "reports_to")]),
    ("The outage was affected by the DNS change.",
     [("outage", "affected_by", "dns change", "relation", "affected_by")]),
    ("The new parser replaces the old parser.",
     [("new parser", "supersedes", "old parser", "relation", "supersedes")]),
    ("I'll call the plumber tomorrow.",
     [("alice", "commitment", "call the plumber", "commitment", None)]),
    ("I'm gonna run a marathon in 2025.",
     [("alice", "commitment", "run a marathon", "commitment", None)]),
    ("I will keep working at it.", [("alice", "commitment", "keep working", "commitment", None)]),
    ("I love your garden.", [("alice", "opinion:bob's garden", "likes", "preference", None)]),
]

NOTHING = [
    "Do you like tea?",                              # a question states nothing
    "If I move to Berlin I will learn German.",      # hedged
    "Maybe I will go.",
    "I love it!", "Haha I love that!",               # pronoun objects
    "I hate it when that happens.",
    "That's what I like to hear.",                   # relative clause
    "I won't go.", "I will do that.",                # refusal, empty act
    "I'm going to the gym.",                         # a place, not an act
    "My dog is so cute.", "My job is stressful.",    # adjectives are not values
    "I'm a bit tired.", "I am a huge fan of it.",
    "Starting my own business sounds awesome.",      # "own" after a possessive is no verb
    "I love the way the light falls through the old kitchen window at dawn.",  # too long
    "I started a pottery class.",
]


@pytest.mark.parametrize(("text", "expected"), GOLDEN)
def test_golden_extractions(text: str, expected: list[tuple[str, ...]]) -> None:
    got = [(s.subject, s.key, s.value, s.kind, s.relation)
           for s in extract_statements(text, "Alice", SPEAKERS)]
    assert got == expected


@pytest.mark.parametrize("text", NOTHING)
def test_no_statement(text: str) -> None:
    assert extract_statements(text, "Alice", SPEAKERS) == ()


def test_first_person_flag_and_wording() -> None:
    (mine,) = extract_statements("I’m working on the Payments API.", "Alice", SPEAKERS)
    (theirs,) = extract_statements("Dan reports to Maria.", "Alice", SPEAKERS)
    assert mine.first_person and not theirs.first_person
    assert mine.said == "i am working on the payments api"


def test_single_valued_keys() -> None:
    assert functional("lives_in") and functional("opinion:cat") and functional("role:wife")
    assert functional("reports_to") and functional("favourite:colour")
    assert not functional("uses") and not functional("role:friend")
    assert not functional("commitment") and not functional("works_on")


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="abcdefghij IlmoveuskrtyMPR.,!?'", max_size=80))
def test_extraction_is_deterministic_and_total(text: str) -> None:
    first = extract_statements(text, "Alice", SPEAKERS)
    assert first == extract_statements(text, "Alice", SPEAKERS)
    assert all(s.subject and s.value and s.key for s in first)


def test_social_formulas_and_bare_adverb_verbs_are_no_commitments() -> None:
    """Issue 16: the LoCoMo fact sample read these as wrong or empty commitments."""
    for said in ("I'll let you know!", "I'll keep you posted.", "I'll do my best!",
                 "I'll always cherish.", "I'll definitely keep that in mind.",
                 "Perhaps I'll invite you to help with my game."):
        assert extract_statements(said, "Alice") == (), said
    (mug,) = extract_statements("I'll give you a mug just like this one!", "Alice")
    assert mug.value == "give you a mug"
