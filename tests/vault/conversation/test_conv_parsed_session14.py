"""Session 14's parse rules (issue 29, helper E4): "this" brings in a new thing ("I read this
book about owls") unless it points at what is shown or at the moment ("this pic"); a verb set
against a negated one by "but" keeps no negation ("haven't called, but wanted to say I baked
a pie"); a congratulation names what it is for even when pointed at; a belonging with an
"of"/"for" complement is none ("my own kind of therapy"). Each with negatives. Sentences
written for the test (none from the benches). Skipped without the `nlp` extra, except in CI
(RMH_REQUIRE_NLP=1 fails)."""

from __future__ import annotations

from vault import turn_statements

from .nlp_fixtures import PEOPLE, needs_nlp


def _said(text: str, people: tuple[str, ...] = PEOPLE) -> set[tuple[str, str, str]]:
    return {(s.subject, s.key, s.value) for s in turn_statements(text, "Rosa", people)}


def _values(text: str, key: str) -> list[str]:
    return sorted(v for _, k, v in _said(text) if k == key)


@needs_nlp
def test_this_brings_in_a_new_thing_without_the_demonstrative_or_praise() -> None:
    assert ("rosa", "did:buy", "kayak") in _said("I bought this gorgeous kayak last weekend.")
    assert ("rosa", "did:read", "book") in _said("I read this book about owls on the train.")
    assert ("rosa", "did:get", "medal") in _said("Yesterday I got this medal!")
    assert ("rosa", "did:plant", "tulip") in _said("We planted these tulips in April.")


@needs_nlp
def test_that_or_a_shown_thing_stays_pointed_at() -> None:
    for text in ("I bought that kayak.",  # which one is said elsewhere
                 "I took this pic at the lake.",  # what is shown
                 "We loved those days by the sea.",
                 "I found this place online."):
        said = {k for _, k, _ in _said(text) if k.startswith("did:")}
        assert not said, (text, said)


@needs_nlp
def test_a_verb_set_against_a_negated_one_is_stated() -> None:
    assert ("rosa", "did:bake", "pie") in _said(
        "Haven't called you in ages but wanted to tell you I baked a pie.")
    assert ("rosa", "did:adopt", "kitten") in _said(
        "I didn't win the raffle, but I adopted a kitten.")
    # the negation of its own verb, a modal above it, and one conjunct without "but" stay
    for text in ("I didn't win the raffle, but I never adopted a kitten.",
                 "I would sell the van but keep the boat.",
                 "I didn't sell the van and buy a boat."):
        assert not [k for _, k, _ in _said(text) if k in ("did:adopt", "did:keep",
                                                            "did:buy")], text


@needs_nlp
def test_a_congratulation_names_what_it_is_for() -> None:
    assert ("omar", "did:win", "chess tournament") in _said(
        "Congrats on winning that chess tournament!")
    assert not [k for s, k, _ in _said("Congrats on taking that photo!") if s == "omar"]


@needs_nlp
def test_a_kind_or_pursuit_of_something_is_no_belonging() -> None:
    for text, noun in (("Painting is like my own kind of therapy.", "kind"),
                       ("Good luck in your quest for a new job.", "quest"),
                       ("The view was part of our choice of house.", "choice")):
        assert noun not in _values(text, "has"), text
    assert "bakery" in _values("My bakery opens at six.", "has")
    assert "garage" in _values("I fixed it in my garage.", "has")


@needs_nlp
def test_a_lasting_pull_said_in_the_passive_is_a_disposition() -> None:
    assert ("rosa", "is:drawn_to", "lighthouse") in _said(
        "I've always been drawn to lighthouses.")
    assert ("rosa", "is:fascinated_by", "owl") in _said("I was fascinated by owls.")
    assert ("rosa", "is:obsessed_with", "vintage radio") in _said(
        "I'm obsessed with vintage radios.")
    assert ("rosa", "is_not:interested_in", "golf") in _said("I'm not interested in golf.")
    for text in ("Are you drawn to lighthouses?",  # a question
                 "I might be drawn to lighthouses.",  # a modal
                 "My son is fascinated by volcanoes.",  # someone else
                 "I was inspired by your story.",  # a reaction, not a pull
                 "I'm drawn to it."):  # a pronoun
        assert not [k for _, k, _ in _said(text) if k.startswith(("is:", "is_not:"))], text


@needs_nlp
def test_a_thing_said_to_be_one_of_my_favourites_is_liked() -> None:
    assert ("rosa", "opinion:lemon tart", "likes") in _said(
        "Lemon tart is one of my favorites, I bake it every Sunday.")
    assert ("rosa", "opinion:lisbon", "likes") in _said("Lisbon is one of my favorite cities.")
    assert ("rosa", "opinion:odyssey", "likes") in _said(
        "The Odyssey was one of my faves at school.")
    for text in ("It's one of my favorites.",  # a pronoun
                 "This tart is one of my favorites.",  # pointed at
                 "Lisbon is one of his favorite cities.",  # someone else's
                 "Is Lisbon one of your favorites?",  # a question
                 "Lisbon isn't one of my favorites."):  # negated
        assert not [k for _, k, _ in _said(text) if k.startswith("opinion:")], text
    assert "fave" not in [v for _, k, v in _said("Jazz is one of my faves.") if k == "has"]


@needs_nlp
def test_a_thing_had_made_is_no_act_of_having() -> None:
    for text in ("I had this quilt made by my aunt.", "I got my bike repaired downtown."):
        assert not [k for _, k, _ in _said(text) if k in ("did:have", "did:get")], text
    assert ("rosa", "did:get", "new bike") in _said("I got a new bike for my birthday.")
    assert ("rosa", "did:get", "another dog") in _said("We got another dog named Pepper.")
