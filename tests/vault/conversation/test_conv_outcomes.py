"""Outcomes by lemma, and the issue's task-shaped exchange: one episode, entities that are
entities (no `try`, `lesson`, `pinning`, `build still failed`)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from vault.conversation.episodes import find_episodes
from vault.conversation.events import build_events
from vault.conversation.formats import Conversation, Session, Turn
from vault.conversation.outcomes import outcome
from vault.conversation.task_words import goal_terms


@pytest.mark.parametrize("text, expected", [
    ("Pinning the compiler to version 12 worked, the build passes now.", "success"),
    ("It works now.", "success"),
    ("That fixed it!", "success"),
    ("The tests pass again.", "success"),
    ("Thanks, that helped.", "success"),
    ("I cleared the build cache first but the build still failed.", "failure"),
    ("That didn't work.", "failure"),
    ("It doesn't pass on Windows.", "failure"),
    ("No luck, same error.", "failure"),
    ("It failed at first, but it works now.", "success"),
    ("I'm trying to get the nightly build to pass.", None),
    ("I'm working on the parser.", None),
    ("I work at a bakery.", None),
    ("I helped my friend move.", None),
    ("Did that fix it?", None),
    ("We should fix the docs.", None),
])
def test_outcome_by_lemma(text: str, expected: str | None) -> None:
    assert outcome(text) == expected


T0 = datetime(2025, 3, 4, 9, 0)
SAID = [("Dana", "user", "I'm trying to get the nightly build to pass on the CI server."),
        ("Agent", "assistant", "Try clearing the build cache first."),
        ("Dana", "user", "I cleared the build cache first but the build still failed."),
        ("Agent", "assistant", "The runner upgraded the compiler. Pin the compiler to version 12."),
        ("Dana", "user", "Pinning the compiler to version 12 worked, the build passes now."),
        ("Dana", "user", "Lesson learned: always pin the compiler version in CI.")]


def test_the_ci_exchange_is_one_successful_episode_with_its_lesson() -> None:
    turns = tuple(Turn(f"s1:{i}", sp, text, T0 + timedelta(minutes=i), role=role)
                  for i, (sp, role, text) in enumerate(SAID))
    events = build_events(Conversation("ci", (Session("s1", T0, turns),)))
    (ep,) = find_episodes(events)
    assert (ep.goal.tick, ep.outcome.tick, ep.outcome.label) == (0, 4, "success")
    assert [p.label for p in ep.steps] == ["tried", "tried", "step"]  # the failure was a try
    assert ep.lesson is not None and ep.lesson.tick == 5
    keys = {e.key for ev in events for e in ev.entities if e.kind != "speaker"}
    assert not keys & {"try", "lesson", "pinning", "build still failed", "build cache first",
                       "build pass"}
    assert {"nightly build", "ci server", "compiler", "build cache"} <= keys


@pytest.mark.parametrize("text, expected", [
    # wider success vocabulary (lemma classes, phrases, states), negation-aware
    ("Rebooting the router sorted it.", "success"),
    ("Clearing the cache did the trick.", "success"),
    ("The payment went through on the second card.", "success"),
    ("Both replicas are running and healthy now.", "success"),
    ("The pipeline is green again.", "success"),
    ("The tap no longer leaks.", "success"),
    ("The upload hasn't stalled since.", "success"),
    # failures: give up, still + a bad state or a problem, worse
    ("We gave up and bought a new one.", "failure"),
    ("The fan still overheats under load.", "failure"),
    ("The query is still slow.", "failure"),
    ("The noise is worse than before.", "failure"),
    ("It crashed again after an hour.", "failure"),
    # no result: negated phrases, nouns, descriptions, habits, idioms, intents
    ("Don't give up!", None),
    ("I haven't gone through the photos yet.", None),
    ("Taking breaks is important.", None),
    ("Fixing bikes is a great hobby.", None),
    ("There was a broken chair in the hall.", None),
    ("It usually works for me.", None),
    ("My grandfather passed away last spring.", None),
    ("It'll be fixed by Friday.", None),
    ("The library sorts books by colour.", None),
    # second round: phrases of result and of no change, a diagnosis of "you"
    ("The import ran without errors this time.", "success"),
    ("The merge is through.", "success"),
    ("Same problem after the reboot.", "failure"),
    ("We rolled the release back.", "failure"),
    ("Made no difference at all.", "failure"),
    ("Looking forward to the day it's back to normal.", None),
    ("You are passing the wrong flag.", None),
    ("All the work's paying off.", None),
])
def test_outcome_by_lemma_class_with_a_wider_vocabulary(text: str, expected: str | None) -> None:
    assert outcome(text) == expected


def test_a_goal_word_negated_after_a_thing_is_a_failure_and_said_with_now_a_success() -> None:
    terms = goal_terms("i want the kite to fly higher than the trees.")
    assert outcome("It didn't fly at all, the wind dropped.", terms) == "failure"
    assert outcome("It flies well above the oaks now.", terms) == "success"
    assert outcome("I can't wait to fly it again.", terms) is None  # the speaker, an idiom
    assert outcome("It didn't fly at all.") is None  # without the goal it says nothing
