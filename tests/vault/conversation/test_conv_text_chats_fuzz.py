"""Generated WhatsApp exports and plain transcripts (session 29 CHATTXT): odd names, colons in
texts, lines that look like headers, mixed line endings, a byte order mark, replacement
characters where bytes were not UTF-8. What was written is what is read; any text at all is
read or refused with ConversationFormatError, nothing else."""

from __future__ import annotations

import re
from datetime import datetime

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vault import load_transcript
from vault.conversation.chat_lines import MARKS, unmarked
from vault.conversation.whatsapp import is_whatsapp
from vault.errors import ConversationFormatError

_NAME_CHARS = st.characters(blacklist_categories=["Cc", "Cs", "Zl", "Zp"],
                            blacklist_characters=":\r\n\x1c\x1d\x1e\x85\u00a0\u202f\u2007"
                            + MARKS + "~")
NAMES = st.text(_NAME_CHARS, min_size=1, max_size=30).map(str.strip).filter(
    lambda s: bool(s) and not s.startswith(("[", "-")))
_TEXT_CHARS = st.characters(blacklist_categories=["Cs"],
                            blacklist_characters="\r\n\x00" + MARKS)
# a line of a message: any text, colons and "Subject: x" lines included; not one that is a
# header itself (a pasted WhatsApp line starts a message: no reader can tell)
LINES = st.one_of(st.text(_TEXT_CHARS, max_size=40), st.sampled_from(
    ["Subject: hello", "Note: 10:30: late", "\ufffd\ufffd bad bytes", "- item: one",
     "[link](http://x.y/z:1)", "12:30 - lunch"]))
WHEN = st.datetimes(datetime(2009, 1, 1), datetime(2099, 12, 31)).map(
    lambda d: d.replace(microsecond=0))
MESSAGES = st.lists(st.tuples(NAMES, st.lists(LINES, min_size=1, max_size=3), WHEN),
                    min_size=1, max_size=12)


def _header(when: datetime, ios: bool, order: str, ampm: bool) -> str:
    a, b = (when.day, when.month) if order == "dmy" else (when.month, when.day)
    date = f"{a}/{b}/{when:%y}"
    clock = (f"{when.hour % 12 or 12}:{when:%M:%S}\u202f{'PM' if when.hour >= 12 else 'AM'}"
             if ampm else f"{when:%H:%M:%S}")
    return f"[{date}, {clock}] " if ios else f"{date}, {clock} - "


def _expected_text(lines: list[str]) -> str:
    return "\n".join(lines).strip()


# session 30: the ambiguities of telling WhatsApp's own lines in any language (whatsapp.py's
# docstring): a whole text in <...> is a media placeholder; an Android "name" that opens a
# quotation each of its lines closes is a subject change ('Ann a modifié le sujet en « a: b »')
_PLACEHOLDER = re.compile(r"<[^<>\n:/@]+>")
_QUOTES = '"\u201c\u201d\u201e\u201f\u00ab\u00bb\u2039\u203a\u300c\u300d\u300e\u300f\uff02'


def _subject_change(ios: bool, name: str, first_lines: list[str]) -> bool:
    def quotes(text: str) -> int:
        return sum(c in _QUOTES for c in text)
    return not ios and quotes(name) % 2 == 1 and all(quotes(f) % 2 for f in first_lines)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(MESSAGES, st.booleans(), st.sampled_from(["dmy", "mdy"]), st.booleans(),
       st.sampled_from(["\n", "\r\n", "\r", "mixed"]), st.booleans())
def test_a_generated_whatsapp_export_reads_back_what_was_written(
        messages: list[tuple[str, list[str], datetime]], ios: bool, order: str, ampm: bool,
        newline: str, bom: bool) -> None:
    rows: list[str] = []
    want = []
    kept = [(name, [line for line in text if not is_whatsapp(line)], when)
            for name, text, when in messages]
    firsts: dict[str, list[str]] = {}
    for name, text, _ in kept:
        firsts.setdefault(name, []).append(text[0] if text else "")
    for name, text, when in kept:
        rows.append(_header(when, ios, order, ampm) + f"{name}: " + "\n".join(text))
        body = _expected_text(text)
        if body and body.lower() not in ("null", "<media omitted>") and not (
                _PLACEHOLDER.fullmatch(unmarked(body))
                or _subject_change(ios, name, firsts[name])):
            want.append((name, body, when))
    joined = "\n".join(rows) + "\n"
    if newline == "mixed":
        parts = joined.split("\n")
        joined = "".join(p + ("\r\n", "\n", "\r")[i % 3] for i, p in enumerate(parts))
    else:
        joined = joined.replace("\n", newline)
    try:
        loaded = load_transcript(("\ufeff" if bom else "") + joined, "whatsapp", "w", order)
    except ConversationFormatError as exc:
        raise AssertionError(exc.reason) from None
    got = [(t.speaker, t.text, t.when) for t in loaded.conversations[0].turns()]
    assert [(n, w) for n, _, w in got] == [(n, w) for n, _, w in want]
    assert [t for _, t, _ in got] == [t.replace("\x00", "\ufffd") for _, t, _ in want]
    assert loaded.problems == ()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(
    st.text(max_size=30),
    st.sampled_from(["12/31/23, 9:15 PM - ", "[31/12/2023, 21:15:07] ", "31.02.23, 25:61 - ",
                     "\u200e[1/2/3, 4:56] ", "Ann: ", "[10:15] ", "2024-05-01T10:15Z ",
                     "\ufeff", "\r", "\n", ":", " - ", "\u202fPM", "0/0/0000, 0:00 - x: y"])),
    max_size=12).map("".join), st.sampled_from(["auto", "whatsapp", "text"]),
    st.sampled_from([None, "dmy", "mdy"]))
def test_any_text_is_read_or_refused_never_a_crash(text: str, fmt: str,
                                                  order: str | None) -> None:
    try:
        loaded = load_transcript(text, fmt, "x", order)
    except ConversationFormatError:
        return
    for conv in loaded.conversations:
        for turn in conv.turns():
            assert turn.text.strip() and turn.speaker.strip()
