"""Real OpenAI-compatible servers differ; each shape below is one a real server sends (Ollama,
vLLM, llama.cpp, LM Studio, LiteLLM, Azure OpenAI, OpenRouter, OpenAI's reasoning models),
served by a loopback HTTP endpoint and read by the real `openai` client inside `Broker`.
Each is an answer where it is usable, else LlmUnavailable naming the cause; the per-exec
budget counts every request. Before LLMPLUG (session 28): content as a list of parts,
reasoning-only answers, `choices: []` and an error in a 200 were all "the model returned no
text"; an answer cut at max_tokens came back as if whole; a 400 refusing `max_tokens` (OpenAI
o-series, gpt-5) or `temperature` failed every call; Retry-After was ignored and a spent quota
retried; an Azure `?api-version=` base URL was sent as `.../gpt/?api-version=..chat/completions`;
a password in base_url was quoted by "cannot reach"; $ALL_PROXY=socks5:// without socksio
was an ImportError (untyped, "host function failed")."""

from __future__ import annotations

import importlib.util
import json
import threading
import time
from dataclasses import replace
from typing import Any

import pytest

from harness.config import LlmSection
from harness.llm import Broker, LlmUnavailable, RlmBudgetExceeded
from harness.llm_provider import TRUNCATED

from .llm_stub_endpoint import ChatEndpoint, Reply

KEY = "sk-LLMPLUG-secret-42"


def _body(content: Any, finish: str = "stop", **message: Any) -> bytes:
    msg = {"role": "assistant", "content": content, **message}
    return json.dumps({"id": "c", "object": "chat.completion", "created": 0, "model": "m",
                       "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
                       "usage": {"prompt_tokens": 3, "completion_tokens": 4}}).encode()


def _error(message: str, param: str | None = None, code: str | None = None) -> bytes:
    return json.dumps({"error": {"message": message, "type": "invalid_request_error",
                                 "param": param, "code": code}}).encode()


def _section(url: str, **kw: Any) -> LlmSection:
    base = dict(base_url=url, api_key=KEY, model="m", timeout_s=10.0, max_retries=2,
                retry_backoff_s=0.0)
    return replace(LlmSection(), **{**base, **kw})


def _ask(section: LlmSection) -> tuple[str, int]:
    """The answer or 'ERROR <type>: <reason>', and the budget's calls."""
    with Broker.from_config(section) as broker:
        budget = broker.new_budget()
        try:
            out = broker.call("Alice likes tea.", "What does Alice like?", budget)
        except (LlmUnavailable, RlmBudgetExceeded) as exc:
            out = f"ERROR {type(exc).__name__}: {exc}"
        return out, budget.calls


SHAPES = [  # (body the server sends, the answer or a part of the error)
    (_body([{"type": "text", "text": "tea"}, {"type": "text", "text": " and cake"}]),
     "tea and cake"),
    (_body([{"type": "thinking", "thinking": "hm"}, {"type": "text", "text": "tea"}]), "tea"),
    (_body("tea", reasoning_content="she said so"), "tea"),
    (_body(None, reasoning_content="Alice likes tea, so"), "ERROR LlmUnavailable: the model "
     "returned reasoning but no answer text"),
    (_body(None, "length", reasoning_content="thinking"), "ERROR LlmUnavailable: the model "
     "reached max_tokens before any answer text (it spent them on reasoning)"),
    (_body("", "length", reasoning="thinking"), "raise [llm] max_tokens"),
    (_body("Alice likes t", "length"), "Alice likes t" + TRUNCATED),
    (_body("", "content_filter"), "ERROR LlmUnavailable: the endpoint's content filter"),
    (json.dumps({"id": "c", "object": "chat.completion", "created": 0, "model": "m",
                 "choices": []}).encode(), "ERROR LlmUnavailable: the endpoint's answer has "
     "no choices"),
    (json.dumps({"error": {"message": f"Provider returned error {KEY}", "code": 502}}).encode(),
     "ERROR LlmUnavailable: the endpoint answered an error: Provider returned error ***"),
    (b'{"error": "Model unloaded"}', "ERROR LlmUnavailable: the endpoint answered an error: "
     "Model unloaded"),
    # a tool call instead of text (PLUG5, session 31: "the model returned no text" before)
    *((_body(content, finish, **call), "ERROR LlmUnavailable: the model answered with a tool "
       "call, not text") for content in (None, "") for finish in ("tool_calls", "stop")
      for call in ({"tool_calls": [{"id": "t", "type": "function", "function": {
          "name": "search", "arguments": "{}"}}]},
                   {"function_call": {"name": "search", "arguments": "{}"}})),
]


@pytest.mark.parametrize(("raw", "expected"), SHAPES)
def test_each_answer_shape_is_its_text_or_names_its_cause(raw: bytes, expected: str) -> None:
    with ChatEndpoint(lambda n, body: Reply(raw=raw)) as ep:
        out, calls = _ask(_section(ep.url))
    assert (expected in out if out.startswith("ERROR") else out == expected), out
    assert calls == 1 and KEY not in out


def _refuses(*names: str) -> Any:
    """A server refusing each parameter of `names` the way OpenAI / Azure / vLLM do."""
    def script(n: int, body: dict[str, Any]) -> Reply:
        for name in names:
            if name in body:
                text = (f"Unsupported parameter: '{name}' is not supported with this model. "
                        "Use 'max_completion_tokens' instead." if name == "max_tokens" else
                        f"Unrecognized request argument supplied: {name}")
                return Reply(status=400, raw=_error(text, param=name))
        return Reply(text="tea")
    return script


REFUSALS = [("max_tokens",), ("temperature",), ("max_tokens", "temperature"),
            ("max_tokens", "max_completion_tokens", "temperature")]


@pytest.mark.parametrize("refused", REFUSALS)
def test_a_refused_parameter_is_left_out_and_every_request_counts(refused: tuple[str]) -> None:
    with ChatEndpoint(_refuses(*refused)) as ep:
        out, calls = _ask(_section(ep.url, max_retries=0))  # adapting is no retry
        sent = ep.bodies[-1]
        assert out == "tea" and calls == ep.count == len(refused) + 1, out
        assert not set(refused) & set(sent)
        if refused == ("max_tokens",):
            assert sent["max_completion_tokens"] == LlmSection().max_tokens
        out, calls = _ask(_section(ep.url, calls_per_exec=len(refused)))
        assert out.startswith("ERROR RlmBudgetExceeded") and calls == len(refused), out


ERROR_BODIES = [  # (status, body, what the error says after "HTTP <status>: ")
    (404, b'{"error": "Model not loaded."}', "Model not loaded."),  # LM Studio
    (404, b"404 page not found", "404 page not found"),  # Ollama's router, no JSON
    (400, b'{"object": "error", "message": "context too long", "code": 400}',
     "context too long"),  # vLLM
    (404, b"<html>\n <body>\n  Not   Found\n </body>\n</html>", "<html> <body> Not Found"),
    (400, json.dumps({"error": {"message": f"bad key {KEY} here"}}).encode(), "bad key *** here"),
]


@pytest.mark.parametrize(("status", "raw", "says"), ERROR_BODIES)
def test_an_error_body_of_any_server_kind_is_quoted_once(status: int, raw: bytes,
                                                         says: str) -> None:
    with ChatEndpoint(lambda n, body: Reply(status=status, raw=raw)) as ep:
        out, calls = _ask(_section(ep.url))
    assert out.startswith(f"ERROR LlmUnavailable: HTTP {status}: {says}") and calls == 1, out


def test_a_too_large_max_tokens_is_not_taken_for_a_refusal() -> None:
    too_large = _error("max_tokens is too large: 1024. This model supports at most 512 "
                       "completion tokens.", param="max_tokens", code="invalid_value")
    with ChatEndpoint(lambda n, body: Reply(status=400, raw=too_large)) as ep:
        out, calls = _ask(_section(ep.url))
    assert out.startswith("ERROR LlmUnavailable: HTTP 400: max_tokens is too large") and calls == 1


def test_retry_after_is_waited_and_a_spent_quota_is_not_retried() -> None:
    first: list[float] = []
    lock = threading.Lock()

    def limited(n: int, body: dict[str, Any]) -> Reply:  # refuses anything within 1 s
        with lock:
            first.append(time.monotonic())
            if first[-1] - first[0] < 1.0:
                return Reply(status=429, headers=(("Retry-After", "1"),))
        return Reply(text="tea")

    with ChatEndpoint(limited) as ep:
        out, calls = _ask(_section(ep.url, max_retries=1))
    assert out == "tea" and calls == 2, out
    quota = _error("You exceeded your current quota", code="insufficient_quota")
    with ChatEndpoint(lambda n, body: Reply(status=429, raw=quota)) as ep:
        out, calls = _ask(_section(ep.url))
        assert ep.count == 1 and "quota is spent" in out, out


def test_a_retry_after_past_the_deadline_ends_the_call_without_waiting() -> None:
    wait = Reply(status=429, headers=(("Retry-After", "8"),))
    with ChatEndpoint(lambda n, body: wait) as ep, Broker.from_config(_section(ep.url)) as b:
        budget = b.new_budget()
        budget.deadline = time.monotonic() + 5.0  # the exec's: an 8 s wait does not fit
        with pytest.raises(LlmUnavailable, match=r"HTTP 429 from the endpoint, which asks for "
                           r"a retry after 8 s \(attempt 1\)"):
            b.batch([(f"slice {i}", "q") for i in range(8)], budget)
        assert ep.count == budget.calls == 8 and ep.max_in_flight <= 5


# (headers, what the error says of them): PLUG5, session 31: a Retry-After past the exec's
# deadline ended the call after one attempt, saying only "HTTP 429 from the endpoint"
RETRY_AFTER = [((("Retry-After", "99999"),), ", which asks for a retry after 99999 s"),
               ((("Retry-After", "30"),), ", which asks for a retry after 30 s"),
               ((("retry-after-ms", "45000"),), ", which asks for a retry after 45 s"),
               ((("Retry-After", "Wed, 21 Oct 2015 07:28:00 GMT"),), ""),  # no seconds: none
               ((), "")]


@pytest.mark.parametrize(("headers", "said"), RETRY_AFTER)
@pytest.mark.parametrize("status", [429, 503])
def test_the_wait_an_endpoint_asks_for_is_said(headers: tuple[tuple[str, str], ...], said: str,
                                               status: int) -> None:
    reply = Reply(status=status, headers=headers)
    with ChatEndpoint(lambda n, body: reply) as ep, Broker.from_config(
            _section(ep.url, retry_backoff_s=0.0)) as b:
        budget = b.new_budget()
        budget.deadline = time.monotonic() + 5.0  # none of the asked waits (8 s at most) fits
        with pytest.raises(LlmUnavailable) as info:
            b.call("slice", "q", budget)
    message = str(info.value)
    assert message.startswith(f"HTTP {status} from the endpoint{said} (attempt "), message


def test_an_azure_deployment_url_keeps_its_query_and_sends_api_key() -> None:
    with ChatEndpoint(lambda n, body: Reply(text="tea")) as ep:
        root = ep.url.removesuffix("/v1")
        out, _ = _ask(_section(f"{root}/openai/deployments/gpt?api-version=2024-10-21"))
        assert out == "tea"
        assert ep.paths == ["/openai/deployments/gpt/chat/completions?api-version=2024-10-21"]
        assert ep.headers[0]["api-key"] == KEY
        _ask(_section(ep.url))  # no api-version: no api-key header either
        assert "api-key" not in ep.headers[1]


def test_a_redirect_to_another_origin_carries_no_key_header() -> None:
    with ChatEndpoint(lambda n, body: Reply(text="tea")) as target:
        to = target.url.replace("127.0.0.1", "localhost") + "/chat/completions?api-version=1"
        with ChatEndpoint(lambda n, body: Reply(status=307, headers=(("Location", to),))) as ep:
            root = ep.url.removesuffix("/v1")
            out, _ = _ask(_section(f"{root}/openai/deployments/d?api-version=1"))
            assert ep.headers[0]["api-key"] == KEY
        assert out == "tea" and target.count == 1
        assert not {"api-key", "authorization"} & set(target.headers[0]), target.headers


def test_a_base_url_without_v1_says_so() -> None:
    def ollama(n: int, body: dict[str, Any]) -> Reply:  # serves /v1/chat/completions only
        if ep.paths[n].startswith("/v1/"):
            return Reply(text="tea")
        return Reply(status=404, raw=b"404 page not found")

    with ChatEndpoint(ollama) as ep:
        root = ep.url.removesuffix("/v1")
        out, _ = _ask(_section(root))
        assert "HTTP 404" in out and "no /v1 in base_url" in out, out
        for url in (root + "/v1", root + "/v1/"):
            assert _ask(_section(url))[0] == "tea"


def test_a_redirect_that_makes_the_post_a_get_names_where_to_point() -> None:
    with ChatEndpoint(lambda n, body: Reply(text="tea")) as ep:
        target = ep.url + "/chat/completions"
        for status in (301, 302, 303, 307, 308):
            def moved(n: int, body: dict[str, Any], status: int = status) -> Reply:
                return Reply(status=status, headers=(("Location", target),))
            with ChatEndpoint(moved) as old:  # the stub serves no GET: 501
                out, calls = _ask(_section(old.url))
            if status in (307, 308):  # the POST is repeated: the target's answer
                assert out == "tea", out
            else:
                assert out.startswith("ERROR LlmUnavailable: HTTP 501: the endpoint redirected "
                                      f"the request to {target} as a GET"), out
                assert calls == 2  # the redirected GET was a request too (PLUG5)


NOT_HTTP = ["{host}/v1", "localhost:{port}/v1", "ftp://{host}/v1", "http:/{host}/v1",
            "http://[::1", "http://127.0.0.1:99999/v1", "http://127.0.0.1:0/v1"]


@pytest.mark.parametrize("spelt", NOT_HTTP)
def test_a_base_url_that_is_no_http_url_is_named_once(spelt: str) -> None:
    with ChatEndpoint(lambda n, body: Reply(text="tea")) as ep:
        host = ep.url.removeprefix("http://").removesuffix("/v1")
        url = spelt.format(host=host, port=host.split(":")[1])
        out, calls = _ask(_section(url))
    assert out.startswith("ERROR LlmUnavailable: base_url ") and out.endswith(
        "is no http(s) URL: write it as http://HOST:PORT/v1") and calls == 1, out


@pytest.mark.parametrize("spelt", [" {url}", "{url}\n", "{url}/chat/completions",
                                    "{url}/chat/completions/"])
def test_a_base_url_with_spaces_or_the_whole_route_is_read(spelt: str) -> None:
    def strict(n: int, body: dict[str, Any]) -> Reply:  # a real server's one route
        ok = ep.paths[n] == "/v1/chat/completions"
        return Reply(text="tea") if ok else Reply(status=404, raw=b"404 page not found")

    with ChatEndpoint(strict) as ep:
        out, calls = _ask(_section(spelt.format(url=ep.url)))
    assert out == "tea" and calls == 1, out


def test_a_password_in_base_url_is_not_in_the_error() -> None:
    out, calls = _ask(_section(f"http://user:{KEY}@127.0.0.1:9/v1", max_retries=0))
    assert out.startswith("ERROR LlmUnavailable: cannot reach http://user:***@127.0.0.1:9/v1")
    assert KEY not in out and calls == 1


@pytest.mark.parametrize("key", ["sk-a\nb", "sk-\u043a\u043b\u044e\u0447", "sk-\x7f", "sk-a\tb"])
def test_a_key_no_header_can_carry_is_named_as_such(key: str) -> None:
    with ChatEndpoint(lambda n, body: Reply(text="tea")) as ep:
        out, _ = _ask(_section(ep.url, api_key=key))
        assert out.startswith("ERROR LlmUnavailable: the API key ([llm] api_key or "
                              "$OPENAI_API_KEY) holds a character") and ep.count == 0, out
        assert _ask(_section(ep.url, api_key=f" {KEY}\n"))[0] == "tea"  # a key file's newline
        assert ep.headers[0]["authorization"] == f"Bearer {KEY}"


@pytest.mark.skipif(importlib.util.find_spec("socksio") is not None, reason="socksio present")
def test_a_socks_proxy_the_client_cannot_use_is_a_typed_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALL_PROXY", f"socks5://user:{KEY}@127.0.0.1:9")
    out, _ = _ask(_section("http://127.0.0.1:9/v1"))
    assert out.startswith("ERROR LlmUnavailable: cannot set up the HTTP client (proxy from "
                          "$ALL_PROXY") and KEY not in out, out
