"""An episode's outcome is the last verdict on its goal (`episodes._close`), on both paths,
and the goal and outcome classes of the third round (`parsed_episodes`, `parsed_outcomes`):
why-questions of trouble, a need of the speaker's own person, a problem under an onset verb,
a pronoun after a thing, mild good states said now, "still" on a neutral state, the speaker
stuck. Fresh phrasings in other domains than the bench sets; chat stays episode-free.

The parsed cases skip when the `nlp` extra is not installed, except in CI
(RMH_REQUIRE_NLP=1 makes it a failure), like `test_conv_parsed_episodes`."""

from __future__ import annotations

import pytest

from vault.conversation.nlp import parse
from vault.conversation.parsed_episodes import Goal, parsed_goal
from vault.conversation.parsed_outcomes import parsed_outcome

from .nlp_fixtures import episode_ticks
from .nlp_fixtures import needs_nlp as parsed

Turns = list[tuple[str, str, str]]


def _goal(text: str) -> Goal | None:
    return parsed_goal(parse(text), instructions=True)


def _out(goal: str, text: str, *, user: bool = True) -> str | None:
    return parsed_outcome(parse(text), _goal(goal), user=user)


# -- the structure: the last verdict wins ---------------------------------------------------

PARTIAL_THEN_FAILED = [
    ("U", "user", "The 3D printer keeps failing halfway through every print."),
    ("A", "assistant", "Level the bed and lower the print speed to 40 mm/s."),
    ("U", "user", "Levelled it. The first layer works now."),
    ("A", "assistant", "Good. Also dry the filament for a few hours."),
    ("U", "user", "Dried it overnight. It failed again at the same height, I gave up."),
]


@parsed
def test_a_partial_success_then_a_final_failure_is_a_failure_at_its_turn() -> None:
    assert episode_ticks(PARTIAL_THEN_FAILED) == [(0, 4, "failure", None)]


def test_the_text_rules_take_the_last_verdict_too() -> None:
    turns = [("U", "user", "I'm trying to get the nightly backup job to finish."),
             ("A", "assistant", "Exclude the cache folder and retry."),
             ("U", "user", "Excluded it. The backup job works now on the small share."),
             ("A", "assistant", "Now try the big share."),
             ("U", "user", "On the big share it failed again after two hours.")]
    assert episode_ticks(turns, use_nlp=False) == [(0, 4, "failure", None)]
    assert episode_ticks(turns[:3], use_nlp=False) == [(0, 2, "success", None)]


@parsed
def test_failures_then_a_final_success_is_a_success_and_an_echo_keeps_the_users_turn() -> None:
    turns = [("U", "user", "The garage door opener won't respond to the remote."),
             ("A", "assistant", "Replace the battery in the remote."),
             ("U", "user", "New battery, still nothing. No luck."),
             ("A", "assistant", "Then re-pair it: hold the learn button for ten seconds."),
             ("U", "user", "Re-paired it and the door opens fine now."),
             ("A", "assistant", "Great, glad it works now!")]
    assert episode_ticks(turns) == [(0, 4, "success", None)]


@parsed
def test_a_lesson_after_the_final_verdict_is_kept_and_ends_the_task() -> None:
    turns = [("U", "user", "The dishwasher won't dry the dishes."),
             ("A", "assistant", "Add rinse aid and use the hot cycle."),
             ("U", "user", "Did that. The dishes come out dry now."),
             ("A", "assistant", "Nice. Hard water is the usual cause."),
             ("U", "user", "Makes sense, we're on a well."),
             ("A", "assistant", "Then a softener could help long term."),
             ("U", "user", "Lesson learned: check the water hardness before blaming the machine."),
             ("U", "user", "The new filter failed again though.")]
    assert episode_ticks(turns) == [(0, 2, "success", 6)]


@parsed
def test_a_new_request_of_the_same_speaker_starts_a_new_task() -> None:
    turns = [("U", "user", "The podcast audio crackles in the right channel."),
             ("A", "assistant", "Swap the XLR cable on that microphone."),
             ("U", "user", "Swapped it, the crackle is gone."),
             ("U", "user", "Next question: how do I export the episode as a smaller file?"),
             ("A", "assistant", "Export at 96 kbps mono."),
             ("U", "user", "The export failed with a disk error.")]
    assert episode_ticks(turns) == [(0, 2, "success", None), (3, 5, "failure", None)]


# -- goals ----------------------------------------------------------------------------------

@parsed
@pytest.mark.parametrize("text,kind", [
    ("Why does my sourdough keep collapsing in the oven?", "problem"),    # why + trouble
    ("Why won't the smart lock accept my code?", "problem"),
    ("My son needs a costume that actually glows for the school play.", "want"),  # my X needs
    ("Our team needs to cut the cloud bill by a third.", "want"),
    ("The dryer began making a grinding noise last night.", "problem"),   # onset + V-ing
    ("The router started throwing errors after the update.", "problem"),
    ("The robot vacuum stopped docking.", "problem"),
])
def test_goal_classes(text: str, kind: str) -> None:
    goal = _goal(text)
    assert goal is not None and goal.kind == kind


@parsed
@pytest.mark.parametrize("text", [
    "Why did you move to Denver?",                     # a why-question of a person
    "My sister wants to see you soon.",                # a want with no act in it
    "My mom needed a break after the move.",           # a past need is a story
    "My kid started making friends at school.",        # an onset with no problem
    "The party was fun but it didn't last long.",      # a pronoun's negation with a complement
    "hi! what a day, finally home",
])
def test_chat_states_no_goal(text: str) -> None:
    assert _goal(text) is None


@parsed
def test_a_stopped_act_is_wanted_back_not_a_problem() -> None:
    goal = _goal("The robot vacuum stopped docking.")
    assert goal is not None and "dock" in goal.wanted and "dock" not in goal.problems
    assert _out("The robot vacuum stopped docking.", "It docks fine every time now.") == (
        "success")


@parsed
def test_a_greeting_then_the_goal_in_a_later_turn_of_a_third_person() -> None:
    turns = [("U", "user", "hey, rough day, finally got a minute"),
             ("A", "assistant", "Hi! What can I do for you?"),
             ("U", "user", "My son needs a costume that actually glows for the school play."),
             ("A", "assistant", "Sew in an LED strip with a coin battery pack."),
             ("U", "user", "Sewed it in. The costume glows now and he loves it.")]
    assert episode_ticks(turns) == [(2, 4, "success", None)]


# -- outcomes -------------------------------------------------------------------------------

@parsed
@pytest.mark.parametrize("goal,text,label", [
    ("The aquarium filter keeps clogging.", "We're all good now.", "success"),
    ("The aquarium filter keeps clogging.", "Everything's okay again.", "success"),
    ("The test suite throws a TimeoutError on CI.", "Reinstalled it, still a TimeoutError.",
     "failure"),
    ("The bathroom wall has mould that keeps coming back.", "The mould is still there.",
     "failure"),
    ("The router drops the connection every hour.", "So I'm stuck with the old router.",
     "failure"),
    ("The airline cancelled my flight and the refund is missing.",
     "The refund came through today.", "success"),
])
def test_outcome_classes(goal: str, text: str, label: str) -> None:
    assert _out(goal, text) == label


@parsed
@pytest.mark.parametrize("goal,text", [
    ("The aquarium filter keeps clogging.", "It was good to see you."),   # mild without now
    ("The aquarium filter keeps clogging.", "That's good to know."),
    ("My podcast feed stopped updating on Spotify.", "The show is still there."),  # neutral
])
def test_what_is_no_outcome(goal: str, text: str) -> None:
    assert _out(goal, text) is None


@parsed
def test_worth_fixing_is_no_fix_and_an_assistants_generic_recurrence_no_failure() -> None:
    assert _out("The lawnmower won't start.", "The mechanic says it isn't worth fixing.") != (
        "success")
    assert _out("The tap leaks.", "A drip tray keeps the leak from coming back.",
                user=False) is None


@parsed
def test_chat_with_a_want_of_ones_own_person_stays_episode_free() -> None:
    chat = [("Ann", "user", "My daughter wants to learn the violin this year."),
            ("Ben", "user", "You should find a teacher nearby!"),
            ("Ann", "user", "She had her first lesson, it was good."),
            ("Ben", "user", "That's great, she must be happy."),
            ("Ann", "user", "She still practises every day.")]
    assert episode_ticks(chat) == []
