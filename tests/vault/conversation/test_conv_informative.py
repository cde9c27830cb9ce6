"""Session 15's filter of trivial statements (issue 29 item 3, helper F6,
`vault/conversation/informative.py`): each kind dropped, each with what must stay (a thing one
has, an act on a thing, the speaker's own event, a plan with a real object). Sentences written
for the test (none from the benches). The parse tests are skipped without the `nlp` extra,
except in CI (RMH_REQUIRE_NLP=1 fails); the statement tests need no parse."""

from __future__ import annotations

from vault import turn_statements
from vault.conversation.informative import informative, informative_only
from vault.conversation.statements import Statement

from .nlp_fixtures import PEOPLE, needs_nlp


def _said(text: str) -> set[tuple[str, str, str]]:
    return {(s.subject, s.key, s.value) for s in turn_statements(text, "Rosa", PEOPLE)}


def _st(key: str, value: str, said: str = "", first_person: bool = True) -> Statement:
    kind = "commitment" if key == "commitment" else "fact"
    return Statement("rosa", key, value, kind, None, first_person, said or value)


def test_a_quality_an_outcome_or_an_undertaking_is_no_belonging() -> None:
    for value in ("empathy", "achievement", "last chat", "belief", "willingness", "project",
                  "eagerness", "community"):
        assert not informative(_st("has", value, first_person=False)), value
    assert not informative(_st("uses", "rosa's influence"))
    for value in ("bakery", "dog", "old bike", "cooking class", "sister", "writing",
                  "business", "dance business", "illness"):  # "-ness" things, not qualities
        assert informative(_st("has", value, first_person=False)), value


def test_an_event_is_the_speakers_own_but_not_the_addressees_nor_shared() -> None:
    assert not informative(_st("has", "party", "good luck at your party", first_person=False))
    assert not informative(_st("has", "hike", "let's pack snacks for our hike"))
    assert informative(_st("has", "dinner party", "i'm cooking for my dinner party"))
    assert not informative(_st("has", "knee", "bend your knee", first_person=False))


def test_a_hollow_object_or_a_light_verb_on_a_generic_thing_says_nothing() -> None:
    for key, value in (("did:have", "letdown"), ("did:get", "some useful feedback"),
                       ("did:make", "big decision"), ("plans:show", "warmth"),
                       ("did:put_in", "some work"), ("did:get", "great new"),
                       ("did:give", "activity")):
        assert not informative(_st(key, value)), value
    for key, value in (("did:adopt", "kitten"), ("did:finish", "3 project"),
                       ("did:have", "cat"), ("did:make", "apple pie"),
                       ("did:have_letdown_in", "chess tournament"), ("did:achieve", "milestone")):
        assert informative(_st(key, value)), value
    assert not informative(_st("opinion:work", "likes"))
    assert informative(_st("opinion:pottery", "likes"))
    assert informative(_st("values", "support"))  # other predicates are not read


def test_a_commitment_that_answers_the_chat_is_none() -> None:
    for value, said in (("check those out", "i will check those out"),
                        ("try these recipes", "i will try these recipes"),
                        ("see you at the gym", "i will see you at the gym"),
                        ("get the photos", "i will get the photos to you"),
                        ("do some research", "i will do some research")):
        assert not informative(_st("commitment", value, said)), value
    for value in ("drop them off at the library", "open a bakery in lyon",
                  "take a pottery class"):
        assert informative(_st("commitment", value, f"i will {value}")), value


def test_informative_only_keeps_the_order() -> None:
    found = (_st("did:adopt", "kitten"), _st("did:have", "blast"), _st("has", "dog"))
    assert [s.value for s in informative_only(found)] == ["kitten", "dog"]
    assert not informative(_st("has", ""))


@needs_nlp
def test_trivial_statements_of_a_turn_are_dropped() -> None:
    assert ("omar", "has", "project") not in _said("Good luck with your project!")
    assert ("omar", "has", "bakery") in _said("Your bakery looks great.")
    assert ("omar", "has", "business") in _said("Your business looks great.")
    assert ("rosa", "did:have", "blast") not in _said("We had a blast at the lake.")
    assert ("rosa", "did:adopt", "kitten") in _said("I adopted a kitten.")
    assert not [s for s in _said("I got great news!") if s[1] == "did:get"]
    assert not [s for s in _said("I will definitely check those out.") if s[1] == "commitment"]
    assert ("rosa", "commitment", "open a bakery in lyon") in _said(
        "I will open a bakery in Lyon.")
    assert ("rosa", "has", "exam") in _said("I'm nervous about my exams.")
    assert ("omar", "has", "exam") not in _said("Thanks for the chat about your exams.")


def test_without_the_parse_the_pattern_table_is_filtered_too() -> None:
    said = {(s.key, s.value) for s in turn_statements(
        "I will see you around. I will open a bakery in Lyon.", "Rosa", PEOPLE, use_nlp=False)}
    assert ("commitment", "open a bakery in lyon") in said
    assert not [v for k, v in said if "see you" in v]


@needs_nlp
def test_what_this_is_or_heres_shows_of_the_speakers_own_is_a_belonging() -> None:
    assert ("rosa", "has", "brother") in _said("That's my brother on the left.")
    assert ("rosa", "has", "kid") in _said("These are my kids at the beach.")
    assert ("rosa", "has", "painting") in _said("Here's my new painting.")
    for text in ("Here is our photo together.", "Here's your coffee.", "That's your brother?",
                 "It's my new hobby.", "That's my point."):
        assert not [s for s in _said(text) if s[1] == "has"], text


@needs_nlp
def test_a_preposition_after_a_pronoun_object_is_no_object_unless_a_place() -> None:
    assert not [s for s in _said("I marinated it with lemon and thyme.") if s[1] != "has"]
    assert ("rosa", "did:buy_at", "farmers market") in _said(
        "I bought it at the farmers market.")
    assert ("rosa", "did:jam_with", "friend") in _said("I jammed with friends.")
    assert ("rosa", "did:take_to", "dog park") in _said("I took them to the dog park.")


@needs_nlp
def test_a_hollow_head_named_by_a_noun_before_it_is_a_thing() -> None:
    assert ("rosa", "did:complete", "charity fitness challenge") in _said(
        "I recently completed a charity fitness challenge.")
    assert ("rosa", "has", "next art project") in _said(
        "I'm looking for inspiration for my next art project.")
    assert ("rosa", "did:face", "challenge") not in _said("I faced a challenge.")
    assert ("rosa", "has", "project") not in _said("I'm stuck on my project.")
    # a plural head is named by its lemma ("scores" -> score, "issues" -> issue)
    assert ("rosa", "did:get", "test score") in _said("We got the test scores.")
    assert ("rosa", "did:have", "health issue") in _said("I have health issues.")
    assert not informative(_st("did:complete", "charity fitness challenge"))  # no parse given
