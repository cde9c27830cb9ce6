"""Session 13's parse rules (issue 29, helper E3): plans (`parsed_plans`), things valued and
favourites (`parsed_preferences`), outings ("went hiking"), relative objects ("a dish that we
cooked"), counted objects ("lots of books"), appositive names, dropped "I" after an adverb,
acts and belongings of the addressee, statements before a dash in a question. Each rule with
negatives: questions, hypotheticals, negations, other people's opinions, modals. Sentences
written for the test (none from the benches). Skipped without the `nlp` extra, except in CI
(RMH_REQUIRE_NLP=1 fails)."""

from __future__ import annotations

from vault import turn_statements
from vault.conversation.facts import sentence

from .nlp_fixtures import PEOPLE, needs_nlp


def _said(text: str, people: tuple[str, ...] = PEOPLE) -> set[tuple[str, str, str]]:
    return {(s.subject, s.key, s.value) for s in turn_statements(text, "Rosa", people)}


def _keys(text: str, prefix: str) -> list[str]:
    return [f"{k}={v}" for _, k, v in _said(text) if k.startswith(prefix)]


@needs_nlp
def test_a_plan_of_the_speaker_is_a_commitment_with_its_object() -> None:
    assert ("rosa", "plans:open", "bakery") in _said("I'm hoping to open a bakery next year.")
    assert ("rosa", "plans:get", "parrot") in _said("I'm considering getting a parrot.")
    assert ("rosa", "plans:adopt", "cat") in _said("We're thinking about adopting a cat.")
    assert ("rosa", "plans:run", "marathon") in _said("My goal is to run a marathon.")
    assert ("rosa", "plans:learn", "cello") in _said("I decided to learn the cello.")
    assert ("rosa", "plans:build", "treehouse") in _said(
        "Still working on building a treehouse.")
    assert ("rosa", "plans:paint", "rosa's porch") in _said(
        "Can't wait to paint my porch this spring!")
    (st,) = [s for s in turn_statements("I'm planning to plant an orchard.", "Rosa", PEOPLE)
             if s.key.startswith("plans:")]
    assert (st.kind, st.first_person) == ("commitment", True)
    assert sentence(st.subject, st.key, st.value) == "rosa plans to plant orchard"


@needs_nlp
def test_plans_not_made_by_the_speaker_or_not_made_at_all_are_none() -> None:
    for text in ("Are you planning to sell the van?",  # a question
                 "I'm not planning to sell the van.",  # negated
                 "If I decide to sell the van, I'll call you.",  # a condition
                 "I might try to sell the van.",  # a modal
                 "My brother is hoping to sell his van.",  # someone else's plan
                 "I tried to sell the van.",  # an attempt, not a plan
                 "I can't wait to see your garden.",  # seeing is no act
                 "Hoping to hear from you soon.",  # chat
                 "I'm trying to figure it out.",  # a pronoun object
                 "I'm trying to get the boiler to fire up."):  # a task under way: an episode
        assert not _keys(text, "plans:"), text


@needs_nlp
def test_an_outing_keeps_its_gerund() -> None:
    assert ("rosa", "did:go", "kayaking") in _said("We went kayaking with my cousins.")
    assert ("rosa", "did:go", "bowling") in _said("I go bowling every Thursday.")
    assert ("rosa", "did:start", "sleeping better") in _said("I've started sleeping better.")
    for text in ("Did you go skiing?", "I might go skiing.", "My sister went skiing.",
                 "I didn't go skiing."):
        assert not _keys(text, "did:go"), text


@needs_nlp
def test_relative_counted_and_named_objects() -> None:
    assert ("rosa", "did:bake", "rhubarb pie") in _said(
        "This is a rhubarb pie that we baked.")
    assert ("rosa", "did:collect", "seashell") in _said("I collected lots of seashells.")
    assert ("rosa", "did:interview", "malik") in _said(
        "I interviewed this brilliant chemist, Malik, at the lab.")
    assert ("rosa", "did:finish", "rosa's first quilt") in _said("Just finished my first quilt!")
    assert not _keys("This is a rhubarb pie that they baked.", "did:")
    assert not _keys("Would you bake lots of pies?", "did:")


@needs_nlp
def test_a_statement_before_a_dash_is_not_asked() -> None:
    assert ("rosa", "did:join", "choir") in _said("I joined a choir - have you ever sung?")
    assert not _keys("Have you ever joined a choir?", "did:")
    assert not _keys("Wait - did you join a choir?", "did:")
    assert not _keys("Got any sugar-free recipes?", "did:")  # a hyphen is no clause break


@needs_nlp
def test_favourites_are_no_belongings_but_own_things_are() -> None:
    assert ("rosa", "has", "pottery studio") in _said("My own pottery studio opened.")
    assert not [v for _, k, v in _said("One of my favorite novels is Dune.") if k == "has"]


@needs_nlp
def test_what_matters_to_the_speaker_and_their_favourites() -> None:
    assert ("rosa", "values", "gardening") in _said("Gardening is so important to me.")
    assert ("rosa", "values", "chess") in _said("Chess means the world to me.")
    assert ("rosa", "values", "swimming") in _said(
        "Swimming has been a big part of my life since college.")
    assert ("rosa", "opinion:tango", "likes") in _said(
        "One of my favorites is a dance called Tango.")
    assert sentence("rosa", "values", "chess") == "rosa values chess"
    for text in ("Gardening isn't important to me.", "Is gardening important to you?",
                 "Gardening would mean a lot to me.", "That means a lot to me.",
                 "Gardening is important to my dad.", "Omar said chess means a lot to him."):
        assert not _keys(text, "values"), text


@needs_nlp
def test_acts_and_belongings_of_the_addressee() -> None:
    said = _said("You painted the lighthouse so well!")
    assert ("omar", "did:paint", "lighthouse") in said
    (st,) = [s for s in turn_statements("You've restored an old canoe.", "Rosa", PEOPLE)
             if s.subject == "omar"]
    assert (st.key, st.value, st.first_person) == ("did:restore", "old canoe", False)
    assert ("omar", "has", "bakery") in _said("Your bakery smells amazing.")
    for text in ("You should paint the lighthouse.", "Did you paint the lighthouse?",
                 "You didn't paint the lighthouse.", "You could paint the lighthouse.",
                 "You did a great job!", "Your pic is lovely.", "Thanks for your support!",
                 "Your enthusiasm is contagious.", "Your encouragement keeps me going."):
        assert not [s for s in _said(text) if s[0] == "omar"], text
    # With more than one other speaker the addressee is unknown: nothing of anyone else.
    assert not [s for s in _said("You painted the lighthouse!", ("Rosa", "Omar", "Lena"))
                if s[0] != "rosa"]
