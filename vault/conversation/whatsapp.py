"""WhatsApp's exported chat (`.txt`, "Export chat" > "Without media") -> `Conversation`.

A message starts with a header line, in one of two shapes (the phone's locale sets the date's
order and separator, the clock, and the words between):

- Android: ``12/31/23, 9:15 PM - Name: text`` (also ``31/12/2023, 21:15 - ...``,
  ``31.12.23, 21:15 - ...``, ``2023-12-31 21:15 - ...``; newer exports put U+202F before
  "PM");
- iOS: ``[31/12/2023, 21:15:07] Name: text`` (also ``[12/31/23, 9:15:07 PM] ...``,
  ``[31.12.23 klo 21.15.07] ...``); a line of media or of WhatsApp itself starts its text
  with U+200E (``‎image omitted``, ``‎<attached: ...>``, the group's "‎Messages and calls are
  end-to-end encrypted").

Checked against public parsers (not copied): Pustur/whatsapp-chat-parser (`src/parser.ts`:
one header regex for both shapes, dates ``\\d{1,4}[-/.] ?...``, clocks with "." or ":" and
"a. m."), joweich/chat-miner (`chatminer/chatparsers.py`: U+200E before the bracket, a year
first when the first field passes 99, day first when a first field passes 12) and
starkdmi/whats_json (LRM and no-break spaces cleaned before matching). Where those parsers
guess a date order that the file never shows (chat-miner falls back on day first), this reader
refuses: a date is memory, and 03/04 read the wrong way is a wrong memory.

The date order is decided from the whole file: a first field above 12 anywhere makes it day
first, a second field above 12 month first; a file showing both is refused, and so is one
showing neither unless the caller says (`date_order` "dmy" or "mdy"; `rmh ingest
--date-order`). A year of two digits is 20YY. A 12-hour clock (AM/PM, "a.m.", "p. m.") is
turned to 24 hours. Times are as the phone showed them (its local time, naive).

Not turns: WhatsApp's own lines (a header without "Name: ", such as Android's "Messages and
calls are end-to-end encrypted..." or "Alice added Bob"; an iOS text starting with U+200E;
in any language), media placeholders ("<Media omitted>", "image omitted"), deleted messages
("This message was deleted") and "null" (a view-once message); the "<This message was
edited>" note is cut. In a language other than English, a system line whose subject holds
": " is told by the quotation mark WhatsApp opens before it and that closes after the colon
(an odd number of quotation marks before the first ": ", an even number in the whole line,
in every line of that "name"), and a media placeholder by being the message's
whole text in `<...>` (no ":", "/" or "@" inside: no link, address or time).
A line that is no header belongs to the message above it. A header whose date or time is no
real one (31/02, 25:10) is a problem (`Loaded.problems`), its message skipped whole.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from datetime import datetime

from ..errors import ConversationFormatError
from .chat_lines import MARKS, Message, conversation, lines, unmarked
from .formats import Conversation

DATE_ORDERS: tuple[str, ...] = ("dmy", "mdy")
_HEADER = re.compile(
    f"^[{MARKS}]*(?P<br>\\[)?"
    r"(?P<a>\d{1,4})(?P<sep>[./-]) ?(?P<b>\d{1,2})(?P=sep) ?(?P<c>\d{1,4})\.?"
    r",?\s+(?:[^\W\d_]{1,4}\.?\s+)?"  # "klo", "um", "à" between date and time
    r"(?P<h>\d{1,2})[:.](?P<mi>\d{2})(?:[:.](?P<s>\d{2}))?"
    r"(?:\s*(?P<ap>[ap])\.?\s?m\.?)?"
    r"(?(br)\]\s|\s+[-\u2013]\s)(?P<rest>.*)$", re.I | re.S)
# What WhatsApp writes in place of a message, not what anyone said (English exports).
_NOT_SAID = re.compile(
    r"^(?:<media omitted>|(?:image|video|audio|sticker|gif|document|contact card) omitted"
    r"|<attached: [^>]*>|this message was deleted\.?|you deleted this message\.?|null"
    r"|missed (?:voice|video) call|waiting for this message\..*)$", re.I)
_EDITED = re.compile(r"\s*<this message was edited>\s*$", re.I)
_SYSTEM = re.compile(r"end-to-end encrypted|changed the subject|changed the group"
                     r"|created group|security code (?:with|changed)", re.I)
# The quotation marks WhatsApp puts round a subject or group name in a system line, in any
# language ("x", “x”, „x“, « x », 「x」); a sender's name holds them in pairs, if at all.
_QUOTES = frozenset('"\u201c\u201d\u201e\u201f\u00ab\u00bb\u2039\u203a\u300c\u300d'
                    '\u300e\u300f\uff02')
# Android's placeholder for a message it left out, in any language: the whole text one
# `<...>` ("<Media omitted>", "<Medien ausgeschlossen>", "<Multimedia omitido>")
_PLACEHOLDER = re.compile(r"^<[^<>\n:/@]+>$")
_Parts = tuple[int, int, int, int, int, int | None, str | None]


def is_whatsapp(text: str) -> bool:
    """Whether `text`'s first line that is not blank is a WhatsApp header."""
    return any(_HEADER.match(line) for line in _first(text))


def _first(text: str) -> list[str]:
    return next(([line] for line in lines(text) if unmarked(line)), [])


def parse_whatsapp(text: str, default_id: str, date_order: str | None = None
                   ) -> tuple[Conversation, tuple[str, ...]]:
    """The conversation (named `default_id`) and the problems of a WhatsApp export (module
    docstring); ConversationFormatError when no line is a header or the date order is not
    shown (nor given) or contradicts itself."""
    if date_order is not None and date_order not in DATE_ORDERS:
        raise ConversationFormatError(f"unknown date order {date_order!r}; one of "
                                      f"{', '.join(DATE_ORDERS)}")
    found: list[tuple[int, re.Match[str]]] = []
    body: list[list[str]] = []
    problems: list[str] = []
    for n, line in enumerate(lines(text), start=1):
        m = _HEADER.match(line)
        if m is not None:
            found.append((n, m))
            body.append([])
        elif body:
            body[-1].append(line)
        elif unmarked(line):
            problems.append(f"line {n}: before the first message")
    if not found:
        raise ConversationFormatError("whatsapp: no line starts like a WhatsApp message "
                                      "(\"12/31/23, 9:15 PM - Name: text\" or "
                                      "\"[31/12/2023, 21:15:07] Name: text\")")
    order = date_order or _order([(n, m) for n, m in found if len(m["a"]) < 3])
    messages: list[Message] = []
    for (n, m), more in zip(found, body, strict=True):
        try:
            when = _when(_parts(m, order), n)
        except ConversationFormatError as exc:
            problems.append(exc.reason)
            continue
        said = _said(m["rest"], bool(m["br"]))
        if said is not None:
            speaker, first = said
            clock = f"{when:%H:%M:%S}" if m["s"] else f"{when:%H:%M}"
            messages.append(Message(n, when, clock, speaker, [first, *more]))
    messages = _without_quoted(messages, bool(found[0][1]["br"]))
    for msg in messages:
        msg.text[-1] = _EDITED.sub("", msg.text[-1])
        whole = unmarked("\n".join(msg.text))
        if _NOT_SAID.match(whole) or _PLACEHOLDER.match(whole):
            msg.text = []
    return conversation(default_id, messages), tuple(problems)


def _order(found: Sequence[tuple[int, re.Match[str]]]) -> str:
    """"dmy" or "mdy" as the dates of `found` (day and month first) show it, else refused."""
    day = next(((n, m) for n, m in found if int(m["a"]) > 12), None)
    month = next(((n, m) for n, m in found if int(m["b"]) > 12), None)
    settle = ("set it with `--date-order dmy` (31/12) or `--date-order mdy` (12/31) "
              "(`date_order` over JSON-RPC)")
    if day is not None and month is not None:
        raise ConversationFormatError(
            f"whatsapp: the dates put the day first (line {day[0]}: {_date(day[1])}) and "
            f"the month first (line {month[0]}: {_date(month[1])}); {settle}")
    if day is None and month is None:
        if not found:
            return "dmy"  # every date has its year first: no order to decide
        raise ConversationFormatError(
            f"whatsapp: the dates never show whether the day or the month comes first (no "
            f"field above 12, e.g. line {found[0][0]}: {_date(found[0][1])}); {settle}")
    return "dmy" if day is not None else "mdy"


def _date(m: re.Match[str]) -> str:
    return f"{m['a']}{m['sep']}{m['b']}{m['sep']}{m['c']}"


def _parts(m: re.Match[str], order: str) -> _Parts:
    a, b, c = m["a"], m["b"], m["c"]
    if len(a) >= 3:
        year, month, day, ylen = int(a), int(b), int(c), len(a)
    else:
        day, month = (int(a), int(b)) if order == "dmy" else (int(b), int(a))
        year, ylen = int(c), len(c)
    if ylen == 2:
        year += 2000
    elif ylen != 4:
        year = 0  # "1/2/345": no year (`_when` refuses it)
    ap = m["ap"].lower() if m["ap"] else None
    return year, month, day, int(m["h"]), int(m["mi"]), int(m["s"]) if m["s"] else None, ap


def _when(parts: _Parts, n: int) -> datetime:
    year, month, day, hour, minute, second, ap = parts
    if ap is not None:
        if not 0 <= hour <= 12:
            raise ConversationFormatError(f"line {n}: no such hour {hour} {ap.upper()}M")
        hour = hour % 12 + (12 if ap == "p" else 0)
    try:
        return datetime(year, month, day, hour, minute, second or 0)
    except ValueError as exc:
        raise ConversationFormatError(f"line {n}: no such date or time ({exc})") from None


def _said(rest: str, ios: bool) -> tuple[str, str] | None:
    """(speaker, text) of a header's rest; None for a line of WhatsApp's own."""
    speaker, colon, text = rest.partition(": ")
    if not colon:
        speaker, colon, text = rest.partition(":")  # "Name:" and the text on the next line
        if not colon or text.strip(MARKS + " "):
            return None
    if (ios and text.startswith("\u200e")) or not unmarked(speaker):
        return None
    if not ios and _SYSTEM.search(speaker):
        return None  # 'Ann changed the subject to "a: b"': the colon is in the subject
    return speaker.lstrip("~" + MARKS + " \u00a0\u202f"), text


def _without_quoted(messages: list[Message], ios: bool) -> list[Message]:
    """`messages` without Android system lines of any language whose subject holds ": "
    (module docstring): the "speaker" opens a quotation that the line's text closes, in every
    message said by that name (a sender whose name holds an unpaired quotation mark is one
    whose lines do not all close it)."""
    if ios:
        return messages

    def quotes(text: str) -> int:
        return sum(c in _QUOTES for c in text)

    def closed(m: Message) -> bool:
        return quotes(m.speaker) % 2 == 1 and quotes(m.text[0]) % 2 == 1

    sends = Counter(m.speaker for m in messages)
    closes = Counter(m.speaker for m in messages if closed(m))
    return [m for m in messages if not closes[m.speaker] == sends[m.speaker] > 0]
