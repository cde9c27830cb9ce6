"""Episodes from the spaCy parse (`parsed_polarity`, `parsed_episodes`, the parsed path of
`episodes.find_episodes`): goals by dependency relations and lemmas, outcomes by a polarity
flip against the goal's anchors, chat that is no task, the text rules as the fallback.

Skipped when the `nlp` extra is not installed, except in CI (RMH_REQUIRE_NLP=1 makes it a
failure), like `test_conv_nlp`."""

from __future__ import annotations

import json
import random

import pytest

from vault import build_events, find_episodes, load_conversations
from vault.conversation.nlp import parse
from vault.conversation.parsed_attempts import advice
from vault.conversation.parsed_episodes import Goal, parsed_goal
from vault.conversation.parsed_outcomes import parsed_outcome

from .nlp_fixtures import INSTALLED

pytestmark = pytest.mark.skipif(not INSTALLED, reason="the nlp extra is not installed")


def _goal(text: str) -> Goal | None:
    return parsed_goal(parse(text))


@pytest.mark.parametrize("text,kind", [
    ("I'm trying to get the nightly build to pass on the CI server.", "want"),
    ("We have to migrate the orders table before the launch.", "want"),
    ("I'd love to get my 10k time under 50 minutes.", "want"),
    ("How can I make the importer accept tabs?", "want"),
    ("Is there a way to keep the dog off the couch?", "want"),
    ("Help me move the mailbox to the new domain.", "want"),
    ("I can't get the scanner to talk to the laptop.", "want"),
    ("I'm getting a KeyError in the billing job.", "problem"),
    ("The dishwasher leaks from the door.", "problem"),               # a verb of malfunction
    ("The garage door opener won't respond to the remote.", "problem"),  # negation, noun subject
    ("The kettle barely warms the water.", "problem"),                # a denying hedge
    ("The projector keeps switching itself off.", "problem"),         # keep + V-ing
    ("The wiki search is painfully slow.", "problem"),                # a bad state
    ("The basil leaves are turning brown.", "problem"),               # a change of state
    ("The gateway returns 504 errors at night.", "problem"),          # a problem noun
    ("Our chat bot stopped answering commands.", "problem"),          # stop + V-ing
])
def test_goals_from_the_parse(text: str, kind: str) -> None:
    goal = _goal(text)
    assert goal is not None and goal.kind == kind


@pytest.mark.parametrize("text", [
    "I can't wait to see you on Friday!",        # the speaker's mind, not a thing's trouble
    "It won't take long, don't worry.",          # a pronoun's negation is an idiom
    "Are you okay? Did anyone get mad at you?",  # a question states no trouble
    "I wanted a modern vibe for the living room.",  # a past want is a story, not a goal
    "I'd love to see a photo of it!",            # a want with no task verb in it
    "I need a new jacket for the winter.",
    "Thanks, that's so kind of you.",
    "The leaves look lovely this time of year.",
])
def test_chat_states_no_goal(text: str) -> None:
    assert _goal(text) is None


def test_a_goal_is_said_in_the_first_two_sentences_of_a_turn() -> None:
    story = "Hey! Great weekend. The dishwasher at my aunt's place leaks from the door."
    assert _goal(story) is None
    assert _goal("Hey! The dishwasher leaks from the door.") is not None


def _out(goal_text: str, text: str, *, user: bool = True) -> str | None:
    return parsed_outcome(parse(text), _goal(goal_text), user=user)


@pytest.mark.parametrize("goal,text,label", [
    # success / failure verbs, negation flips them
    ("The cron job isn't running on the new host.", "Switching to absolute paths fixed it.",
     "success"),
    ("The cron job isn't running on the new host.", "That didn't help at all.", "failure"),
    ("The upload form hangs on big files.", "Raised it, uploads go through now.", "success"),
    # a problem verb denied is a success, said again a failure; a problem coming back
    ("The sink drains slowly and overflows.", "It hasn't overflowed once since Monday.",
     "success"),
    ("My router drops the connection every hour.", "It dropped again at noon.", "failure"),
    ("I'm trying to fix the rattle in the dashboard.", "The rattle came back after a day.",
     "failure"),
    # polarity flip against the goal's anchors
    ("I want the printer to print on both sides.", "It prints on both sides now.", "success"),
    ("I want the dough to rise overnight.", "The dough didn't rise at all.", "failure"),
    ("Our replica is lagging behind the primary.", "The replica caught up within minutes.",
     "success"),
    ("Our replica is lagging behind the primary.", "The replica is still behind.", "failure"),
    ("Is there a way to stop my cat scratching the sofa?", "The sofa is safe.", "success"),
    ("I need to get the dashboard to show local time.", "The charts still show UTC.",
     "failure"),
    # now / still / a bad state
    ("The editor freezes when I open a big project.", "Opens instantly now.", "success"),
    ("The tap drips all night.", "It drips worse than before now.", "failure"),
    # a pronoun of the goal's thing, nobody / nothing, a problem ending or coming back
    ("My emails to Outlook users bounce back.", "They get delivered now.", "success"),
    ("My emails to Outlook users bounce back.", "They still bounce.", "failure"),
    ("The website's contact form never sends anything.", "Still nothing arrives.", "failure"),
    ("The new monitor flickers at 144 Hz.", "The flicker stopped with the new cable.",
     "success"),
    ("The car makes a grinding noise when I brake.", "The noise is gone.", "success"),
    ("Our CI pipeline is red on main since this morning.", "Main is green again.", "success"),
    ("The app crashes on startup on Android 14.", "The update didn't change anything.",
     "failure"),
    ("My knee hurts after every run longer than 5k.", "Ran 8k yesterday without any pain.",
     "success"),
    ("Our chat bot stopped answering commands.", "The bot responds again.", "success"),
    ("The shower drain is clogged again.", "Water still stands in the tray.", "failure"),
    ("How do I get my bread to have bigger holes?", "The crumb is open, exactly what I wanted.",
     "success"),
    # problem nouns and idioms
    ("The deploy script throws errors on Windows.", "It ran without errors.", "success"),
    ("The deploy script throws errors on Windows.", "No luck, same error as before.", "failure"),
    ("The export looks washed out in the browser.", "Thanks, that did the trick!", "success"),
])
def test_outcomes_by_polarity(goal: str, text: str, label: str) -> None:
    assert _out(goal, text) == label


@pytest.mark.parametrize("goal,text", [
    ("The build fails on the runner.", "Try pinning the compiler."),        # an instruction
    ("The build fails on the runner.", "If the cache is stale it will pass."),  # a condition
    ("The build fails on the runner.", "I hope it works tomorrow."),        # an intent
    ("The build fails on the runner.", "Did the tests pass?"),              # a question
    ("The build fails on the runner.", "You are passing the wrong flag."),  # a diagnosis
    ("The build fails on the runner.", "No problem, happy to help!"),       # courtesy
    ("I want to eat healthier.", "Cooking really helps me relax."),         # a habit
    ("I want to eat healthier.", "Gonna keep pushing and working hard."),   # an activity
    ("My tax return was rejected.", "It was a great weekend though."),      # a pronoun, past
])
def test_what_reports_no_outcome(goal: str, text: str) -> None:
    assert _out(goal, text) is None


def test_an_assistants_advice_is_no_outcome_but_its_past_result_is() -> None:
    goal = "How can I keep slugs off my lettuce?"
    assert _out(goal, "Copper tape and beer traps both work well.", user=False) is None
    assert _out(goal, "I fixed the config and the tests pass now.", user=False) == "success"


def test_advice_is_an_instruction_or_a_suggestion_not_a_courtesy() -> None:
    assert advice(parse("pin the compiler to version 12."))
    assert advice(parse("You could lower the buffer size."))
    assert not advice(parse("Take care and enjoy the trip!"))
    assert not advice(parse("Wow, that looks great."))


def _conv(turns: list[tuple[str, str, str]], cid: str = "c") -> object:
    said = [{"id": f"{cid}:{i}", "speaker": sp, "role": role, "text": text}
            for i, (sp, role, text) in enumerate(turns)]
    (conv,) = load_conversations(json.dumps({"format": "rmh-conversation/1", "id": cid,
                                             "sessions": [{"id": "s1",
                                                           "date": "2025-03-04T09:00",
                                                           "turns": said}]}))
    return conv


def _episodes(turns: list[tuple[str, str, str]], *, use_nlp: bool = True) -> list[tuple[
        int, int, str]]:
    conv = _conv(turns)
    eps = find_episodes(build_events(conv, use_nlp=use_nlp), use_nlp=use_nlp)  # type: ignore[arg-type]
    return [(e.goal.tick, e.outcome.tick, e.outcome.label) for e in eps]


TASK = [("Ann", "user", "Our seedlings are turning yellow."),
        ("Bot", "assistant", "Water them less and add a little nitrogen feed."),
        ("Ann", "user", "Cut back the watering last week."),
        ("Ann", "user", "Worse, honestly. Half of them have died.")]


def test_a_task_the_text_rules_miss_is_found_from_the_parse() -> None:
    assert _episodes(TASK) == [(0, 3, "failure")]
    assert _episodes(TASK, use_nlp=False) == []  # the fallback keeps its own reading


def test_the_outcome_is_said_by_the_one_with_the_task() -> None:
    chat = [("Cal", "user", "My old van keeps stalling on hills."),
            ("Dave", "user", "Check the fuel filter first."),
            ("Dave", "user", "Mine works great now, by the way.")]
    assert _episodes(chat) == []
    assert _episodes([*chat, ("Cal", "user", "Swapped the filter, it pulls fine now.")]) == [
        (0, 3, "success")]


def test_no_attempt_between_goal_and_outcome_no_episode() -> None:
    chat = [("Ann", "user", "The heater is broken again."),
            ("Ben", "user", "Oh no, that's annoying!"),
            ("Ann", "user", "It works now, it just needed a kick.")]
    assert _episodes(chat) == []
    said = [("Ann", "user", "The build fails on the runner."),
            ("Ann", "user", "Fixed it, the build passes now.")]
    assert _episodes(said) == []
    assert _episodes(said, use_nlp=False) == [(0, 1, "success")]  # the rules need none


def test_an_agents_session_takes_instructions_as_goals() -> None:
    agent = [("Dev", "user", "Fix the flaky login test in test_auth.py."),
             ("Agent", "assistant", "I froze the clock in the fixture; the test passes now.")]
    assert _episodes(agent) == [(0, 1, "success")]
    chat = [("Ann", "user", "Fix yourself a drink and sit down."),
            ("Ben", "user", "Try the lemonade."), ("Ann", "user", "It works now.")]
    assert _episodes(chat) == []  # no assistant: an instruction is no goal


def test_generated_turns_give_the_same_episodes_twice_and_never_raise() -> None:
    parts = ["The build", "It", "I", "We", "The printer", "My cat", "The sofa", "fails",
             "works", "won't start", "is slow", "keeps crashing", "passes now", "still",
             "didn't help", "Try", "restarting", "no luck", "?", ".", "again", "now",
             "I'd love to", "how do I", "fixed it", "came back", "😀", "", "—", "[photo]"]
    rng = random.Random(29)
    for n in range(12):
        turns = [(("A", "user") if k % 2 == 0 else ("B", "assistant" if n % 2 else "user"))
                 for k in range(6)]
        said = [(sp, role, " ".join(rng.choice(parts) for _ in range(rng.randint(0, 9))))
                for sp, role in turns]
        first = _episodes(said)
        assert first == _episodes(said)
        assert all(g < o for g, o, _ in first)


# Session 12, second round (`parsed_reports`): outcomes said without a verb of success or
# failure, goals a person states about their own experience, a modal's scope, and the
# assistant's echo of a failure.

@pytest.mark.parametrize("text", [
    "I keep losing my keys somewhere in the flat.",                  # a lapse, kept
    "We keep missing the Monday standup.",
    "I reinstalled the driver and the mouse still lags.",            # still, after an act
    "I cleaned the filter but the fan still makes that noise.",
    "The router says it's unreachable again.",                       # a state, said by it
])
def test_goals_of_ones_own_experience(text: str) -> None:
    assert _goal(text) is not None


@pytest.mark.parametrize("text", [
    "I keep practising the scales every day.",                       # persistence
    "I keep thinking about the trip.",
    "My brother still lives in Boston.",                             # still, no act before
])
def test_persistence_and_plain_still_state_no_goal(text: str) -> None:
    assert _goal(text) is None


G = "The nightly export keeps timing out."


@pytest.mark.parametrize("text,label", [
    ("Backfill complete and nobody noticed.", "success"),            # a thing said done
    ("Index rebuilt: 40 ms. Import done.", "success"),
    ("The upgrade is finished.", "success"),
    ("Way better than last week.", "success"),                       # against before
    ("Honestly worse than before.", "failure"),
    ("It is much better now.", "success"),
    ("That's a dead end.", "failure"),                               # the attempt judged
    ("So that's a lost cause, we're stuck with the old vendor.", "failure"),
    ("Ran it for a week with no timeout errors at all.", "success"),
    ("Two nights with no timeout error at all.", "success"),         # a named problem denied
    # a modal in the next clause leaves this one a statement
    ("The queue drains in a minute now, the team can finally run reports at noon.",
     "success"),
])
def test_outcomes_without_a_verb_of_success_or_failure(text: str, label: str) -> None:
    assert _out(G, text) == label


@pytest.mark.parametrize("text", [
    "I'm done for today.",                     # a person done is no result
    "Better to wait, I think.",                # advice, no comparison with before
    "You'd be better off asking them.",
    "The report finished at noon.",            # an event, not the task's verdict
    "Yeah, we can really get amazing stuff done together.",  # no thing said done
    "Yoga's a great choice, it's done wonders for my back.",
    "No problem, happy to help!",
    "That's a great idea.",
    "If the cache is warm, the export will finish sooner, we could try.",
])
def test_what_reports_no_outcome_without_verbs(text: str) -> None:
    assert _out(G, text) is None


def test_the_assistants_echo_does_not_replace_the_users_failure() -> None:
    said = [("Dev", "user", "The payroll export keeps timing out."),
            ("Bot", "assistant", "Split the export into monthly batches."),
            ("Dev", "user", "Tried that too, so that's a dead end, we're stuck with it."),
            ("Bot", "assistant", "Sorry it didn't work out.")]
    assert _episodes(said) == [(0, 2, "failure")]
    alone = [said[0], said[1], ("Bot", "assistant", "Sorry, the batches failed as well.")]
    assert _episodes(alone) == [(0, 2, "failure")]  # the assistant's own failure still counts
