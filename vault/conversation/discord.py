"""DiscordChatExporter's JSON export of a channel -> `Conversation` (a session a day).

DiscordChatExporter (Tyrrrz/DiscordChatExporter, the tool Discord users export with; its
`JsonMessageWriter.cs`, read, not copied) writes one file per channel: ``{"guild": {"id",
"name", "iconUrl"}, "channel": {"id", "type", "categoryId", "category", "name", "topic"},
"dateRange": {...}, "exportedAt", "messages": [...], "messageCount"}``, each message ``{"id",
"type", "timestamp", "timestampEdited", "callEndedTimestamp", "isPinned", "content",
"author": {"id", "name", "discriminator", "nickname", "color", "isBot", "roles", "avatarUrl"},
"attachments", "embeds", "stickers", "reactions", "mentions", "reference"?, ...}``; `type` is
the name of Discord's message kind ("Default", "Reply", ...; an unnamed one its number) and
`timestamp` ISO 8601 with an offset.

Read here: the conversation is named "GUILD #CHANNEL" (a DM export's guild is "Direct
Messages"; without names, `default_id`); a message is a turn said by its author's nickname
(else name, else id) at its timestamp (UTC, naive, to the second, as Slack's), its id its turn
id (unique in a channel, kept as the export grows); the messages are taken in time order
(the exporter can write newest first; a tie by id), a day a session (`chat_lines`).
Discord's own lines (the kinds DiscordChatExporter calls system notifications, 1 to 18: a
member joined, a pin, a call, a name change; by name or number) are no turns, nor is a
message with no text (attachments, stickers only). A message that is not an object, or whose
timestamp is no time, is a problem, skipped.

DiscordChatExporter's plain-text export is not read: its header's date is written in the
format the user picked (`--locale`), which this reader would have to guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..errors import ConversationFormatError
from .chat_lines import Message, conversation
from .formats import Conversation, timestamp

# DiscordChatExporter's MessageKind names of kinds 1..18 (its IsSystemNotification)
SYSTEM_KINDS = frozenset({
    "RecipientAdd", "RecipientRemove", "Call", "ChannelNameChange", "ChannelIconChange",
    "ChannelPinnedMessage", "GuildMemberJoin", "ThreadCreated",
    *(str(k) for k in range(1, 19))})


def is_discord(obj: Any) -> bool:
    """Whether a decoded JSON value is a DiscordChatExporter export: an object with a
    `channel` object and a `messages` list."""
    return (isinstance(obj, Mapping) and isinstance(obj.get("channel"), Mapping)
            and isinstance(obj.get("messages"), list))


def parse_discord(obj: Any, default_id: str) -> tuple[Conversation, tuple[str, ...]]:
    """The conversation and the problems of a DiscordChatExporter JSON export (module
    docstring); ConversationFormatError when `obj` is no such export."""
    if not is_discord(obj):
        raise ConversationFormatError("discord: not a DiscordChatExporter JSON export (an "
                                      "object with a \"channel\" and a \"messages\" list)")
    problems: list[str] = []
    read: list[tuple[tuple[datetime, int, int, str, int], Message]] = []
    for n, msg in enumerate(obj["messages"], start=1):
        if not isinstance(msg, Mapping):
            problems.append(f"message {n}: not an object")
            continue
        if str(msg.get("type", "Default")) in SYSTEM_KINDS:
            continue
        try:
            when = timestamp(msg.get("timestamp")).replace(microsecond=0)
        except ConversationFormatError:
            problems.append(f"message {n}: unreadable timestamp {msg.get('timestamp')!r}")
            continue
        text = msg.get("content")
        if not isinstance(text, str):
            continue
        ident = str(msg.get("id") or f"m{n}")
        # a tie in time: by id (Discord's ids grow with time), then by place in the file;
        # digits compared as numbers without int() (CONV5: an id of 5000 digits was a
        # ValueError out of int(): Python's 4300-digit limit)
        digits = ident.lstrip("0")
        snowflake = ((0, len(digits), digits) if ident.isascii() and ident.isdigit()
                     else (1, 0, ""))
        read.append(((when, *snowflake, n), Message(n, when, ident, _author(msg.get("author")),
                                                    [text])))
    read.sort(key=lambda r: r[0])
    return conversation(_name(obj, default_id), [m for _, m in read]), tuple(problems)


def _author(author: Any) -> str:
    if not isinstance(author, Mapping):
        return "?"
    return next((str(author[k]) for k in ("nickname", "name", "id")
                 if isinstance(author.get(k), str | int) and str(author[k]).strip()), "?")


def _name(obj: Mapping[str, Any], default_id: str) -> str:
    parts = []
    for key, prefix in (("guild", ""), ("channel", "#")):
        got = obj.get(key)
        name = got.get("name") if isinstance(got, Mapping) else None
        if isinstance(name, str) and name.strip():
            parts.append(prefix + name.strip())
    return " ".join(parts) or default_id
