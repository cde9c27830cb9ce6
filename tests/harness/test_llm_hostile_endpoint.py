"""A hostile chat-completions endpoint, through the real `openai` client on loopback: every
body it can send is an answer (text, U+FFFD for a lone surrogate) or `LlmUnavailable`, the
token ledger holds only bounded ints, and the broker's status stays JSON.

Generated (hypothesis) over bodies of the right shape with wrong values and bodies of the
wrong shape. Before ADVRPC (session 26): `"prompt_tokens": 1e400` or `NaN` made the exec's
result and every later `status` of the connection -32603 (not JSON); `"content": [..]`, a null
`message`, a body that is a list, not JSON or nested 10^5 deep were untyped host errors
("host function failed (AttributeError)"); a lone surrogate reached the REPL as is.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from harness.config import LlmSection
from harness.llm import Broker, LlmUnavailable

from .llm_stub_endpoint import ChatEndpoint, Reply

# raw JSON fragments for a value of the completion
VALUES = st.one_of(
    st.sampled_from(["1e400", "-1e400", "NaN", "Infinity", "-5", "1.5", "true", "null", "{}",
                     "[]", '"many"', "1" + "0" * 400, '"a\\ud800b"', '"\\udfff"', '"ok"',
                     '["a"]', "7"]),
    st.integers(0, 2**40).map(str),
)
FIELDS = ("content", "message", "choices", "usage", "prompt_tokens", "completion_tokens")
BROKEN = st.one_of(
    st.sampled_from(["", "[1, 2]", "<html>", "null", "{}", '{"choices": "abc"}',
                     '{"choices": [null]}', '{"choices": [{"message": 5}]}']),
    st.integers(1, 100_000).map(lambda n: "[" * n + "]" * n),
)


def _body(field: str, value: str) -> str:
    """A completion's JSON text with `value` (raw JSON) in place of `field`."""
    parts = {"content": '"ok"', "prompt_tokens": "3", "completion_tokens": "4"}
    parts[field] = value
    message = '{"role": "assistant", "content": ' + parts["content"] + "}"
    parts.setdefault("message", message)
    parts.setdefault("choices", '[{"index": 0, "finish_reason": "stop", "message": '
                     + parts["message"] + "}]")
    parts.setdefault("usage", '{"prompt_tokens": ' + parts["prompt_tokens"]
                     + ', "completion_tokens": ' + parts["completion_tokens"]
                     + ', "total_tokens": 7}')
    return ('{"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": '
            + parts["choices"] + ', "usage": ' + parts["usage"] + "}")


class Hostile:
    """One loopback endpoint and one broker for every example: the body to send is set per
    example, and the question varies so the broker's cache never answers instead."""

    def __init__(self) -> None:
        self.raw = b""
        self.asked = 0
        self.endpoint = ChatEndpoint(lambda n, body: Reply(raw=self.raw))
        self.section = replace(LlmSection(), base_url=self.endpoint.url, api_key="sk-x",
                               model="m", timeout_s=10.0, max_retries=0, retry_backoff_s=0.0)

    def ask(self, broker: Broker, raw: str) -> str | None:
        """The answer (None: LlmUnavailable); checks the budget's report and the status."""
        self.raw, self.asked = raw.encode("utf-8", "surrogatepass"), self.asked + 1
        budget = broker.new_budget()
        try:
            answer: str | None = broker.call("Alice likes tea.", f"What? {self.asked}", budget)
        except LlmUnavailable:
            answer = None
        report = budget.report()
        for n in report["tokens"].values():
            assert type(n) is int and 0 <= n <= 2**31, report
        json.dumps(report, allow_nan=False)
        json.dumps(broker.status(), allow_nan=False)  # what `status` sends, every time
        return answer


@pytest.fixture(scope="module")
def hostile() -> Iterator[tuple[Hostile, Broker]]:
    h = Hostile()
    with h.endpoint, Broker.from_config(h.section) as broker:
        yield h, broker


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(field=st.sampled_from(FIELDS), value=VALUES)
@example(field="prompt_tokens", value="1e400")
@example(field="completion_tokens", value="NaN")
@example(field="content", value='"a\\ud800b"')
@example(field="content", value='["a"]')
@example(field="message", value="null")
def test_a_completion_with_hostile_values_is_text_or_unavailable(
        hostile: tuple[Hostile, Broker], field: str, value: str) -> None:
    answer = hostile[0].ask(hostile[1], _body(field, value))
    if answer is not None:
        answer.encode("utf-8")  # no lone surrogate reaches the REPL
        assert answer.strip()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=BROKEN)
@example(raw="[1, 2]")
@example(raw="[" * 100_000 + "]" * 100_000)
@example(raw="<html>")
def test_a_body_that_is_no_completion_is_unavailable(hostile: tuple[Hostile, Broker],
                                                     raw: str) -> None:
    assert hostile[0].ask(hostile[1], raw) is None
