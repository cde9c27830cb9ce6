"""The assistant's reaction as evidence of an outcome (`reactions`, VADER), plans that
reopen a failed task, a lesson turn's own report, and goals asked as questions
(`parsed_episodes`): fresh phrasings, none from the bench sets.

The parsed cases skip when the `nlp` extra (spaCy, its model, VADER) is not installed,
except in CI (RMH_REQUIRE_NLP=1 makes it a failure); the text-rules cases always run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from vault.conversation.nlp import parse
from vault.conversation.parsed_episodes import parsed_goal
from vault.conversation.reactions import NEGATIVE, OVERRULE, POSITIVE, judged, valence

from .nlp_fixtures import INSTALLED, episode_ticks

VADER = valence("good") is not None
if INSTALLED and not VADER and os.environ.get("RMH_REQUIRE_NLP") == "1":
    raise AssertionError("RMH_REQUIRE_NLP=1 but vadersentiment (the nlp extra) is missing")
parsed = pytest.mark.skipif(not (INSTALLED and VADER), reason="the nlp extra is not installed")

Turns = list[tuple[str, str, str]]


# -- judged: the bounds -----------------------------------------------------------------------

def test_a_reaction_fills_a_report_the_parse_read_no_verdict_in() -> None:
    assert judged(POSITIVE, None) == "success"
    assert judged(NEGATIVE, None) == "failure"
    assert judged(0.0, None) is None
    assert judged(POSITIVE - 0.01, None) is None  # "Fair enough." (+0.32): no success


def test_only_a_clear_reaction_overrules_the_parse() -> None:
    assert judged(OVERRULE, "failure") == "success"
    assert judged(-OVERRULE, "success") == "failure"
    assert judged(OVERRULE - 0.01, "failure") == "failure"  # a consolation (+0.46)
    assert judged(NEGATIVE, "success") == "success"
    assert judged(0.0, "failure") == "failure"


# -- the reaction in an episode ---------------------------------------------------------------

STARTER = [
    ("U", "user", "My sourdough starter smells like nail polish and won't rise."),
    ("A", "assistant", "Feed it twice a day with equal weights of flour and water and keep it "
                       "somewhere warm."),
    ("U", "user", "Fed it twice a day on top of the fridge for a week. Doubled in four hours "
                  "this morning, nailed it."),
    ("A", "assistant", "Fantastic, that's a lively starter."),
]


@parsed
def test_a_report_in_words_no_rule_knows_takes_the_assistants_praise() -> None:
    assert episode_ticks(STARTER[:3]) == []  # the parse alone reads no verdict in it
    assert episode_ticks(STARTER) == [(0, 2, "success", None)]


@parsed
def test_the_assistants_sympathy_makes_a_failure() -> None:
    turns = [("U", "user", "The clutch on my car keeps slipping when I pull away uphill."),
             ("A", "assistant", "Check the clutch fluid level first and top it up if it's low."),
             ("U", "user", "Topped it up. The garage said the plate is worn through, so we "
                           "sold the car for scrap."),
             ("A", "assistant", "I'm sorry, that's a painful end to it.")]
    assert episode_ticks(turns[:3]) == []
    assert episode_ticks(turns) == [(0, 2, "failure", None)]


@parsed
def test_clear_praise_overrules_a_misread_idiom() -> None:
    turns = [("U", "user", "The kitchen extractor fan keeps rattling on the top setting."),
             ("A", "assistant", "Tighten the screws holding the fan housing."),
             ("U", "user", "Tightened them and ran it on full power three evenings in a row, "
                           "same result every time: silent as a library."),
             ("A", "assistant", "Excellent, that's a proper fix.")]
    assert episode_ticks(turns[:3]) == [(0, 2, "failure", None)]  # "same result": the idiom
    assert episode_ticks(turns) == [(0, 2, "success", None)]


@parsed
def test_advice_after_a_report_is_no_reaction() -> None:
    turns = [*STARTER[:3], ("A", "assistant", "Try a warmer spot so it doubles faster.")]
    assert episode_ticks(turns) == []


# -- plans ------------------------------------------------------------------------------------

FAN = [
    ("U", "user", "The kitchen extractor fan keeps rattling on the top setting."),
    ("A", "assistant", "Tighten the screws holding the fan housing and clean the grease filter."),
    ("U", "user", "Tightened them, it still rattles."),
    ("A", "assistant", "Then the fan blade may be bent; it can be replaced."),
    ("U", "user", "Ok, I'll order a new blade at the weekend and try that."),
    ("A", "assistant", "Sounds like a plan, good luck!"),
]


@parsed
def test_a_further_attempt_announced_after_a_failure_leaves_the_task_open() -> None:
    assert episode_ticks(FAN[:4]) == [(0, 2, "failure", None)]
    assert episode_ticks(FAN) == []  # the plan reopens it; its "good luck" is no verdict


# -- a lesson turn that opens with its report -------------------------------------------------

@parsed
def test_a_lesson_turn_reports_its_outcome_before_the_lesson() -> None:
    turns = [("U", "user", "The scanner doesn't show up in the print dialog since the update."),
             ("A", "assistant", "Reinstall the scanner driver from the maker's site."),
             ("U", "user", "Reinstalled it, no change."),
             ("A", "assistant", "Then remove the old driver first and reinstall after a restart."),
             ("U", "user", "Removed the old one first and it scans fine now. Lesson: check the "
                           "drivers after every update.")]
    assert episode_ticks(turns) == [(0, 4, "success", 4)]


# -- goals asked as questions -----------------------------------------------------------------

@parsed
@pytest.mark.parametrize("text", [
    "My gran gave me a fern for the bathroom. It sits on the windowsill by the bath. what can "
    "i do to save it",
    "My gran gave me a fern for the bathroom. It sits on the windowsill by the bath. Its "
    "fronds have brown tips. What should I do?",
    "We moved into the flat in May. The bedroom window faces north. What am I doing wrong "
    "with the basil on its sill?"])
def test_a_question_for_the_speakers_act_closing_the_turn_is_a_goal(text: str) -> None:
    assert parsed_goal(parse(text), instructions=True) is not None
    assert parsed_goal(parse(text)) is None  # between people: only the first two sentences


@parsed
def test_an_episode_opens_on_a_question_after_its_context() -> None:
    turns = [("U", "user", "My gran gave me a fern for the bathroom. It sits on the windowsill "
                           "by the bath. what can i do to save it"),
             ("A", "assistant", "Mist it daily and move it out of the direct sun."),
             ("U", "user", "Moved it and misted it for two weeks. New fronds are coming through "
                           "green now.")]
    assert episode_ticks(turns) == [(0, 2, "success", None)]


# -- the text rules never load VADER ----------------------------------------------------------

def test_the_text_rules_do_not_import_vader() -> None:
    code = ("import sys\n"
            "from vault import build_events, find_episodes\n"
            "from tests.vault.conversation.nlp_fixtures import one_session\n"
            "conv = one_session([('U', 'user', 'I need to get the nightly build to pass.'),\n"
            "                    ('A', 'assistant', 'Pin the compiler.'),\n"
            "                    ('U', 'user', 'Pinning it worked, the build passes now.'),\n"
            "                    ('A', 'assistant', 'Great to hear!')])\n"
            "eps = find_episodes(build_events(conv, use_nlp=False), use_nlp=False)\n"
            "assert [e.outcome.label for e in eps] == ['success'], eps\n"
            "assert 'vaderSentiment' not in sys.modules\n")
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
