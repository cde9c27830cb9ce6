"""Slack's workspace export (session 29 CHATTXT): a channel's day files are one conversation,
a session a day, speakers by `users.json`, joins and bots left out; a day file alone reads."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault import load_slack_export, load_transcript
from vault.errors import ConversationFormatError

USERS = [{"id": "U1", "name": "ann", "real_name": "Ann Lee",
          "profile": {"display_name": "annie"}},
         {"id": "U2", "name": "bo", "profile": {"real_name": "Bo Park", "display_name": ""}}]
DAY1 = [{"type": "message", "subtype": "channel_join", "user": "U2", "text": "<@U2> joined",
         "ts": "1714550000.000100"},
        {"type": "message", "user": "U1", "text": "I sold my bike, <@U2>",
         "ts": "1714557600.000200"},
        {"type": "message", "subtype": "bot_message", "text": "deploy ok", "ts": "1714557700.1"},
        {"type": "message", "user": "U2", "text": "why?", "ts": "1714557660.000300",
         "thread_ts": "1714557600.000200"}]
DAY2 = [{"type": "message", "user": "U3", "user_profile": {"real_name": "Cy Guest"},
         "text": "I row a kayak", "ts": "1714640400.000100"}, 7,
        {"type": "message", "user": "U1", "text": "ok", "ts": "soon"}]


def _export() -> dict[str, str]:
    return {"users.json": json.dumps(USERS), "channels.json": "[]",
            "general/2024-05-01.json": json.dumps(DAY1),
            "general/2024-05-02.json": json.dumps(DAY2),
            "random/2024-05-01.json": "{not json"}


def test_a_slack_export_is_a_conversation_a_channel() -> None:
    loaded = load_slack_export(_export())
    general, random = loaded.conversations
    assert (general.conversation_id, random.conversation_id) == ("general", "random")
    assert [s.session_id for s in general.sessions] == ["2024-05-01", "2024-05-02"]
    assert [(t.turn_id, t.speaker, t.text, t.when) for t in general.turns()] == [
        ("1714557600.000200", "annie", "I sold my bike, @Bo Park", datetime(2024, 5, 1, 10)),
        ("1714557660.000300", "Bo Park", "why?", datetime(2024, 5, 1, 10, 1)),
        ("1714640400.000100", "Cy Guest", "I row a kayak", datetime(2024, 5, 2, 9))]
    assert random.sessions == ()
    assert loaded.problems == (
        "general/2024-05-02.json: message 2: not an object",
        "general/2024-05-02.json: message 3: unreadable ts 'soon'",
        "random/2024-05-01.json: not JSON (Expecting property name enclosed in double quotes)")


def test_a_slack_day_file_alone_reads_and_an_export_without_one_is_refused() -> None:
    (conv,) = load_transcript(json.dumps(DAY1), "auto", "general").conversations
    assert [t.speaker for t in conv.turns()] == ["U1", "U2"]  # no users.json: the ids
    with pytest.raises(ConversationFormatError, match="no channel folder"):
        load_slack_export({"users.json": "[]"})


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(), st.text(max_size=5), st.fixed_dictionaries(
    {"type": st.sampled_from(["message", "file"])},
    optional={"ts": st.one_of(st.text(max_size=12), st.floats(), st.integers(), st.none()),
              "text": st.one_of(st.text(max_size=12), st.integers()),
              "user": st.one_of(st.text(max_size=4), st.none()),
              "subtype": st.sampled_from(["me_message", "channel_join"]),
              "user_profile": st.one_of(st.none(), st.dictionaries(st.text(max_size=3),
                                                                   st.text(max_size=3)))})),
    max_size=6))
def test_a_hostile_day_file_is_read_or_refused_never_a_crash(messages: list[object]) -> None:
    loaded = load_slack_export({"users.json": json.dumps(messages),
                                "c/2024-01-01.json": json.dumps(messages)})
    for turn in loaded.conversations[0].turns():
        assert turn.text.strip() and turn.speaker.strip()
    try:
        load_transcript(json.dumps(messages), "slack", "c")
    except ConversationFormatError:
        return


@pytest.mark.parametrize(("raw", "said"), [
    ("Q&amp;A at 5 &lt;3 &gt; 2", "Q&A at 5 <3 > 2"),
    ("see <#C024BE7LR|general> and <#C024BE7LR>", "see #general and #C024BE7LR"),
    ("<!here> <!channel> <!subteam^S01|@devs> ping", "@here @channel @devs ping"),
    ("docs <https://example.com/a?b=1&amp;c=2|the site>, <mailto:a@b.c|mail> <https://x.org>",
     "docs the site (https://example.com/a?b=1&c=2), mail (mailto:a@b.c) https://x.org"),
    ("<@U1|annie> &amp;amp; <@U9>", "@annie &amp; @U9"),
])
def test_slack_markup_reads_as_a_person_saw_it(raw: str, said: str) -> None:
    """Slack escapes &, < and > in a message's text (&amp; &lt; &gt;) and writes channels,
    @here and links as <...> markup: the turn holds what the channel showed, not the escapes
    (an "amp" token in every message that said "&")."""
    day = [{"type": "message", "user": "U1", "text": raw, "ts": "1714557600.000200"}]
    loaded = load_slack_export({"users.json": json.dumps(USERS),
                                "general/2024-05-01.json": json.dumps(day)})
    (conv,) = loaded.conversations
    assert [t.text for t in conv.turns()] == [said]
