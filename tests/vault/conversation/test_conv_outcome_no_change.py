"""Two outcome classes of the fourth round (`parsed_outcomes`): "still the same" said alone is
no change (a failure, like "same result"), and a comparison with no good / bad word in it
("more grey than white now") is a change of no known direction, not a success said now.
Fresh phrasings in other domains than the bench sets, and negatives.

The cases skip when the `nlp` extra is not installed, except in CI (RMH_REQUIRE_NLP=1 makes it
a failure), like `test_conv_parsed_episodes`."""

from __future__ import annotations

import pytest

from vault.conversation.nlp import parse
from vault.conversation.parsed_episodes import parsed_goal
from vault.conversation.parsed_outcomes import parsed_outcome

from .nlp_fixtures import INSTALLED

parsed = pytest.mark.skipif(not INSTALLED, reason="the nlp extra is not installed")


def _out(goal: str, text: str) -> str | None:
    return parsed_outcome(parse(text), parsed_goal(parse(goal), instructions=True), user=True)


@parsed
@pytest.mark.parametrize(("goal", "text"), [
    ("The car's tyre pressure light keeps coming on.",
     "Pumped all four up at the garage. Drove to work, still the same."),
    ("My sourdough starter won't bubble.", "Fed it twice a day for a week: still the same!"),
    ("The bathroom fan rattles at night.", "Tightened the screws, it's still exactly the same."),
])
def test_still_the_same_alone_is_a_failure(goal: str, text: str) -> None:
    assert _out(goal, text) == "failure"


@parsed
@pytest.mark.parametrize("text", [
    "We're still the same friends we were at school.",
    "Is it still the same address?",
])
def test_still_the_same_before_a_noun_or_asked_is_no_verdict(text: str) -> None:
    assert _out("The garden gate won't latch.", text) is None


@parsed
@pytest.mark.parametrize(("goal", "text"), [
    ("How do I get the grease mark off my linen shirt?",
     "Washed it twice. The mark is more grey than yellow now."),
    ("The deck stain looks patchy, how do I even it out?",
     "Stained the boards again, they are darker than the rail now."),
    ("How do I buff out the scratch on my car door?",
     "Used the polish twice. the scratch is still visible, a little more silver than black "
     "now."),
    ("The kettle has limescale all over the element, how do I clean it?",
     "Boiled vinegar in it. the scale is still there, a bit more white than brown now."),
])
def test_a_comparison_with_no_good_or_bad_word_is_no_success(goal: str, text: str) -> None:
    assert _out(goal, text) != "success"


@parsed
@pytest.mark.parametrize(("goal", "text", "want"), [
    ("The fridge makes a humming noise.", "Levelled the feet, it's much better now.",
     "success"),
    ("The lawnmower won't start.", "New spark plug in, it starts now.", "success"),
])
def test_a_verdict_said_now_still_counts(goal: str, text: str, want: str) -> None:
    assert _out(goal, text) == want
