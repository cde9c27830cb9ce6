"""Times with and without an offset in one vault (CONV, session 28).

Before: a simple-format file may date a session "2024-05-02T10:00-07:00" (kept with its offset)
and another "2024-05-01T10:00" (naive, as transcripts, LoCoMo and ordinary notes are); any
`context` (and the prompt hook) whose lines held both stopped with "TypeError: can't compare
offset-naive and offset-aware datetimes". Now lines order by the instant (naive read as UTC),
and each keeps the time as written."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from vault import Vault, build_context, ingest_conversations, load_transcript
from vault.errors import ConversationFormatError

TOPICS = ["zebrafinch", "kayak", "harpsichord"]


@pytest.mark.parametrize("dates,order", [
    (["2024-05-01T10:00", "2024-05-02T10:00-07:00"], [0, 1]),
    (["2024-05-02T10:00+02:00", "2024-05-02T09:00"], [0, 1]),  # 08:00 UTC before 09:00
    (["2024-05-02T09:00", "2024-05-02T10:00+02:00"], [1, 0]),
    (["2024-03-31T03:10+02:00", "2024-03-31T01:50+01:00", "2024-03-31T01:00"], [1, 2, 0]),
    (["0001-01-01T00:30+01:00", "2024-05-01T10:00"], [0, 1]),
])
def test_context_orders_times_with_and_without_offsets(tmp_path: Path, dates: list[str],
                                                       order: list[int]) -> None:
    text = json.dumps({"format": "rmh-conversation/1", "id": "c", "sessions": [
        {"id": f"s{i}", "date": d, "turns": [
            {"speaker": "Bob", "text": f"I bought a {TOPICS[i]} for the {TOPICS[i]} club"}]}
        for i, d in enumerate(dates)]})
    with Vault.init(tmp_path / "v") as v:
        ingest_conversations(v, load_transcript(text).conversations, use_nlp=False)
        v.sync()
        ctx = build_context(v, " ".join(TOPICS), 200, now=date(2025, 1, 1))
    got = [(ln.item.session, ln.item.when.isoformat()) for ln in ctx.lines]
    assert got == [(f"s{i}", date_time(dates[i])) for i in order]


def date_time(text: str) -> str:
    """The time as the note keeps it (seconds added)."""
    day, _, rest = text.partition("T")
    return f"{day}T{rest[:5]}:00{rest[5:]}"


@pytest.mark.parametrize("value", [1700000000, 1.5, True, ["2024-05-01"], {"d": 1}])
def test_a_turn_date_that_is_no_string_is_refused(value: object) -> None:
    """Before: the turn was silently dated as its session."""
    text = json.dumps({"format": "rmh-conversation/1", "id": "c", "sessions": [
        {"id": "s1", "date": "2024-05-01T10:00", "turns": [
            {"speaker": "Bob", "text": "hi", "date": value}]}]})
    with pytest.raises(ConversationFormatError, match="turn s1:1: 'date' must be a string"):
        load_transcript(text)


@pytest.mark.parametrize("value,when", [(None, "2024-05-01T10:00:00"),
                                        ("2024-05-01T11:00", "2024-05-01T11:00:00")])
def test_a_turn_date_absent_or_a_string(value: object, when: str) -> None:
    text = json.dumps({"format": "rmh-conversation/1", "id": "c", "sessions": [
        {"id": "s1", "date": "2024-05-01T10:00", "turns": [
            {"speaker": "Bob", "text": "hi", "date": value}]}]})
    (conv,) = load_transcript(text).conversations
    assert [t.when.isoformat() for t in conv.turns()] == [when]
