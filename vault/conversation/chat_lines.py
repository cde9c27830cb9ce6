"""Text chat exports, the part their readers share: lines, marks, and messages -> Conversation.

A text export (WhatsApp's `.txt`, a plain "Name: text" transcript) is a run of headed lines: a
header line starts a message (who, and when where the export says), every line after it up to
the next header belongs to that message (a multi-line message). The readers (`whatsapp`,
`plain_chat`) find the headers; this module turns what they found into a `Conversation`:

- a dated message belongs to the session of its calendar day (id the ISO date,
  "2023-12-31"; a day that comes back after another, as in two exports joined, is a second
  session of that name, "2023-12-31 2", `layout.distinct`); its turn id is its time of day
  as written ("21:15" or "21:15:07"; a second message in the same minute "21:15 2"), so an
  export that grew, or starts later, keeps the ids of the messages it shares;
- an undated transcript is one session "S1" dated 1970-01-01 (`CHAT_EPOCH`, as an OpenAI
  chat: a fixed date, never the clock), turn ids "S1:1", "S1:2"... (as the simple format);
- a message whose text is empty once its marks are cut is no turn.

Lines are split at "\\r\\n", "\\r" and "\\n" alike (mixed line endings), and a leading byte
order mark is not text. Same text -> same conversation.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from .formats import Conversation, Session, Turn

CHAT_EPOCH = datetime(1970, 1, 1)
_BREAK = re.compile(r"\r\n|\r|\n")
# Direction marks and embeddings the exports put round names and texts (U+200E before a
# media line, U+202A..U+202C round a phone number): no one typed them.
MARKS = "\ufeff\u200b\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_SPACES = re.compile(r"[\u00a0\u202f\u2007]")


def lines(text: str) -> list[str]:
    """`text`'s lines, however they end; without a leading byte order mark."""
    return _BREAK.split(text.removeprefix("\ufeff"))


def unmarked(text: str) -> str:
    """`text` without the marks and spaces round it, its no-break spaces plain ones."""
    return _SPACES.sub(" ", text).strip(MARKS + " \t")


@dataclass
class Message:
    """One message as read: the line of its header, when (None: the transcript has no date),
    its time as written ("" when none), who, and its lines."""

    line: int
    when: datetime | None
    clock: str
    speaker: str
    text: list[str]


def conversation(cid: str, messages: Sequence[Message]) -> Conversation:
    """The conversation `messages` make (module docstring)."""
    sessions: list[Session] = []
    turns: list[Turn] = []
    day = ""
    for m in messages:
        text = "\n".join(m.text).strip()
        speaker = unmarked(m.speaker)
        if not text or not speaker:
            continue
        this = "S1" if m.when is None else m.when.date().isoformat()
        if this != day and turns:
            sessions.append(Session(day, turns[0].when, tuple(turns)))
            turns = []
        day = this
        ident = m.clock if m.when is not None else f"S1:{len(turns) + 1}"
        turns.append(Turn(ident, speaker, text, CHAT_EPOCH if m.when is None else m.when))
    if turns:
        sessions.append(Session(day, turns[0].when, tuple(turns)))
    return Conversation(cid, tuple(sessions))
