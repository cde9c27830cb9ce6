"""WhatsApp `.txt` exports and plain "Name: text" transcripts (session 29 CHATTXT): read as the
phones and people write them, the date order decided from the whole file or refused, and
ingested idempotently."""

from __future__ import annotations

import tracemalloc
from datetime import datetime
from pathlib import Path

import pytest

from vault import Vault, ingest_conversations, load_transcript
from vault.errors import ConversationFormatError

SAID = [("Alice", "I sold my bike: the red one\nNote: it had a flat",
         datetime(2023, 12, 31, 21, 15)),
        ("Bob", "Nice!", datetime(2024, 1, 1, 9, 5)),
        ("Alice", "Now I row a kayak on Lake Como", datetime(2024, 1, 13, 17, 40))]


def _android(fmt: str, ampm: str | None, sep: str = " ") -> str:
    def head(when: datetime) -> str:
        return f"{fmt.format(d=when)}, {_clock(when, ampm, sep)} - "

    out = [head(SAID[0][2]) + "Messages and calls are end-to-end encrypted. No one outside "
           "of this chat can read them."]
    out += [f"{head(when)}{name}: {text}" for name, text, when in SAID]
    out.append(head(SAID[-1][2]) + "Bob: <Media omitted>")
    return "\n".join(out) + "\n"


def _clock(when: datetime, ampm: str | None, sep: str) -> str:
    if ampm is None:
        return f"{when:%H:%M}"
    pm = ampm.upper() if when.hour >= 12 else ampm.upper().replace("P", "A")
    return f"{when.hour % 12 or 12}:{when:%M}{sep}{pm}"


ANDROID = [  # date shapes of the locales (M/D/YY US, D/M/YYYY UK, D.M.YY DE, YYYY-MM-DD SE)
    ("{d.month}/{d.day}/{d:%y}", "PM", " "), ("{d.month}/{d.day}/{d:%y}", "PM", "\u202f"),
    ("{d:%d}/{d:%m}/{d:%Y}", None, " "), ("{d:%d}.{d:%m}.{d:%y}", None, " "),
    ("{d:%Y}-{d:%m}-{d:%d}", None, " "), ("{d.day}/{d.month}/{d:%Y}", "p. m.", " "),
]


@pytest.mark.parametrize(("fmt", "ampm", "sep"), ANDROID)
def test_an_android_export_reads_each_locale(fmt: str, ampm: str | None, sep: str) -> None:
    loaded = load_transcript(_android(fmt, ampm, sep), "auto", "WhatsApp Chat with Bob")
    (conv,) = loaded.conversations
    assert [(t.speaker, t.text, t.when) for t in conv.turns()] == SAID
    assert [s.session_id for s in conv.sessions] == ["2023-12-31", "2024-01-01", "2024-01-13"]
    assert [t.turn_id for t in conv.turns()] == ["21:15", "09:05", "17:40"]
    assert loaded.problems == ()


def test_an_ios_export_reads_and_leaves_whatsapps_own_lines_out() -> None:
    text = ("\u200e[31/12/2023, 21:15:07] Trip: \u200eMessages and calls are end-to-end "
            "encrypted.\r\n[31/12/2023, 21:15:07] Alice: I sold my bike: the red one\r\n"
            "Note: it had a flat\n\u200e[31/12/2023, 21:16:00] Bob: \u200eimage omitted\r"
            "[01/01/2024, 09:05:00] ~\u202fBob: Nice! <This message was edited>\n"
            "[13/01/2024, 5:40:00\u202fPM] Alice: Now I row a kayak on Lake Como\n")
    (conv,) = load_transcript("\ufeff" + text, "auto", "ios").conversations
    assert [(t.speaker, t.text, t.when.replace(second=0)) for t in conv.turns()] == SAID
    assert conv.turns()[0].turn_id == "21:15:07"


@pytest.mark.parametrize(("first", "order"), [("13/04/23", "dmy"), ("04/13/23", "mdy")])
def test_the_date_order_is_decided_by_any_date_of_the_file(first: str, order: str) -> None:
    # the deciding date comes last: every earlier one reads by it
    text = "03/04/23, 10:00 - Ann: I moved to Porto\n" + f"{first}, 10:00 - Ann: later\n"
    (conv,) = load_transcript(text).conversations
    assert conv.turns()[0].when == (datetime(2023, 4, 3, 10) if order == "dmy"
                                    else datetime(2023, 3, 4, 10))


def test_a_file_whose_dates_never_decide_is_refused_naming_the_option() -> None:
    text = "03/04/23, 10:00 - Ann: I moved to Porto\n05/06/23, 11:00 - Bo: nice\n"
    with pytest.raises(ConversationFormatError) as info:
        load_transcript(text)
    assert "--date-order dmy" in info.value.reason and "line 1: 03/04/23" in info.value.reason
    for order, want in (("dmy", datetime(2023, 4, 3, 10)), ("mdy", datetime(2023, 3, 4, 10))):
        (conv,) = load_transcript(text, date_order=order).conversations
        assert conv.turns()[0].when == want


def test_a_file_whose_dates_disagree_is_refused() -> None:
    text = "13/04/23, 10:00 - Ann: a\n04/14/23, 10:00 - Ann: b\n"
    with pytest.raises(ConversationFormatError, match=r"line 1: 13/04/23.*line 2: 04/14/23"):
        load_transcript(text)


def test_a_header_that_is_no_date_is_a_problem_its_message_skipped() -> None:
    text = "31/12/23, 10:00 - Ann: a\n31/02/23, 10:00 - Ann: gone\nstill gone\n" \
           "01/01/24, 25:10 - Ann: gone too\n01/01/24, 9:00 PM - Ann: kept\n"
    loaded = load_transcript(text)
    assert [t.text for t in loaded.conversations[0].turns()] == ["a", "kept"]
    assert [p.split(":")[0] for p in loaded.problems] == ["line 2", "line 4"]


def test_a_plain_transcript_reads_with_and_without_times() -> None:
    (conv,) = load_transcript("Alice: I sold my bike: the red one\nBob: why?\nAlice: space\n",
                              "auto", "p").conversations
    assert [(t.turn_id, t.speaker, t.text, t.when) for t in conv.turns()] == [
        ("S1:1", "Alice", "I sold my bike: the red one", datetime(1970, 1, 1)),
        ("S1:2", "Bob", "why?", datetime(1970, 1, 1)),
        ("S1:3", "Alice", "space", datetime(1970, 1, 1))]
    for timed in ("[2024-05-01 10:15] Alice: hi\nNote: bring cake\n[2024-05-01 10:16:30] Bob: ok",
                  "2024-05-01T10:15Z Alice: hi\nNote: bring cake\n2024-05-01T10:16:30Z Bob: ok",
                  "[10:15] Alice: hi\nNote: bring cake\n[10:16:30] Bob: ok"):
        (conv,) = load_transcript(timed, "auto", "p").conversations
        assert [(t.turn_id, t.text) for t in conv.turns()] == [
            ("10:15", "hi\nNote: bring cake"), ("10:16:30", "ok")]


@pytest.mark.parametrize("text", [
    "name: rmh\nversion: 1\nauthor: x\nlicense: MIT\n",
    "From: a@b.c\nTo: d@e.f\nSubject: hi\n\nBody: text\n",
    "# Notes\nAlice: hi\nBob: yo\n", "Alice: only one line\n",
    # two untimed "Key: value" lines, no one speaking again: two keys of a settings file,
    # a mail's two headers, a note's fields, a Python file's `def`/`class` lines
    "name: rmh\nversion: 1.0\n", "From: a@b.c\nSubject: lunch\n\nHi Bob, noon?\n",
    "Title: My note\n\nSome text.\nStatus: draft\n", "TODO: buy milk\nNote: call mum\n",
    "def f(x):\n    return x\n\n\nclass A:\n    pass\n", "Host: example.com\nAccept: */*\n",
])
def test_text_that_is_no_chat_is_not_taken_for_one(text: str) -> None:
    with pytest.raises(ConversationFormatError, match="format not recognised") as refused:
        load_transcript(text)
    # the refusal says how to read it anyway (session 32: it listed the formats, not the way)
    assert "--format text" in str(refused.value)
    assert '"format": "text"' in str(refused.value)


def test_format_text_reads_what_auto_detection_would_not() -> None:
    (conv,) = load_transcript("Alice: only one line\n", "text", "p").conversations
    assert [t.text for t in conv.turns()] == ["only one line"]


def _notes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*.md")) if ".rmh" not in p.parts}


def test_a_whatsapp_export_ingests_idempotently_and_grows(tmp_path: Path) -> None:
    root = tmp_path / "v"
    old = _android("{d:%d}/{d:%m}/{d:%Y}", None)
    grown = old + "14/01/2024, 08:00 - Bob: I bought a sourdough starter\n"
    with Vault.init(root) as v:
        first = ingest_conversations(v, load_transcript(old, "auto", "wa").conversations,
                                     use_nlp=False)
        assert first.turns == 3 and first.written
        before = _notes(root)
        again = ingest_conversations(v, load_transcript(old.replace("\n", "\r\n"), "auto",
                                                        "wa").conversations, use_nlp=False)
        assert again.written == () and _notes(root) == before
        more = ingest_conversations(v, load_transcript(grown, "auto", "wa").conversations,
                                    use_nlp=False)
        turns = sorted(p for p in more.written if "/2024-" in p and p.endswith(".md")
                       and p.count("/") == 3)
        assert turns == ["conversations/wa/2024-01-13/wa 17-40.md",  # its `next` link
                         "conversations/wa/2024-01-14/wa 08-00.md"]


def test_a_long_export_reads_in_bounded_memory() -> None:
    # 10^5 lines: CHATTXT_big.py.txt (tracemalloc makes the reading 10x slower)
    rows = [f"{1 + i % 28}/{1 + i % 12}/23, {i % 24}:{i % 60:02d} - Name {i % 7}: words {i}: "
            f"more" + ("\ncontinued: line" if i % 5 == 0 else "") for i in range(5_000)]
    text = "\n".join(rows)
    tracemalloc.start()
    try:
        (conv,) = load_transcript(text, "auto", "big").conversations
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(conv.turns()) == 5_000
    # measured 30x the characters: a turn, a session and a date per 60-character message
    assert peak < 60 * len(text)
