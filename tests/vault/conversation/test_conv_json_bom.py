"""CONV5: a JSON or JSONL conversation file saved "UTF-8 with BOM" (Windows editors,
PowerShell 5's `Out-File -Encoding utf8`) reads as the same file without the mark. Before,
every JSON format was refused with "format not recognised" (auto) or "Unexpected UTF-8 BOM"
(a named format), while the text formats already read a BOM."""

from __future__ import annotations

import json

import pytest

from vault.conversation.reading import load_report

_TS = "2024-05-01T10:00:00+00:00"
SAMPLES = {
    "simple": json.dumps({"format": "rmh-conversation/1", "id": "a", "sessions": [
        {"id": "s", "date": "2024-01-01", "turns": [{"speaker": "Al", "text": "I like tea."}]}]}),
    "locomo": json.dumps({"sample_id": "x", "conversation": {
        "speaker_a": "A", "speaker_b": "B", "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}]}}),
    "longmemeval": json.dumps([{"question_id": "q", "haystack_dates": ["2023/05/20 (Sat) 10:44"],
                                "haystack_session_ids": ["a"],
                                "haystack_sessions": [[{"role": "user", "content": "x"}]]}]),
    "openai": json.dumps([{"role": "user", "content": "hi"},
                          {"role": "assistant", "content": "hello"}]),
    "discord": json.dumps({"guild": {"name": "g"}, "channel": {"name": "c"}, "messages": [
        {"id": "1", "type": "Default", "timestamp": _TS, "content": "hi",
         "author": {"name": "Al"}}]}),
    "slack": json.dumps([{"type": "message", "ts": "1714557600.000100", "user": "U1",
                          "text": "hi"}]),
    "openai-jsonl": "\n".join(json.dumps({"messages": [{"role": "user", "content": f"q{n}"}]})
                              for n in range(3)),
}


def _shape(text: str, fmt: str) -> list[tuple[str, list[tuple[str, str, str]]]]:
    got = load_report(text, fmt, "dflt")
    return [(c.conversation_id,
             [(t.turn_id, t.speaker, t.text) for s in c.sessions for t in s.turns])
            for c in got.conversations]


@pytest.mark.parametrize("name", sorted(SAMPLES))
@pytest.mark.parametrize("named", [False, True])
def test_a_bom_before_json_reads_as_without_it(name: str, named: bool) -> None:
    fmt = name.split("-")[0] if named else "auto"
    plain = _shape(SAMPLES[name], fmt)
    assert plain and all(turns for _, turns in plain)
    assert _shape("\ufeff" + SAMPLES[name], fmt) == plain
