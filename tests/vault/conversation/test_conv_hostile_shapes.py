"""CONV5: a conversation file of a known format but hostile shape is read or refused with
ConversationFormatError, never another exception out of the reader (before: a LoCoMo session
that is no list, a turn that is no object, a session key in Arabic-Indic digits, a simple
format's `turns` that is no list, a LongMemEval turn without `role`, and a Discord message id
of 5000 digits each raised TypeError / AttributeError / KeyError / ValueError)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from vault.conversation.reading import load_report
from vault.errors import ConversationFormatError

_DATE = "1:56 pm on 8 May, 2023"
_TURN = {"speaker": "A", "dia_id": "D1:1", "text": "hi"}
_BAD_VALUES: list[Any] = [5, "ab", None, {"a": 1}, [5], ["x"], [None], [[_TURN]]]


def _locomo(conv: dict[str, Any]) -> str:
    return json.dumps({"sample_id": "x", "conversation": {"speaker_a": "A", "speaker_b": "B",
                                                          **conv}})


def _cases() -> list[tuple[str, str]]:
    cases: list[tuple[str, str]] = []
    for bad in _BAD_VALUES:
        cases.append((_locomo({"session_1": bad, "session_1_date_time": _DATE}), "locomo"))
        cases.append((json.dumps({"format": "rmh-conversation/1", "id": "a", "sessions": [
            {"id": "s", "date": "2024-01-01", "turns": bad}]}), "auto"))
        cases.append((json.dumps([{"question_id": "q", "haystack_dates": ["2023/05/20 (Sat) 10:44"],
                                   "haystack_session_ids": ["a"], "haystack_sessions": [bad]}]),
                      "longmemeval"))
    for key in ("session_\u0661", "session_" + "1" * 5000, "session_01", "session_1x"):
        cases.append((_locomo({key: [_TURN], "session_1_date_time": _DATE,
                               key + "_date_time": _DATE}), "locomo"))
    locomo_turns: list[dict[str, Any]] = [{"text": "no speaker"}, {"speaker": 5, "text": "x"}]
    for turn in locomo_turns:
        cases.append((_locomo({"session_1": [turn], "session_1_date_time": _DATE}), "locomo"))
    lme_turns: list[dict[str, Any]] = [{"content": "no role"}, {"role": "user"},
                                       {"role": None, "content": "x"}]
    for turn in lme_turns:
        cases.append((json.dumps([{"question_id": "q", "haystack_dates": ["2023/05/20 (Sat) 10:44"],
                                   "haystack_session_ids": ["a"], "haystack_sessions": [[turn]]}]),
                      "longmemeval"))
    cases.append((json.dumps([{"question_id": "q", "haystack_dates": ["2023/05/20 (Sat) 10:44"],
                               "haystack_session_ids": ["a", "b"],
                               "haystack_sessions": [[{"role": "user", "content": "x"}]]}]),
                  "longmemeval"))
    for ident in ("1" * 5000, "0" * 4400 + "7", "9" * 4301):
        msgs = [{"id": i, "type": "Default", "timestamp": "2024-05-01T10:00:00+00:00",
                 "content": f"m {i[-3:]}", "author": {"name": "Al"}} for i in (ident, "12")]
        cases.append((json.dumps({"guild": {"name": "g"}, "channel": {"name": "c"},
                                  "messages": msgs}), "auto"))
    return cases


@pytest.mark.parametrize(("text", "fmt"), _cases())
def test_a_hostile_shape_is_read_or_refused_typed(text: str, fmt: str) -> None:
    try:
        got = load_report(text, fmt, "dflt")
    except ConversationFormatError:
        return
    for conv in got.conversations:
        for session in conv.sessions:
            assert all(isinstance(t.speaker, str) and isinstance(t.text, str)
                       for t in session.turns)


def test_discord_ties_in_time_order_by_id_as_a_number() -> None:
    ids = ["1" * 5000, "12", "0" * 4400 + "7", "9"]
    msgs = [{"id": i, "type": "Default", "timestamp": "2024-05-01T10:00:00+00:00",
             "content": f"text {n}", "author": {"name": "Al"}} for n, i in enumerate(ids)]
    got = load_report(json.dumps({"guild": {"name": "g"}, "channel": {"name": "c"},
                                  "messages": msgs}), "discord", "dflt")
    texts = [t.text for s in got.conversations[0].sessions for t in s.turns]
    assert texts == ["text 2", "text 3", "text 1", "text 0"]


def test_a_locomo_session_key_with_a_leading_zero_reads_its_own_date() -> None:
    got = load_report(_locomo({"session_01": [_TURN], "session_01_date_time": _DATE}),
                      "locomo", "dflt")
    (session,) = got.conversations[0].sessions
    assert [t.text for t in session.turns] == ["hi"]
    assert session.when.date().isoformat() == "2023-05-08"
