"""The goal/problem test and the rules lemmatiser of task talk (`task_words`), own sentences."""

from __future__ import annotations

import pytest

from vault.conversation.task_words import goal_terms, is_goal, lemma


@pytest.mark.parametrize("forms, key", [
    ("rise rises rising rose", "ris"), ("drop drops dropped dropping", "drop"),
    ("stick sticks stuck sticking", "stick"), ("succeed succeeds succeeded", "succeed"),
    ("fix fixes fixed fixing", "fix"), ("solve solves solved solving", "solv"),
    ("pass passes passed passing", "pass"), ("freeze freezes froze frozen", "freez"),
])
def test_every_inflection_of_a_verb_gives_one_lemma_key(forms: str, key: str) -> None:
    assert {lemma(f) for f in forms.split()} == {key}


@pytest.mark.parametrize("text", [
    "My phone keeps rebooting when the battery is low.",
    "The upload stalls at 99 percent.",
    "Our build agents are stuck in a queue since noon.",
    "The dishwasher won't drain.",
    "The invoice run hasn't finished since Monday.",
    "The thumbnails look washed out after the resize.",
    "Half of our replies end up in the recipients' spam folder.",
    "The report page times out for large accounts.",
    "I'd like to move the blog to a static site.",
    "We have to cut the container image below 200 MB.",
    "Could you help me set up a reverse proxy?",
    "The log volume fills up every night.",
    "I need a script that renames the photos by date.",
    "We want the dashboard to refresh every minute.",
])
def test_goals_and_problems_said_of_a_thing_are_goals(text: str) -> None:
    assert is_goal(" ".join(text.casefold().split())), text


@pytest.mark.parametrize("text", [
    "I can't wait for the weekend!",
    "Keep going, you are nearly there.",
    "I dropped by the bakery this morning.",
    "Work has piled up and I've been stuck inside all week.",
    "It breaks my heart to see the old cinema closed.",
    "Taking breaks helps me think.",
    "[shares a photo of a broken fence]",
    "Don't forget your umbrella.",
    "The river is not far from our house.",
    "I don't know what to cook tonight.",
    "I have a dog named Max.",
    "So much has gone down lately.",
    "I love the new cafe on the corner.",
])
def test_chat_that_states_no_task_is_no_goal(text: str) -> None:
    assert not is_goal(" ".join(text.casefold().split())), text


def test_goal_terms_split_what_is_wanted_from_what_is_wrong() -> None:
    wanted, problems = goal_terms("the bread keeps collapsing and i want it to rise.")
    assert lemma("rise") in wanted and "bread" in wanted
    assert problems == {lemma("collapsing")}
    assert goal_terms("the bread keeps collapsing and i want it to rise.") == (wanted, problems)
