"""A server refusing a parameter is read from the answer's structured fields (OpenAI's error
`code`/`param`, pydantic's `detail`), its English wording only when there are none: served by
a loopback HTTP endpoint, read by the real `openai` client inside `Broker`. Before (session
28) only the wording was read: a refusal in another language failed every call, and a cap
only found too large ("... is not supported", code invalid_value) was renamed, then dropped,
and the call went out with no token cap at all."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.llm_refusal import REFUSAL_CODES, refused_param

from .llm_stub_endpoint import ChatEndpoint, Reply
from .test_llm_servers import _ask, _section


def _openai(message: str, param: str | None, code: str | int | None) -> bytes:
    return json.dumps({"error": {"message": message, "type": "invalid_request_error",
                                 "param": param, "code": code}}).encode()


def _pydantic(name: str, msg: str) -> bytes:
    return json.dumps({"detail": [{"type": "extra_forbidden", "loc": ["body", name],
                                   "msg": msg, "input": 0}]}).encode()


# (name refused, status, body of the refusal): each a refusal the provider adapts to
REFUSALS = [
    ("max_tokens", 400, _openai("Paramètre non pris en charge : 'max_tokens'.", "max_tokens",
                                "unsupported_parameter")),
    ("temperature", 400, _openai("温度 0.0 はこのモデルでは使えません", "temperature",
                                 "unsupported_value")),
    ("temperature", 400, _openai("Parameter ist unbekannt.", "temperature", "unknown_parameter")),
    ("temperature", 400, _openai("Valor no admitido: 'temperature'.", None, "unsupported_value")),
    ("temperature", 422, _pydantic("temperature", "Zusätzliche Eingaben sind nicht erlaubt")),
    ("max_tokens", 400, _openai("Unsupported parameter: 'max_tokens'. Use "
                                "'max_completion_tokens' instead.", None, None)),
    ("temperature", 400, _openai("Unrecognized request argument supplied: temperature",
                                 None, 400)),  # vLLM: the status as its code
]


@pytest.mark.parametrize(("name", "status", "raw"), REFUSALS)
def test_a_refusal_in_any_words_is_adapted_to(name: str, status: int, raw: bytes) -> None:
    def script(n: int, body: dict[str, Any]) -> Reply:
        return Reply(status=status, raw=raw) if name in body else Reply(text="tea")

    with ChatEndpoint(script) as ep:
        out, calls = _ask(_section(ep.url, max_retries=0))
        assert out == "tea" and calls == ep.count == 2, out
        assert name not in ep.bodies[-1]
        if name == "max_tokens":
            assert ep.bodies[-1]["max_completion_tokens"] == ep.bodies[0]["max_tokens"]


# a structured answer that refuses no parameter, worded as if it did
NOT_REFUSALS = [
    ("{name}: a value of {value} is not supported; the most is 512", "{name}", "invalid_value"),
    ("Unknown error with max_tokens", None, "server_error"),
    ("Extra tokens requested: max_tokens too large", "messages", "context_length_exceeded"),
    ("Unsupported parameter: 'max_tokens'", "stream_options", "unsupported_parameter"),
]


@pytest.mark.parametrize(("text", "param", "code"), NOT_REFUSALS)
def test_a_structured_answer_that_refuses_nothing_keeps_the_cap(
        text: str, param: str | None, code: str) -> None:
    """A server that finds any cap over 512 too large: one request, the error, and the cap
    never renamed or dropped."""
    def script(n: int, body: dict[str, Any]) -> Reply:
        name = next((k for k in ("max_tokens", "max_completion_tokens") if k in body), "")
        if not name or body[name] > 512:
            value = body.get(name, "none")
            return Reply(status=400, raw=_openai(text.format(name=name, value=value),
                                                 (param or "").format(name=name) or None, code))
        return Reply(text="tea")

    with ChatEndpoint(script) as ep:
        out, calls = _ask(_section(ep.url, max_retries=0))
        assert out.startswith("ERROR LlmUnavailable: HTTP 400: ") and calls == ep.count == 1, out
        assert all("max_tokens" in b for b in ep.bodies)


def test_odd_bodies_refuse_nothing_and_never_raise() -> None:
    sent = {"max_tokens": 1, "temperature": 0.0}
    bodies: list[object] = [
        None, "text", [], {"detail": "Not Found"}, {"detail": [1, None, {"loc": 3}]},
        {"detail": [{"type": "extra_forbidden", "loc": []}]}, {"code": 7, "param": 8},
        {"code": "unsupported_parameter", "param": ["max_tokens"]}]
    for body in bodies:
        assert refused_param(body, "", sent) == ""
    for code in sorted(REFUSAL_CODES):
        assert refused_param({"code": code, "param": "temperature"}, "", sent) == "temperature"
        assert refused_param({"code": code, "param": "temperature"}, "", {}) == ""
