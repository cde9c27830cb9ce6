"""Outcomes by lemma, and the issue's task-shaped exchange: one episode, entities that are
entities (no `try`, `lesson`, `pinning`, `build still failed`)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from vault.conversation.episodes import find_episodes
from vault.conversation.events import build_events
from vault.conversation.formats import Conversation, Session, Turn
from vault.conversation.outcomes import outcome


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
