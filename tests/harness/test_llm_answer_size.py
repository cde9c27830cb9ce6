"""An endpoint's answer is read up to MAX_BODY_BYTES once decoded, whatever it claims: a body
over it (plain, or a small gzip/deflate body that decodes past it; a success or an HTTP error)
is `LlmUnavailable`, not retried; a compressed body under it is still answered.

Through the real `openai` client against a real HTTP server on loopback. Before ADVRPC
(session 27) the client read every body whole: a 298 KiB gzip body (300 MiB decoded) took the
serving process's peak RSS from 67 MB to 1 GB and was answered; an error body was read whole
too, before the status was looked at.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Callable, Iterator
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.config import LlmSection
from harness.llm import Broker, LlmUnavailable
from harness.llm_provider import MAX_BODY_BYTES

from .llm_stub_endpoint import ChatEndpoint, Reply

MiB = 1024 * 1024
FIXTURE = [HealthCheck.function_scoped_fixture]  # one endpoint and broker for all


def _identity(data: bytes) -> bytes:
    return data


def _deflate(data: bytes) -> bytes:
    return zlib.compress(data, 9)


ENCODINGS: dict[str, Callable[[bytes], bytes]] = {
    "identity": _identity, "gzip": gzip.compress, "deflate": _deflate}


def completion(text_bytes: int) -> bytes:
    """A chat completion whose answer is `text_bytes` characters long."""
    return json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant",
                                                "content": "a" * text_bytes}}],
                       "usage": {"prompt_tokens": 1, "completion_tokens": 1,
                                 "total_tokens": 2}}).encode()


class Endpoint:
    def __init__(self) -> None:
        self.reply = Reply()
        self.asked = 0
        self.endpoint = ChatEndpoint(lambda n, body: self.reply)
        self.section = replace(LlmSection(), base_url=self.endpoint.url, api_key="sk-x",
                               model="m", timeout_s=30.0, max_retries=2, retry_backoff_s=0.0)

    def ask(self, broker: Broker, reply: Reply) -> tuple[str | None, str, int]:
        """(the answer or None, the LlmUnavailable text, requests the endpoint saw)."""
        self.reply, self.asked = reply, self.asked + 1
        seen = self.endpoint.count
        try:
            answer: str | None = broker.call("Alice likes tea.", f"What? {self.asked}",
                                              broker.new_budget())
            why = ""
        except LlmUnavailable as exc:
            answer, why = None, str(exc)
        return answer, why, self.endpoint.count - seen


@pytest.fixture(scope="module")
def endpoint() -> Iterator[tuple[Endpoint, Broker]]:
    ep = Endpoint()
    with ep.endpoint, Broker.from_config(ep.section) as broker:
        yield ep, broker


@settings(max_examples=12, deadline=None, suppress_health_check=FIXTURE)
@given(over=st.integers(1, 24 * MiB), encoding=st.sampled_from(sorted(ENCODINGS)),
       status=st.sampled_from([200, 500, 400]))
def test_an_answer_over_the_cap_is_refused_once(
        endpoint: tuple[Endpoint, Broker], over: int, encoding: str, status: int) -> None:
    ep, broker = endpoint
    body = ENCODINGS[encoding](completion(MAX_BODY_BYTES + over))
    answer, why, sent = ep.ask(broker, Reply(status=status, raw=body,
                                             headers=(("Content-Encoding", encoding),)))
    assert answer is None and f"over {MAX_BODY_BYTES} bytes" in why, (answer and len(answer), why)
    assert sent == 1  # refused, not retried: the same endpoint would send it again


@settings(max_examples=6, deadline=None, suppress_health_check=FIXTURE)
@given(size=st.integers(1, 4 * MiB), encoding=st.sampled_from(sorted(ENCODINGS)))
def test_an_answer_under_the_cap_is_read_in_any_encoding(
        endpoint: tuple[Endpoint, Broker], size: int, encoding: str) -> None:
    ep, broker = endpoint
    body = ENCODINGS[encoding](completion(size))
    answer, why, _ = ep.ask(broker, Reply(raw=body, headers=(("Content-Encoding", encoding),)))
    assert answer is not None and answer.startswith("a"), why
