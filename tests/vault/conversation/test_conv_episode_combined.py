"""The parsed path with the text rules' goal where the parse finds none (`find_episodes`'s
`combine`, `parsed_episodes.turn_goal`): in an agent's session a user turn the parse reads no
goal in (a goal after a greeting, a sloppy sentence) but the rules do is a goal, its outcome
read by the parse under its chat guards; between people the parse alone decides. Fresh
phrasings in other domains than the bench sets. Also: in an agent's session a greeting fragment
before a goal does not count among the goal sentences of the parse (`parsed_goal`).

The cases skip when the `nlp` extra is not installed, except in CI (RMH_REQUIRE_NLP=1 makes it
a failure), like `test_conv_parsed_episodes`."""

from __future__ import annotations

from vault import build_events, find_episodes
from vault.conversation.nlp import parse
from vault.conversation.parsed_episodes import parsed_goal, turn_goal

from .nlp_fixtures import needs_nlp as parsed
from .nlp_fixtures import one_session

Turns = list[tuple[str, str, str]]


def _episodes(turns: Turns, *, combine: bool = True) -> list[tuple[int, int, str]]:
    conv = one_session(turns)
    eps = find_episodes(build_events(conv), combine=combine)
    return [(e.goal.tick, e.outcome.tick, e.outcome.label) for e in eps]


MISREAD = [
    ("U", "user", "The booking confirmations from our B&B are landing in guests' spam "
                  "folders."),
    ("A", "assistant", "Add SPF and DKIM records for the B&B's sending domain."),
    ("U", "user", "Added both records. Today's confirmation went to the guest's inbox, it "
                  "works now."),
]
MISREAD_FAILED = [*MISREAD[:2], ("U", "user", "Added both records. The confirmations still "
                                              "fail to reach the inbox, no luck.")]
GREETING_FIRST = [
    ("U", "user", "Hi! Quick one. My e-bike battery won't charge past 60 percent."),
    ("A", "assistant", "Some chargers stop early when the cells are cold; charge it indoors."),
    ("U", "user", "Charged it in the hallway overnight and it reached 100 percent, so it "
                  "works now."),
]


@parsed
def test_the_parse_alone_reads_no_goal_where_the_rules_do() -> None:
    # the premise of the combination: a phrasing the parse has no goal class for
    assert parsed_goal(parse(MISREAD[0][2]), instructions=True) is None
    assert _episodes(MISREAD, combine=False) == []


@parsed
def test_the_rules_goal_is_used_where_the_parse_finds_none_and_the_parse_reads_the_outcome(
) -> None:
    assert _episodes(MISREAD) == [(0, 2, "success")]
    assert _episodes(MISREAD_FAILED) == [(0, 2, "failure")]


@parsed
def test_a_greeting_before_the_goal_does_not_count_as_a_sentence() -> None:
    # "Hi!" and "Quick one." have no verb: the goal is the first sentence said
    assert parsed_goal(parse(GREETING_FIRST[0][2]), instructions=True) is not None
    assert _episodes(GREETING_FIRST, combine=False) == [(0, 2, "success")]
    # the third sentence with a verb is still past the first two
    late = "Hi! I got the bike in May. I ride it daily. Its battery won't charge past 60."
    assert parsed_goal(parse(late), instructions=True) is None
    # a longer verbless sentence is no opener (the small model may take its verb for a noun)
    assert parsed_goal(parse("Hello! The podcast audio crackles in the right channel."),
                       instructions=True) is not None
    # between people (no assistant) a greeting still counts: chat opens with exclamations
    assert parsed_goal(parse(GREETING_FIRST[0][2])) is None


@parsed
def test_the_fallback_goal_is_anchored_on_the_turns_own_nouns_and_verbs() -> None:
    goal = turn_goal(parse(GREETING_FIRST[0][2]), problem=True)
    assert goal.kind == "problem"
    assert {"battery", "percent"} <= goal.nouns
    assert "charge" in goal.wanted
    want = turn_goal(parse("i need to get the pond pump running again"), problem=False)
    assert want.kind == "want" and "pump" in want.nouns and "run" in want.wanted


@parsed
def test_a_fallback_goal_still_needs_an_outcome_from_the_parse() -> None:
    # the rules see a goal, the assistant answers, the user says nothing of a result
    turns = [
        ("U", "user", "Our club's match reports are landing in members' spam folders."),
        ("A", "assistant", "Check the thermostat's set point and the fuse in the plug."),
        ("U", "user", "Thanks, I'll have a look at the weekend."),
    ]
    assert _episodes(turns) == []


@parsed
def test_between_people_the_rules_goal_is_not_used() -> None:
    # no assistant: the rules' patterns fire on small talk, the parse alone decides
    chat = [
        ("Rosa", "user", "Hi! Long week. My old bike won't shift into top gear any more."),
        ("Omar", "user", "Oh no. Mine did that too, I took it to the shop on Elm street."),
        ("Rosa", "user", "Maybe I will. Anyway the picnic on Sunday went great, it worked "
                         "out perfectly!"),
    ]
    assert _episodes(chat) == _episodes(chat, combine=False) == []


@parsed
def test_a_goal_the_parse_finds_keeps_its_own_anchors() -> None:
    turns = [
        ("U", "user", "The label printer keeps jamming on the second sticker."),
        ("A", "assistant", "Clean the roller and reload the roll with the gap sensor aligned."),
        ("U", "user", "Cleaned the roller, it works now."),
    ]
    assert _episodes(turns) == _episodes(turns, combine=False) == [(0, 2, "success")]
