"""Copular facts, acts of the addressee, bare gerunds begun or given up, and possessions of
plans (issue 29, helper E2): `parsed_attributes`, `parsed_statements`, `parsed_possessions`.
Sentences written for the test (none from the benches). Skipped without the `nlp` extra,
except in CI (RMH_REQUIRE_NLP=1 fails)."""

from __future__ import annotations

from vault import turn_statements

from .nlp_fixtures import PEOPLE, needs_nlp


def _said(text: str, people: tuple[str, ...] = PEOPLE) -> set[tuple[str, str, str]]:
    return {(s.subject, s.key, s.value) for s in turn_statements(text, "Rosa", people)}


@needs_nlp
def test_what_the_speaker_is_into_or_on_is_a_fact() -> None:
    said = _said("These days I'm more into pottery and sci-fi films.")
    assert ("rosa", "is:into", "pottery") in said
    assert ("rosa", "is:into", "sci-fi film") in said
    assert ("rosa", "is:in", "choir") in _said("I'm in a choir at church.")
    assert ("rosa", "is:good_at", "chess") in _said("I am really good at chess.")


@needs_nlp
def test_a_negated_copula_keeps_the_fact_and_says_not() -> None:
    said = _said("I've never been on a rowing team.")
    assert ("rosa", "is_not:on", "rowing team") in said
    assert not [k for _, k, _ in said if k == "is:on"]


@needs_nlp
def test_hedged_copulas_vague_places_and_states_state_nothing() -> None:
    for text in ("I'd be into that.", "Maybe I'll be on the team.", "I'm in need of a break.",
                 "I'm on my way home.", "I'm in a good mood.", "Are you into jazz?"):
        assert not [k for _, k, _ in _said(text) if k.startswith(("is:", "is_not:"))], text


@needs_nlp
def test_congratulating_the_addressee_states_their_act() -> None:
    said = _said("Congrats on opening your own bakery!")
    assert ("omar", "did:open", "omar's own bakery") in said
    assert ("omar", "did:finish", "marathon") in _said(
        "I'm so proud of you for finishing the marathon.")
    # With more than one other speaker the addressee is unknown: nothing is said of anyone.
    assert not _said("Congrats on opening your own bakery!", ("Rosa", "Omar", "Lena"))
    (st,) = [s for s in turn_statements("Congrats on opening your bakery!", "Rosa", PEOPLE)
             if s.subject == "omar"]
    assert st.first_person is False


@needs_nlp
def test_a_bare_gerund_begun_or_given_up_is_the_act() -> None:
    assert ("rosa", "did:start", "running") in _said("I started running every morning.")
    assert ("rosa", "did:quit", "drinking") in _said("I quit drinking last year.")
    assert not _said("I kept going.")
    assert not _said("I started thinking about it.")


@needs_nlp
def test_an_opinion_already_said_is_not_said_again_as_a_copula() -> None:
    said = _said("I'm passionate about fashion trends.")
    assert ("rosa", "opinion:fashion trend", "likes") in said
    assert not [k for _, k, _ in said if k.startswith("is:")]


@needs_nlp
def test_plans_and_goals_are_not_possessions() -> None:
    assert not [v for _, k, v in _said("My plan worked and my goal is near.") if k == "has"]
    assert ("rosa", "has", "bakery") in _said("My bakery opens at six.")
