"""Dates no datetime can hold, in every conversation format (CONV, session 26). Before: a
LoCoMo or LongMemEval date of the right shape that is no day ("31 February", "25:44") was a bare
ValueError out of `parse_date`, and a transcript timestamp past the years 1..9999 (1e20, inf,
"0001-01-01T00:00+01:00") an OverflowError that stopped the whole file. Now the first is a
ConversationFormatError, the second a problem of its line (the line skipped)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vault import load_transcript
from vault.conversation.formats import parse_date, timestamp
from vault.errors import ConversationFormatError


@pytest.mark.parametrize("text", [
    "1:56 pm on 31 February, 2023", "1:99 pm on 3 May, 2023", "0:00 am on 1 May, 0000",
    "2023/02/31 (Sat) 10:44", "2023/02/01 (Sat) 25:44", "2024-05-01T24:00",
])
def test_a_date_that_is_no_day_is_a_format_error(text: str) -> None:
    with pytest.raises(ConversationFormatError):
        parse_date(text)


@given(st.one_of(st.floats(), st.integers(), st.text(max_size=30),
                 st.sampled_from(["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"])))
def test_timestamp_is_a_datetime_or_a_format_error(value: object) -> None:
    try:
        when = timestamp(value)
    except ConversationFormatError:
        return
    assert when.tzinfo is None
    assert not (isinstance(value, float) and not math.isfinite(value))


def test_a_line_of_an_impossible_time_is_a_problem() -> None:
    def line(ts: object, uid: str) -> str:
        return json.dumps({"type": "user", "sessionId": "abc", "uuid": uid, "timestamp": ts,
                           "message": {"role": "user", "content": f"I live in Paris {uid}"}})

    loaded = load_transcript("\n".join([line(1e20, "a"), line("2024-05-01T10:00:00Z", "b")]))
    assert [t.text for c in loaded.conversations for t in c.turns()] == ["I live in Paris b"]
    assert loaded.problems == ("line 1: not a conversation: unreadable timestamp 1e+20",)
