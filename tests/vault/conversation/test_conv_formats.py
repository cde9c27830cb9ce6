"""Conversation file formats: simple, LoCoMo, LongMemEval."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from vault import ConversationFormatError
from vault.conversation.formats import load, parse_date

SIMPLE = {
    "format": "rmh-conversation/1",
    "id": "ab",
    "sessions": [
        {"id": "s1", "date": "2024-05-01T10:00", "turns": [
            {"speaker": "Alice", "text": "Hi", "entities": ["pottery class"]},
            {"speaker": "Bob", "text": "Hello", "date": "2024-05-01T10:02", "id": "x"},
        ]},
    ],
}


def test_simple_format() -> None:
    (c,) = load(json.dumps(SIMPLE))
    assert c.conversation_id == "ab" and c.speakers == ("Alice", "Bob")
    t0, t1 = c.turns()
    assert (t0.turn_id, t0.entities) == ("s1:1", ("pottery class",))
    assert t0.when == datetime(2024, 5, 1, 10)
    assert (t1.turn_id, t1.entities, t1.when.minute) == ("x", None, 2)


def test_locomo_and_longmemeval_shapes() -> None:
    locomo = [{"sample_id": "c1", "conversation": {
        "speaker_a": "A", "speaker_b": "B",
        "session_2_date_time": "1:56 pm on 8 May, 2023",
        "session_2": [{"speaker": "A", "dia_id": "D2:1", "text": "look", "blip_caption": "a cat"}],
        "session_1_date_time": "10:00 am on 1 January, 2023",
        "session_1": [{"speaker": "B", "dia_id": "D1:1", "text": "hi"}],
    }}]
    (c,) = load(json.dumps(locomo), "auto")
    assert [s.session_id for s in c.sessions] == ["S1", "S2"]
    assert c.sessions[1].when == datetime(2023, 5, 8, 13, 56)
    assert c.turns()[1].text == "look [shares a photo: a cat]" and c.turns()[1].turn_id == "D2:1"
    lme = [{"question_id": "q", "haystack_session_ids": ["h1"], "haystack_dates":
            ["2023/05/20 (Sat) 10:44"], "haystack_sessions": [[
                {"role": "user", "content": "I adopted a dog."},
                {"role": "assistant", "content": "Congratulations!"}]]}]
    (m,) = load(json.dumps(lme))
    assert m.speakers == ("user", "assistant") and m.turns()[1].role == "assistant"
    assert m.sessions[0].when == datetime(2023, 5, 20, 10, 44)


def test_errors_are_typed() -> None:
    with pytest.raises(ConversationFormatError):
        load("{not json")
    with pytest.raises(ConversationFormatError):
        load(json.dumps({"x": 1}))
    with pytest.raises(ConversationFormatError):
        load(json.dumps(SIMPLE), "yaml")
    with pytest.raises(ConversationFormatError):
        parse_date("someday")


def test_entities_supplied_per_turn() -> None:
    from vault import conversation_with_entities

    conv = load(json.dumps(SIMPLE))[0]
    turns = conv.turns()
    per: list[list[str] | None] = [["Carla"], *([None] * (len(turns) - 1))]
    got = conversation_with_entities(conv, per)
    assert got.turns()[0].entities == ("Carla",) and turns[0].entities == ("pottery class",)
    assert [t.entities for t in got.turns()[1:]] == [t.entities for t in turns[1:]]
    assert [t.text for t in got.turns()] == [t.text for t in turns]
    assert conv.turns()[0].entities == turns[0].entities  # the input is not changed
    with pytest.raises(ValueError, match="entity lists"):
        conversation_with_entities(conv, [None])
