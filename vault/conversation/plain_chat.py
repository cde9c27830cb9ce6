"""A plain "Name: text" transcript -> `Conversation`.

Each message starts with a header line ``Name: text`` (``Name:`` alone: the text is on the
lines below), with or without a time before it: ``[2024-05-01 10:15] Name: text``,
``2024-05-01T10:15:00Z Name: text``, ``2024-05-01 10:15 - Name: text`` or a time of day
alone, ``[10:15] Name: text`` (dated 1970-01-01, as an undated chat). Times are ISO; one with
an offset or "Z" is read as UTC (as the JSONL transcripts are), naive.

Which lines are headers is fixed by the first line that is not blank: when it has a time,
only lines with a time are headers (so "Note: bring cake" inside a message stays in it);
when it has none, any line ``Name: text`` whose name is 1 to 40 characters, starting with a
letter, of letters, digits, spaces and ``.'’_@()&+-``, is one. Every other line belongs to the
message above it.

`--format text` reads any such file; auto-detection takes a file as a transcript only when its
first line is a header, it has two messages or more, and speakers who speak more than once
say half of its messages or more, or, when its headers have times, there are two speakers at
most (a list of "Key: value" settings, or a mail's "From:", "To:", "Subject:", names a new
"speaker" each line; two untimed lines of two names, a settings file's two keys, a mail's two
headers, a Python file's `def f(x):` and `class A:`, are no exchange).
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime

from ..errors import ConversationFormatError
from .chat_lines import CHAT_EPOCH, MARKS, Message, conversation, lines, unmarked
from .formats import Conversation, timestamp

_NAME = r"(?P<name>[^\W\d_][\w.'’@()&+\- ]{0,39}?)"
_STAMP = (r"(?P<stamp>\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?"
          r"(?:Z|[+-]\d{2}:?\d{2})?)?|\d{2}:\d{2}(?::\d{2})?)")
_TIMED = re.compile(f"^[{MARKS}]*(?:\\[{_STAMP}\\]|{_STAMP.replace('stamp', 'bare')})"
                    f"(?:\\s+-)?\\s+{_NAME}:(?: (?P<text>.*)|\\s*)$", re.S)
_UNTIMED = re.compile(f"^[{MARKS}]*{_NAME}:(?: (?P<text>.*)|\\s*)$", re.S)


def is_plain_chat(text: str) -> bool:
    """Whether auto-detection takes `text` for a plain transcript (module docstring)."""
    messages = _messages(text)[0]
    if len(messages) < 2:
        return False
    said = Counter(unmarked(m.speaker) for m in messages)
    again = 2 * sum(n for n in said.values() if n > 1) >= len(messages)
    return again or (len(said) <= 2 and messages[0].when is not None)


def parse_plain(text: str, default_id: str) -> tuple[Conversation, tuple[str, ...]]:
    """The conversation (named `default_id`) and the problems of a plain transcript;
    ConversationFormatError when its first line is no header."""
    messages, problems = _messages(text)
    if not messages:
        raise ConversationFormatError("text: the first line is no \"Name: text\" (or "
                                      "\"[2024-05-01 10:15] Name: text\") line")
    return conversation(default_id, messages), tuple(problems)


def _messages(text: str) -> tuple[list[Message], list[str]]:
    rows = lines(text)
    first = next((line for line in rows if unmarked(line)), "")
    header = _TIMED if _TIMED.match(first) else _UNTIMED
    if not header.match(first):
        return [], []
    messages: list[Message] = []
    problems: list[str] = []
    skipping = False
    for n, line in enumerate(rows, start=1):
        m = header.match(line)
        if m is None:
            if messages and not skipping:
                messages[-1].text.append(line)
            continue
        try:
            when, clock = _when(m)
        except ConversationFormatError as exc:
            problems.append(f"line {n}: {exc.reason}")
            skipping = True
            continue
        skipping = False
        messages.append(Message(n, when, clock, m["name"], [m["text"] or ""]))
    return messages, problems


def _when(m: re.Match[str]) -> tuple[datetime | None, str]:
    stamp = m.groupdict().get("stamp") or m.groupdict().get("bare")
    if stamp is None:
        return None, ""
    if len(stamp) <= 8:  # a time of day alone
        try:
            clock = datetime.strptime(stamp, "%H:%M:%S" if len(stamp) == 8 else "%H:%M")
        except ValueError:
            raise ConversationFormatError(f"unreadable time {stamp!r}") from None
        return CHAT_EPOCH.replace(hour=clock.hour, minute=clock.minute,
                                  second=clock.second), stamp
    when = timestamp(stamp)
    seconds = len(stamp) > 16 and stamp[16] == ":"
    return when, f"{when:%H:%M:%S}" if seconds else f"{when:%H:%M}"
