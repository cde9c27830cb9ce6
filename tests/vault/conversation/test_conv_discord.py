"""DiscordChatExporter's JSON export of a channel (session 30 CHATPERF): generated exports read
back the messages written, Discord's own lines and empty messages left out; any JSON of that
shape is read or refused with ConversationFormatError, never a crash."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault import ConversationFormatError, load_transcript
from vault.conversation.chat_lines import unmarked
from vault.conversation.discord import SYSTEM_KINDS


def _export(messages: list[dict[str, Any]], guild: str = "Guild", channel: str = "general"
            ) -> str:
    """A file as DiscordChatExporter writes it (JsonMessageWriter: every field it writes)."""
    return json.dumps({
        "guild": {"id": "1", "name": guild, "iconUrl": "https://cdn/x.png"},
        "channel": {"id": "2", "type": "GuildTextChat", "categoryId": "3",
                    "category": "Text Channels", "name": channel, "topic": None},
        "dateRange": {"after": None, "before": None},
        "exportedAt": "2024-06-01T10:00:00.000+00:00",
        "messages": messages, "messageCount": len(messages)}, ensure_ascii=False, indent=2)


def _message(ident: int, when: datetime, name: str, nickname: str | None, content: str,
             kind: str = "Default") -> dict[str, Any]:
    return {
        "id": str(ident), "type": kind, "timestamp": when.isoformat(timespec="milliseconds"),
        "timestampEdited": None, "callEndedTimestamp": None, "isPinned": False,
        "content": content,
        "author": {"id": str(9000 + ident), "name": name, "discriminator": "0000",
                   "nickname": nickname, "color": None, "isBot": False, "roles": [],
                   "avatarUrl": "https://cdn/a.png"},
        "attachments": [], "components": [], "embeds": [], "stickers": [], "reactions": [],
        "mentions": [], "inlineEmojis": []}


def test_an_export_reads_as_a_channel_with_a_session_a_day() -> None:
    t = datetime(2024, 5, 1, 21, 15, 7, 312000, tzinfo=timezone(timedelta(hours=2)))
    msgs = [_message(11, t, "alice", "Alice", "I sold my bike"),
            _message(12, t + timedelta(minutes=1), "bob", None, "", "GuildMemberJoin"),
            _message(13, t + timedelta(minutes=2), "bob", None, "Nice!\nWhere now?", "Reply"),
            _message(14, t + timedelta(minutes=3), "bob", None, "pinned a message", "6"),
            _message(15, t + timedelta(minutes=4), "bob", None, ""),  # an attachment only
            _message(16, t + timedelta(days=1), "alice", "Alice", "On a kayak")]
    loaded = load_transcript(_export(msgs))
    (conv,) = loaded.conversations
    assert conv.conversation_id == "Guild #general" and loaded.problems == ()
    assert [(s.session_id, [(u.turn_id, u.speaker, u.text, u.when) for u in s.turns])
            for s in conv.sessions] == [
        ("2024-05-01", [("11", "Alice", "I sold my bike", datetime(2024, 5, 1, 19, 15, 7)),
                        ("13", "bob", "Nice!\nWhere now?", datetime(2024, 5, 1, 19, 17, 7))]),
        ("2024-05-02", [("16", "Alice", "On a kayak", datetime(2024, 5, 2, 19, 15, 7))])]
    assert load_transcript(_export(msgs), "discord").conversations == (conv,)


def test_a_newest_first_export_reads_in_time_order_and_bad_messages_are_problems() -> None:
    t = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
    msgs: list[Any] = [_message(3, t + timedelta(hours=2), "c", None, "third"), "junk",
                       {**_message(2, t, "b", None, "when?"), "timestamp": "yesterday"},
                       _message(1, t, "a", None, "first")]
    loaded = load_transcript(_export(msgs, guild="Direct Messages", channel="bob"))
    (conv,) = loaded.conversations
    assert conv.conversation_id == "Direct Messages #bob"
    assert [u.text for u in conv.turns()] == ["first", "third"]
    assert loaded.problems == ("message 2: not an object",
                               "message 3: unreadable timestamp 'yesterday'")


def test_format_discord_refuses_other_json_naming_the_shape() -> None:
    with pytest.raises(ConversationFormatError, match="DiscordChatExporter"):
        load_transcript('{"messages": []}', "discord")
    with pytest.raises(ConversationFormatError, match="invalid JSON"):
        load_transcript("[01/01/2024 10:00] alice\nhi\n", "discord")


_NAME = st.text(st.characters(blacklist_categories=["Cs", "Cc"]), min_size=1, max_size=12)
_TEXT = st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"),
                max_size=30)
_KIND = st.sampled_from(["Default", "Reply", "20", *sorted(SYSTEM_KINDS)[:4]])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(-12, 14), _NAME,
                          st.none() | _NAME, _TEXT, _KIND), max_size=12),
       st.booleans())
def test_a_generated_export_reads_back_what_was_written(
        rows: list[tuple[int, int, str, str | None, str, str]], newest_first: bool) -> None:
    base = datetime(2023, 12, 30, tzinfo=UTC)
    msgs, want = [], []
    for i, (minutes, hours, name, nick, text, kind) in enumerate(rows):
        when = (base + timedelta(minutes=minutes)).astimezone(timezone(timedelta(hours=hours)))
        msgs.append(_message(100 + i, when, name, nick, text, kind))
        # the author's nickname, else name, else id: the first not blank (discord.py)
        speaker = unmarked(next(k for k in (nick, name, str(9000 + 100 + i))
                                if k is not None and k.strip()))
        if kind not in SYSTEM_KINDS and text.strip() and speaker:
            want.append((when.astimezone(UTC).replace(tzinfo=None), i, str(100 + i), speaker,
                         text.strip()))
    if newest_first:
        msgs.reverse()
    want.sort()
    if not want:
        return
    loaded = load_transcript(_export(msgs), "auto")
    (conv,) = loaded.conversations
    assert loaded.problems == ()
    assert [(u.when, u.turn_id, u.speaker, u.text) for u in conv.turns()] == [
        (w, ident, s, t) for w, _, ident, s, t in want]
    assert all(u.when.date().isoformat() == s.session_id.split(" ")[0]
               for s in conv.sessions for u in s.turns)


_JUNK = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.sampled_from(
                         ["id", "type", "timestamp", "content", "author", "name", "nickname"]),
                         inner, max_size=4), max_leaves=10)


@settings(max_examples=300, deadline=None)
@given(st.lists(_JUNK, max_size=5), _JUNK, st.sampled_from(["auto", "discord"]))
def test_any_export_shaped_json_is_read_or_refused_never_a_crash(
        messages: list[Any], channel: Any, fmt: str) -> None:
    text = json.dumps({"channel": channel if isinstance(channel, dict) else {"name": channel},
                       "messages": messages})
    try:
        loaded = load_transcript(text, fmt)
    except ConversationFormatError:
        return
    for conv in loaded.conversations:
        assert all(u.speaker and u.text for u in conv.turns())
