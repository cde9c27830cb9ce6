"""Any conversation file -> `Loaded`: which reader a file goes to, by `--format` or by shape.

The readers: `formats` (simple, LoCoMo, LongMemEval), `transcripts` (Claude Code, Codex CLI,
OpenAI chat), `exports` (ChatGPT, Claude.ai), the text chats (`whatsapp`, `plain_chat`) and
a Slack channel's day file (`slack`; a whole export folder: `slack.load_slack_export`) and a
DiscordChatExporter JSON export of a channel (`discord`).
Auto-detection tries JSON first, then the JSONL shapes, then the text shapes (a WhatsApp
header on the first line; then a plain transcript), and names every shape read when none fits.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..errors import ConversationFormatError
from .discord import is_discord, parse_discord
from .exports import EXPORT_FORMATS, export_kind, parse_export
from .formats import AS_TEXT, EXPECTED, FORMATS, Conversation, decode_json, load, text_only
from .plain_chat import is_plain_chat, parse_plain
from .slack import is_slack, parse_slack
from .transcripts import (
    TRANSCRIPT_FORMATS,
    Loaded,
    detect_jsonl,
    is_openai_chat,
    json_lines,
    parse_claude_code,
    parse_codex,
    parse_openai,
)
from .whatsapp import DATE_ORDERS, is_whatsapp, parse_whatsapp

TEXT_FORMATS: tuple[str, ...] = ("whatsapp", "text", "slack", "discord")
ALL_FORMATS: tuple[str, ...] = FORMATS + TRANSCRIPT_FORMATS + EXPORT_FORMATS + TEXT_FORMATS
__all__ = ["ALL_FORMATS", "DATE_ORDERS", "Loaded", "load_report"]


def load_report(text: str, fmt: str = "auto", default_id: str = "conversation",
                date_order: str | None = None) -> Loaded:
    """Any supported file (`ALL_FORMATS`; "auto" detects it) -> conversations and problems.

    JSON formats (simple, LoCoMo, LongMemEval, OpenAI chat) are decoded whole and a bad file
    is a ConversationFormatError; the JSONL transcripts are read line by line and a bad line
    is a problem, skipped; so is a WhatsApp or plain transcript's message whose time is no
    time. `default_id` names a conversation whose file names none. `date_order` ("dmy",
    "mdy") says how a WhatsApp export's dates read where the file does not show it. A NUL or
    a lone surrogate in any of it is U+FFFD (formats.text_only)."""
    loaded = _load_report(text, fmt, default_id, date_order)
    return Loaded(tuple(text_only(c) for c in loaded.conversations), loaded.problems)


def _load_report(text: str, fmt: str, default_id: str, date_order: str | None) -> Loaded:
    if fmt not in ALL_FORMATS:
        raise ConversationFormatError(f"unknown format {fmt!r}; one of {', '.join(ALL_FORMATS)}")
    if fmt == "claude-code":
        return parse_claude_code(text, default_id)
    if fmt == "codex":
        return parse_codex(text, default_id)
    if fmt == "whatsapp":
        return _one(*parse_whatsapp(text, default_id, date_order))
    if fmt == "text":
        return _one(*parse_plain(text, default_id))
    if fmt == "slack":
        return _one(*parse_slack(_json(text), default_id))
    if fmt == "discord":
        return _one(*parse_discord(_json(text), default_id))
    if fmt in EXPORT_FORMATS:
        return Loaded(*parse_export(_json(text), fmt, default_id))
    if fmt == "auto":
        try:
            obj = decode_json(text)
        except json.JSONDecodeError:
            if is_whatsapp(text):  # its first line: no JSON line is one (a JSONL decodes all)
                return _one(*parse_whatsapp(text, default_id, date_order))
            kind = detect_jsonl(text)
            chats = _openai_lines(text, default_id) if kind is None else None
            if chats is not None:
                return chats
            if kind is None:
                if is_plain_chat(text):
                    return _one(*parse_plain(text, default_id))
                raise ConversationFormatError(f"format not recognised (not JSON, nor JSONL or "
                                              f"text of a known shape); {EXPECTED}; {AS_TEXT}"
                                              ) from None
            return _load_report(text, kind, default_id, date_order)
        if is_openai_chat(obj):
            return parse_openai(obj, default_id)
        if (export := export_kind(obj)) is not None:
            return Loaded(*parse_export(obj, export, default_id))
        if is_slack(obj):
            return _one(*parse_slack(obj, default_id))
        if is_discord(obj):
            return _one(*parse_discord(obj, default_id))
        if isinstance(obj, Mapping) and "sessions" not in obj:
            kind = detect_jsonl(text)  # a one-line JSONL file is also valid JSON
            if kind is not None:
                return _load_report(text, kind, default_id, date_order)
            if (chats := _openai_lines(text, default_id)) is not None:
                return chats
        return Loaded(load(text, "auto"))
    if fmt == "openai":
        chats = _openai_lines(text, default_id)
        return chats if chats is not None else parse_openai(_json(text), default_id)
    return Loaded(load(text, fmt))


def _one(conv: Conversation, problems: tuple[str, ...]) -> Loaded:
    return Loaded((conv,), problems)


def _openai_lines(text: str, default_id: str) -> Loaded | None:
    """A JSONL of OpenAI chats (a `{"messages": [...]}` a line, as fine-tuning files are: a
    conversation each, named by its "id", else `default_id-LINE`) or of chat messages (a
    `{"role", "content"}` a line: one chat) -> Loaded; None when its JSON lines are neither."""
    read = list(json_lines(text))
    objs = [(n, obj) for n, obj, problem in read if problem is None]
    problems = [problem for _, _, problem in read if problem is not None]
    if objs and all(is_openai_chat(o) for _, o in objs):
        convs: list[Conversation] = []
        for n, obj in objs:
            got = parse_openai(obj, f"{default_id}-{n}")
            convs.extend(got.conversations)
            problems.extend(f"line {n}: {p}" for p in got.problems)
        return Loaded(tuple(convs), tuple(problems))
    if objs and all(is_openai_chat([o]) for _, o in objs):
        got = parse_openai([o for _, o in objs], default_id)
        return Loaded(got.conversations, (*problems, *got.problems))
    return None


def _json(text: str) -> Any:
    try:
        return decode_json(text)
    except json.JSONDecodeError as exc:
        raise ConversationFormatError(f"invalid JSON ({exc.msg} at line {exc.lineno})"
                                      ) from None
