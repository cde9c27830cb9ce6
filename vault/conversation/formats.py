"""Conversation files -> `Conversation` values: LoCoMo, LongMemEval and rmh's simple JSON format.

The simple format (``"format": "rmh-conversation/1"``) is the one to write by hand::

    {"format": "rmh-conversation/1",
     "id": "alice-bob",                       # optional; default "conversation"
     "sessions": [
       {"id": "s1",                           # optional; default "S1", "S2", ...
        "date": "2024-05-01T10:00",          # ISO date or datetime; the session's date
        "turns": [
          {"speaker": "Alice", "text": "I started a pottery class.",
           "id": "t0",                        # optional; default "<session>:<n>"
           "date": "2024-05-01T10:05",       # optional; default the session's date
           "role": "user",                    # optional: user | assistant | system
           "entities": ["pottery class"]}]}]}  # optional; replaces automatic extraction

A file may also hold a list of such objects. LoCoMo (a list of samples with `conversation`,
`session_N`, `session_N_date_time`) and LongMemEval (a list of items with `haystack_sessions`,
`haystack_dates`, `haystack_session_ids`) are read as they are published. Every parser is a
pure function of the decoded JSON; dates are data, never the clock.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from ..errors import ConversationFormatError
from ..notes.clocks import MONTHS
from ..plural import counted

FORMATS: tuple[str, ...] = ("auto", "simple", "locomo", "longmemeval")
SIMPLE_TAG = "rmh-conversation/1"
# What the "format not recognised" error names: every shape `rmh ingest` reads.
EXPECTED = ("rmh reads: the simple format ({\"format\": \"rmh-conversation/1\", \"sessions\": "
            "[...]}), LoCoMo, LongMemEval, an OpenAI chat `messages` list (or a JSONL of chats "
            "or of messages), a ChatGPT or Claude.ai export (conversations.json), a Claude Code "
            "or Codex CLI session JSONL, a WhatsApp chat export (.txt), a plain \"Name: text\" "
            "transcript, a Slack export (its folder, or a channel's day file), a "
            "DiscordChatExporter JSON export of a channel")
# Text that auto-detection does not take for a chat (plain_chat.py `is_plain_chat`)
AS_TEXT = ("to read it as a plain \"Name: text\" transcript anyway, name the format: "
           "`rmh ingest --format text` (`\"format\": \"text\"` over JSON-RPC)")


@dataclass(frozen=True)
class Turn:
    """One utterance. `entities` is None unless the caller supplied them."""

    turn_id: str
    speaker: str
    text: str
    when: datetime
    role: str = "user"
    entities: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Session:
    """Turns said in one sitting, in order, with the session's date and the title its source
    gave it ("": none; a chat export's conversation title)."""

    session_id: str
    when: datetime
    turns: tuple[Turn, ...]
    title: str = ""


@dataclass(frozen=True)
class Conversation:
    """Sessions in order; `speakers` in order of first appearance."""

    conversation_id: str
    sessions: tuple[Session, ...]

    @property
    def speakers(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for s in self.sessions:
            for t in s.turns:
                seen.setdefault(t.speaker, None)
        return tuple(seen)

    def turns(self) -> tuple[Turn, ...]:
        return tuple(t for s in self.sessions for t in s.turns)


# What no note can hold: a NUL makes a note binary to every reader (and to the index), and a
# lone surrogate (a `\ud83d` cut from its pair, as agent transcripts carry) is no UTF-8 and
# stops the parser. json.loads has already joined every valid pair, so any left is lone.
_NOT_TEXT = re.compile("[\x00\ud800-\udfff]")


def _text(value: str) -> str:
    return _NOT_TEXT.sub("\ufffd", value)


def text_only(conv: Conversation) -> Conversation:
    """`conv` with each NUL and lone surrogate in its ids, speakers, texts, roles and entities
    replaced by U+FFFD (as a UTF-8 decoder marks what it cannot read)."""
    def turn(t: Turn) -> Turn:
        ents = None if t.entities is None else tuple(_text(e) for e in t.entities)
        return replace(t, turn_id=_text(t.turn_id), speaker=_text(t.speaker),
                       text=_text(t.text), role=_text(t.role), entities=ents)

    return Conversation(_text(conv.conversation_id), tuple(
        Session(_text(s.session_id), s.when, tuple(turn(t) for t in s.turns),
                " ".join(_text(s.title).split()))
        for s in conv.sessions))


def with_entities(conv: Conversation,
                  per_turn: Sequence[Sequence[str] | None]) -> Conversation:
    """`conv` with the entities of each turn (in `turns()` order) supplied: a list replaces
    automatic extraction for that turn (as a file's "entities" does), None keeps what the
    turn had. The caller's extractor (an LLM, in the harness) hands its answer in as data."""
    turns = conv.turns()
    if len(per_turn) != len(turns):
        raise ValueError(f"{len(per_turn)} entity lists for {counted(len(turns), 'turn')}")
    it = iter(per_turn)
    sessions = []
    for s in conv.sessions:
        new = []
        for t in s.turns:
            names = next(it)
            new.append(t if names is None else replace(t, entities=tuple(str(n) for n in names)))
        sessions.append(replace(s, turns=tuple(new)))
    return replace(conv, sessions=tuple(sessions))


_MONTHS = {m: i + 1 for i, m in enumerate(MONTHS)}
_LOCOMO_DATE = re.compile(
    r"^\s*(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$", re.I
)
_LME_DATE = re.compile(r"^\s*(\d{4})/(\d{2})/(\d{2})(?:\s*\(\w+\))?\s*(\d{1,2}):(\d{2})\s*$")


def parse_date(text: str) -> datetime:
    """ISO ("2024-05-01", "2024-05-01T10:00"), LoCoMo ("1:56 pm on 8 May, 2023") or
    LongMemEval ("2023/05/20 (Sat) 10:44") -> naive datetime; ConversationFormatError otherwise
    (also for a date of that shape that is no day: "31 February", "25:44"; CONV: a ValueError)."""
    try:
        return _parse_date(text)
    except ValueError:
        raise ConversationFormatError(f"unreadable date {text!r}") from None


def _parse_date(text: str) -> datetime:
    m = _LOCOMO_DATE.match(text)
    if m:
        hour, minute, ampm, day, month, year = m.groups()
        h = int(hour) % 12 + (12 if ampm.lower() == "pm" else 0)
        mon = _MONTHS.get(month.lower())
        if mon is None:
            raise ConversationFormatError(f"unknown month in date {text!r}")
        return datetime(int(year), mon, int(day), h, int(minute))
    m = _LME_DATE.match(text)
    if m:
        y, mo, d, h, mi = (int(g) for g in m.groups())
        return datetime(y, mo, d, h, mi)
    try:
        return datetime.fromisoformat(text.strip())
    except ValueError:
        raise ConversationFormatError(f"unreadable date {text!r}") from None


def naive_utc(when: datetime) -> datetime:
    """`when` to order turns by: a time with an offset (a simple-format file's
    "2024-05-02T10:00-07:00") as naive UTC, so that it orders among the naive ones (UTC:
    transcripts, LoCoMo) rather than stopping a sort with a TypeError; one before the year 1
    in UTC ("0001-01-01T00:00+01:00") as written."""
    if when.tzinfo is None:
        return when
    try:
        return when.astimezone(UTC).replace(tzinfo=None)
    except OverflowError:
        return when.replace(tzinfo=None)


def timestamp(value: Any) -> datetime:
    """An ISO timestamp ("...Z", "+00:00" or naive) or Unix seconds -> naive UTC datetime;
    ConversationFormatError for any other value, or one past the years 1..9999 (1e20, NaN,
    "0001-01-01T00:00+01:00"; CONV: an OverflowError stopped the whole file)."""
    try:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return datetime.fromtimestamp(float(value), UTC).replace(tzinfo=None)
        if not isinstance(value, str):
            raise ConversationFormatError(f"unreadable timestamp {value!r}")
        dt = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        return dt.astimezone(UTC).replace(tzinfo=None) if dt.tzinfo else dt
    except (ValueError, OverflowError, OSError):
        raise ConversationFormatError(f"unreadable timestamp {value!r}") from None


def _str(obj: Mapping[str, Any], key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise ConversationFormatError(f"{where}: {key!r} must be a string")
    return value


def _objects(value: Any, where: str) -> list[Mapping[str, Any]]:
    """`value` as a list of objects; ConversationFormatError naming `where` otherwise (CONV5:
    a number or a string there was a TypeError or an AttributeError out of the reader)."""
    if not isinstance(value, list):
        raise ConversationFormatError(f"{where} must be a list of turns")
    for j, item in enumerate(value, start=1):
        if not isinstance(item, Mapping):
            raise ConversationFormatError(f"{where}: turn {j} is not an object")
    return value


def parse_simple(obj: Mapping[str, Any]) -> Conversation:
    """One object in the simple format (see the module docstring)."""
    cid = str(obj.get("id", "conversation"))
    raw_sessions = obj.get("sessions")
    if not isinstance(raw_sessions, list):
        raise ConversationFormatError("simple format: 'sessions' must be a list")
    sessions: list[Session] = []
    for i, s in enumerate(raw_sessions, start=1):
        if not isinstance(s, Mapping):
            raise ConversationFormatError(f"session {i} is not an object")
        sid = str(s.get("id", f"S{i}"))
        when = parse_date(_str(s, "date", f"session {sid}"))
        turns: list[Turn] = []
        for j, t in enumerate(_objects(s.get("turns", []), f"session {sid}: 'turns'"),
                              start=1):
            ents = t.get("entities")
            turns.append(
                Turn(
                    turn_id=str(t.get("id", f"{sid}:{j}")),
                    speaker=_str(t, "speaker", f"turn {sid}:{j}"),
                    text=_str(t, "text", f"turn {sid}:{j}"),
                    when=when if t.get("date") is None  # a number was the session's date
                    else parse_date(_str(t, "date", f"turn {sid}:{j}")),
                    role=str(t.get("role", "user")),
                    entities=tuple(str(e) for e in ents) if isinstance(ents, list) else None,
                )
            )
        sessions.append(Session(sid, when, tuple(turns)))
    return Conversation(cid, tuple(sessions))


def parse_locomo(obj: Mapping[str, Any]) -> Conversation:
    """One LoCoMo sample: `conversation` holds `session_N` turn lists and their date strings.

    Turns keep LoCoMo's `dia_id` ("D1:3") as their id, so evidence ids match turn ids. Image
    captions (`blip_caption`) are appended to the text as "[shares a photo: ...]".
    """
    conv = obj.get("conversation")
    if not isinstance(conv, Mapping):
        raise ConversationFormatError("locomo: missing 'conversation'")
    # the keys themselves, by number then as written ("session_01" reads its own date key);
    # ASCII digits only, at most 9 (CONV5: "session_\u0661" was a KeyError, 5000 digits a
    # ValueError of int())
    keys = sorted((int(k[8:]), k) for k in conv if re.fullmatch(r"session_[0-9]{1,9}", k))
    sessions: list[Session] = []
    for n, key in keys:
        when = parse_date(_str(conv, f"{key}_date_time", "locomo"))
        turns: list[Turn] = []
        for j, t in enumerate(_objects(conv[key], f"locomo: {key!r}"), start=1):
            text = str(t.get("text", ""))
            caption = t.get("blip_caption")
            if isinstance(caption, str) and caption:
                text = f"{text} [shares a photo: {caption}]"
            speaker = _str(t, "speaker", f"locomo: {key} turn {j}")
            turns.append(Turn(str(t.get("dia_id", f"D{n}:{j}")), speaker, text, when))
        sessions.append(Session(f"S{n}", when, tuple(turns)))
    return Conversation(str(obj.get("sample_id", "locomo")), tuple(sessions))


def parse_longmemeval(obj: Mapping[str, Any]) -> Conversation:
    """One LongMemEval item: its haystack sessions become sessions, speakers user/assistant."""
    raw = obj.get("haystack_sessions")
    dates = obj.get("haystack_dates")
    if not isinstance(raw, list) or not isinstance(dates, list) or len(raw) != len(dates):
        raise ConversationFormatError("longmemeval: haystack_sessions/haystack_dates mismatch")
    ids = obj.get("haystack_session_ids") or [f"S{i}" for i in range(1, len(raw) + 1)]
    if not isinstance(ids, list) or len(ids) != len(raw):
        raise ConversationFormatError("longmemeval: haystack_session_ids/haystack_sessions "
                                      "mismatch")
    sessions: list[Session] = []
    for sid, date_text, turns_raw in zip(ids, dates, raw, strict=True):
        when = parse_date(str(date_text))
        where = f"longmemeval: session {sid}"
        turns = tuple(
            Turn(f"{sid}:{j}", _str(t, "role", f"{where} turn {j}"),
                 _str(t, "content", f"{where} turn {j}"), when, role=str(t["role"]))
            for j, t in enumerate(_objects(turns_raw, where), start=1)
        )
        sessions.append(Session(str(sid), when, turns))
    return Conversation(str(obj.get("question_id", "longmemeval")), tuple(sessions))


def detect(obj: Any) -> str:
    """Which format a decoded JSON value is in ("simple", "locomo" or "longmemeval")."""
    first = obj[0] if isinstance(obj, list) and obj else obj
    if isinstance(first, Mapping):
        if first.get("format") == SIMPLE_TAG or "sessions" in first:
            return "simple"
        if "conversation" in first:
            return "locomo"
        if "haystack_sessions" in first:
            return "longmemeval"
    raise ConversationFormatError(f"format not recognised (JSON of no known shape); {EXPECTED}")


def decode_json(text: str) -> Any:
    """`json.loads(text)`, where text the decoder cannot hold (nesting past the interpreter's
    recursion limit, an integer of more digits than `sys.get_int_max_str_digits()`) raises
    `json.JSONDecodeError` too, so a caller's one except clause covers hostile input (ADVRPC:
    `vault.ingest` of `[[[…` 3,000 deep or a 5,000-digit number was an internal error). A
    byte order mark before it is no part of it (CONV5: a JSON export saved "UTF-8 with BOM"
    was refused, "format not recognised", as the text formats were not)."""
    try:
        return json.loads(text.removeprefix("\ufeff"))
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise json.JSONDecodeError("nesting too deep", text, 0) from None
    except ValueError:
        raise json.JSONDecodeError("number too long", text, 0) from None


def load(text: str, fmt: str = "auto") -> tuple[Conversation, ...]:
    """Decode `text` (JSON) as conversations in format `fmt` ("auto" detects it)."""
    if fmt not in FORMATS:
        raise ConversationFormatError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")
    try:
        obj = decode_json(text)
    except json.JSONDecodeError as exc:
        raise ConversationFormatError(f"invalid JSON ({exc.msg} at line {exc.lineno})") from None
    kind = detect(obj) if fmt == "auto" else fmt
    items: Sequence[Any] = obj if isinstance(obj, list) else [obj]
    parser = {"simple": parse_simple, "locomo": parse_locomo, "longmemeval": parse_longmemeval}
    out: list[Conversation] = []
    for item in items:
        if not isinstance(item, Mapping):
            raise ConversationFormatError("every item must be a JSON object")
        out.append(text_only(parser[kind](item)))
    return tuple(out)
