"""A session's opening request to an assistant as a goal (`openings`), a session the user
leaves to try the advice (`reactions.trials`), understanding and acknowledgements that are
no result, and a certain loss of the speaker (`parsed_outcomes`): made-up sentences, none
from the bench sets.

The cases skip when the `nlp` extra is not installed, except in CI (RMH_REQUIRE_NLP=1)."""

from __future__ import annotations

import dataclasses

import pytest

from vault import build_events
from vault.conversation.events import Event
from vault.conversation.nlp import parse
from vault.conversation.openings import opening
from vault.conversation.parsed_episodes import Goal
from vault.conversation.parsed_outcomes import parsed_outcome
from vault.conversation.reactions import trials

from .nlp_fixtures import INSTALLED, episode_ticks, one_session

parsed = pytest.mark.skipif(not INSTALLED, reason="the nlp extra is not installed")

EXPORT = [
    ("U", "user", "the nightly export job sits at 100% CPU for six hours. thoughts?"),
    ("A", "assistant", "Profile one run with py-spy and look for the hottest function."),
    ("U", "user", "py-spy pointed at a regex in the CSV writer. Swapped it for str.split and "
                  "the export now finishes in twelve minutes."),
    ("A", "assistant", "Nice work, that's a big win."),
]


@parsed
def test_an_opening_request_in_no_known_words_is_a_goal() -> None:
    assert episode_ticks(EXPORT) == [(0, 2, "success", None)]


@parsed
def test_only_the_first_user_turn_answered_by_the_assistant_in_its_session_opens() -> None:
    evs = list(build_events(one_session(EXPORT)))

    def goal(evs: list[Event], i: int) -> Goal | None:
        return opening(evs, i, parse(evs[i].text))

    base = goal(evs, 0)
    assert base is not None and base.kind == "want"
    assert goal(evs, 2) is None  # a later user turn answers the assistant: no opening
    assert goal(evs, 3) is None and goal(evs[:1], 0) is None  # no turn after it
    other = [evs[0], dataclasses.replace(evs[1], session="s2"), *evs[2:]]
    assert goal(other, 0) is None  # the assistant answers in another session
    unanswered = [evs[0], dataclasses.replace(evs[1], role="user"), *evs[2:]]
    assert goal(unanswered, 0) is None  # the next turn is no assistant's
    crash = [dataclasses.replace(evs[0], text="our staging database keeps crashing every "
                                              "night. ideas?"), *evs[1:]]
    found = goal(crash, 0)
    assert found is not None and found.kind == "problem"


@parsed
def test_between_people_an_opener_is_no_goal() -> None:
    chat = [(sp if role == "user" else "B", "user", text) for sp, role, text in EXPORT]
    assert episode_ticks(chat) == []


@parsed
def test_a_greeting_before_the_request_leaves_the_goal_to_the_request() -> None:
    turns = [("U", "user", "hey, long week here"),
             ("A", "assistant", "Sorry to hear that. What's going on?"),
             ("U", "user", "My bathroom fan stopped spinning. How do I fix it?"),
             ("A", "assistant", "Switch off the breaker, take the cover off and clean the dust "
                                "off the motor."),
             ("U", "user", "Cleaned it and it spins again, quiet as new."),
             ("A", "assistant", "Great!")]
    assert episode_ticks(turns) == [(2, 4, "success", None)]


SEEDLINGS = [
    ("U", "user", "My tomato seedlings keep falling over. How do I stop that?"),
    ("A", "assistant", "They are leggy from too little light. Move them under a lamp 10 cm "
                       "above the leaves."),
    ("U", "user", "Moved them under the lamp, they look sturdier now."),
    ("A", "assistant", "Good start."),
]


@parsed
def test_a_user_who_leaves_to_try_it_has_no_outcome_yet() -> None:
    assert episode_ticks(SEEDLINGS) == [(0, 2, "success", None)]
    left = [*SEEDLINGS, ("U", "user", "will try it for a week and see")]
    assert episode_ticks(left) == []
    # the trial is not the user's last turn: the verdict before it stands
    thanked = [*left, ("A", "assistant", "Good luck!"), ("U", "user", "thanks!")]
    assert episode_ticks(thanked) == [(0, 2, "success", None)]
    # a turn after the trial is said: the search goes on
    back = [*left, ("A", "assistant", "Keep the lamp on 14 hours a day."),
            ("U", "user", "A week on, they stand up straight and look healthy.")]
    assert episode_ticks(back)[0][1:3] == (6, "success")


@parsed
def test_a_trial_again_or_elsewhere_after_a_result_keeps_it() -> None:
    turns = [*SEEDLINGS[:2], ("U", "user", "Moved them under the lamp, they stand up straight "
                                           "now."),
             ("A", "assistant", "Great to hear!"),
             ("U", "user", "I'll try the same trick with the peppers next spring.")]
    assert episode_ticks(turns) == [(0, 2, "success", None)]


@parsed
def test_what_a_trial_is() -> None:
    for said in ("k. will try monday", "I'll test it tonight", "will keep an eye on it",
                 "I'll run it past her tomorrow and see what she thinks"):
        doc = parse(said)
        assert doc is not None and trials(doc), said
    for said in ("I'll post the paper form.", "will do", "I tried it twice.",
                 "I'll try it on the other machine too", "will try it monday?"):
        doc = parse(said)
        assert doc is not None and not trials(doc), said


def _outcome(text: str) -> str | None:
    doc = parse(text)
    assert doc is not None
    return parsed_outcome(doc, None, user=True)


@parsed
def test_understanding_and_an_acknowledgement_are_no_result() -> None:
    assert _outcome("that makes sense now.") is None
    assert _outcome("ok, the lamp is up now.") is None
    assert _outcome("we're good now.") == "success"  # a mild state is still one
    assert _outcome("it opens fine now.") == "success"


@parsed
def test_a_certain_loss_of_the_speaker_is_a_failure() -> None:
    assert _outcome("The coach is sold out too. We'll miss the interview.") == "failure"
    assert _outcome("We missed the last ferry by ten minutes.") == "failure"
    assert _outcome("If the coach is full we'll miss the interview.") is None
    assert _outcome("I hope we won't miss it.") is None
    assert _outcome("I miss my old bike.") is None  # present: a feeling, no loss said
    assert _outcome("I'm going to lose the deposit.") == "failure"  # a plain future
    assert _outcome("I'm not going to lose the deposit.") is None
    assert _outcome("If I'm going to lose the deposit, tell me.") is None
    assert _outcome("We never missed the last ferry.") is None
    assert _outcome("The ferry we missed left at nine.") is None  # not what the turn says
    assert _outcome("We'll miss you at the party.") is None  # a person: a feeling
    assert _outcome("I'm going to miss you guys.") is None
    assert _outcome("We'll miss our flight.") == "failure"


@parsed
def test_a_loss_the_goal_wanted_is_no_failure() -> None:
    turns = [("U", "user", "I want to lose five kilos before the summer."),
             ("A", "assistant", "Cut out sugary drinks and walk for 40 minutes a day."),
             ("U", "user", "Did both for three months and I lost six kilos.")]
    assert all(label != "failure" for _, _, label, _ in episode_ticks(turns))
