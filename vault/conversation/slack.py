"""Slack's workspace export -> `Conversation`: a channel's messages, a session a day.

Slack's export (Workspace settings > Import/Export Data > Export) is a zip of `users.json`,
`channels.json` and a folder per channel of day files (`general/2024-05-01.json`), each a list
of messages ``{"type": "message", "user", "text", "ts", "user_profile": {"display_name",
"real_name"}, "subtype"?, "thread_ts"?}``. Read here:

- one day file (`rmh ingest general/2024-05-01.json`): one conversation, named `default_id`;
- the unzipped folder (`rmh ingest EXPORT_DIR`; `load_slack_export` of its files): one
  conversation per channel folder, named by it, its day files in name order.

A speaker is named by `users.json` (display name, else real name, else name), else by the
`user_profile` a message of theirs carries, else by their user id; a text reads as the
channel showed it (`shown`: `<@U123>` "@name", `<#C1|general>` "#general", `<!here>`
"@here", a link's label and url, `&amp;` `&lt;` `&gt;` as `&` `<` `>`). A message with a
subtype other than "thread_broadcast", "file_share" or "me_message" (joins, topic changes,
bots) is no turn; thread replies are turns where they
fall in time. A turn's id is its `ts` (unique in a channel, kept as the export grows); its
time is `ts`'s seconds, UTC, naive; a day is a session (`chat_lines`). A message that is not
an object, or has no readable `ts`, is a problem, skipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ..errors import ConversationFormatError
from .chat_lines import Message, conversation
from .formats import Conversation, decode_json, text_only, timestamp
from .transcripts import Loaded

_SAID_SUBTYPES = (None, "thread_broadcast", "file_share", "me_message")
# Slack's markup in a message's text: <@U1> a person, <#C1|name> a channel, <!here> a
# broadcast, <url|label> a link; &, < and > themselves are written &amp; &lt; &gt;
_MARKUP = re.compile(r"<([@#!]?)([^<>|]*)(?:\|([^<>]*))?>")
_ESCAPES = re.compile(r"&(amp|lt|gt);")
_DAY_FILE = re.compile(r"^([^/]+)/(\d{4}-\d{2}-\d{2})\.json$")


def is_slack(obj: Any) -> bool:
    """Whether a decoded JSON value is a Slack day file: a list of messages with `ts`."""
    first = obj[0] if isinstance(obj, list) and obj else None
    return isinstance(first, Mapping) and first.get("type") == "message" and "ts" in first


def parse_slack(messages: Any, cid: str, users: Mapping[str, str] | None = None
                ) -> tuple[Conversation, tuple[str, ...]]:
    """The conversation (named `cid`) and the problems of a channel's messages."""
    if not isinstance(messages, list):
        raise ConversationFormatError("slack: not a list of messages")
    problems: list[str] = []
    read = _messages(messages, {**_profiles(messages), **(users or {})}, "", problems)
    return conversation(cid, read), tuple(problems)


def _profiles(messages: list[Any]) -> dict[str, str]:
    """{user id: name} from the `user_profile` the messages carry (first one each)."""
    out: dict[str, str] = {}
    for msg in messages:
        profile = msg.get("user_profile") if isinstance(msg, Mapping) else None
        user = msg.get("user") if isinstance(msg, Mapping) else None
        if isinstance(profile, Mapping) and isinstance(user, str) and user not in out:
            name = next((str(profile[k]) for k in ("display_name", "real_name", "name")
                         if profile.get(k)), "")
            if name:
                out[user] = name
    return out


def _messages(messages: list[Any], names: Mapping[str, str], where: str,
              problems: list[str]) -> list[Message]:
    read: list[Message] = []
    for n, msg in enumerate(messages, start=1):
        if not isinstance(msg, Mapping):
            problems.append(f"{where}message {n}: not an object")
            continue
        if msg.get("type") != "message" or msg.get("subtype") not in _SAID_SUBTYPES:
            continue
        ts = msg.get("ts")
        try:
            # the digits after the point tell messages of one second apart: no time
            when = timestamp(float(ts) if isinstance(ts, str) else ts).replace(microsecond=0)
        except (ConversationFormatError, ValueError):
            problems.append(f"{where}message {n}: unreadable ts {ts!r}")
            continue
        text = msg.get("text")
        if not isinstance(text, str):
            continue
        user = str(msg.get("user") or "")
        speaker = names.get(user) or user or str(msg.get("username") or "?")
        text = shown(text, names)
        read.append(Message(n, when, str(ts), speaker, [text]))
    return read


def shown(text: str, names: Mapping[str, str]) -> str:
    """A message's text as the channel showed it: `<@U1>` "@name" (by `names`), `<#C1|general>`
    "#general", `<!here>` "@here", `<url|label>` "label (url)", `<url>` the url, and the
    escapes &amp; &lt; &gt; as & < > (each once: "&amp;amp;" is "&amp;")."""

    def markup(m: re.Match[str]) -> str:
        kind, target, label = m[1], m[2], m[3]
        if kind == "@":
            return "@" + names.get(target, label or target)
        if kind == "#":
            return "#" + (label or target)
        if kind == "!":
            return label if label and label.startswith("@") else "@" + (label or target)
        return f"{label} ({target})" if label else target

    unescape = {"amp": "&", "lt": "<", "gt": ">"}
    return _ESCAPES.sub(lambda m: unescape[m[1]], _MARKUP.sub(markup, text))


def user_names(users: Any) -> dict[str, str]:
    """Slack `users.json` -> {user id: the name a person sees}."""
    out: dict[str, str] = {}
    for u in users if isinstance(users, list) else []:
        if not isinstance(u, Mapping) or not isinstance(u.get("id"), str):
            continue
        got = u.get("profile")
        profile: Mapping[str, Any] = got if isinstance(got, Mapping) else {}
        name = next((str(v) for v in (profile.get("display_name"), u.get("real_name"),
                                      profile.get("real_name"), u.get("name")) if v), "")
        if name:
            out[u["id"]] = name
    return out


def load_slack_export(files: Mapping[str, str]) -> Loaded:
    """The conversations (one per channel) and problems of an unzipped Slack export, given as
    {path relative to the export's root ("general/2024-05-01.json", "users.json"): text}.
    ConversationFormatError when no path is a channel's day file."""
    problems: list[str] = []
    users = user_names(_decoded(files.get("users.json", "[]"), "users.json", problems))
    days: dict[str, list[str]] = {}
    for path in sorted(files):
        m = _DAY_FILE.match(path)
        if m is not None:
            days.setdefault(m[1], []).append(path)
    if not days:
        raise ConversationFormatError("slack: no channel folder of day files "
                                      "(CHANNEL/YYYY-MM-DD.json) in the export")
    convs: list[Conversation] = []
    for channel in sorted(days):
        lists: list[tuple[str, list[Any]]] = []
        for path in days[channel]:
            got = _decoded(files[path], path, problems)
            if isinstance(got, list):
                lists.append((path, got))
            elif got is not None:
                problems.append(f"{path}: not a list of messages")
        names = {**_profiles([m for _, got in lists for m in got]), **users}
        read: list[Message] = []
        for path, got in lists:
            read += _messages(got, names, f"{path}: ", problems)
        convs.append(text_only(conversation(channel, read)))
    return Loaded(tuple(convs), tuple(problems))


def _decoded(text: str, path: str, problems: list[str]) -> Any:
    try:
        return decode_json(text)
    except json.JSONDecodeError as exc:
        problems.append(f"{path}: not JSON ({exc.msg})")
        return None
