"""The two sub-call backends: the offline extractive reasoner and any OpenAI-compatible
chat-completions endpoint (through `openai.AsyncOpenAI`).

Providers answer one request and classify failures; retries, timeouts, budgets and caching are
the broker's (harness/llm.py). A provider raises TimeoutError (retryable, counted as a timeout),
TransientError (retryable: connection errors, HTTP 408/409/429/5xx) or LlmUnavailable (final).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from .config import LlmSection
from .extractive import extract_answer
from .llm_types import LlmUnavailable, SubAnswer, SubRequest, TransientError

if TYPE_CHECKING:
    import openai

# The longest answer text a sub-call returns (max_tokens bounds a well-behaved model; this
# bounds what an endpoint that ignores it can put into the REPL).
MAX_ANSWER_CHARS = 64 * 1024
# A token count past this is not a count: the ledger keeps 0 for it (see `_answer`).
MAX_TOKEN_COUNT = 2**31
# The most bytes of one HTTP answer read (after gzip/deflate/br decoding), error bodies too: a
# chat completion of MAX_ANSWER_CHARS escaped is well under 1 MiB. ADVRPC (session 27): the
# client read any body whole, so a 298 KiB gzip body (300 MiB once decoded) took the serving
# process to 1 GB; a few at once (5 may be in flight) end it by OOM.
MAX_BODY_BYTES = 8 * 1024 * 1024
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # json has joined every valid pair already
DEFAULT_ENDPOINT = "https://api.openai.com/v1"
OFFLINE_REASON = "no model configured ([llm].model or RMH_MODEL)"


def shown_endpoint(url: str) -> str:
    """`url` as status shows it (to the agent too): a password in it or a query, where keys
    go (`https://user:KEY@host/v1`, `?key=KEY`), spelt `***`."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError as exc:  # `http://[::1`: not shown at all, it may hold a key
        return f"(not a URL: {exc})"  # (a ValueError traceback from status and ask before)
    user, at, host = parts.netloc.rpartition("@")
    if at and ":" in user:
        user = user.split(":", 1)[0] + ":***"
    return urlunsplit((parts.scheme, user + at + host, parts.path,
                       "***" if parts.query else "", ""))


def describe(section: LlmSection) -> dict[str, str]:
    """The provider the broker picks for `section` (Broker.from_config), without building it:
    `rmh status` says it without importing openai."""
    if section.model:
        return {"provider": OpenAIProvider.name, "model": section.model,
                "endpoint": shown_endpoint(section.base_url or DEFAULT_ENDPOINT), "reason": ""}
    return {"provider": ExtractiveProvider.name, "model": ExtractiveProvider.model,
            "endpoint": "", "reason": OFFLINE_REASON}


class AnswerTooLarge(Exception):
    """An endpoint's answer passed MAX_BODY_BYTES (raised inside the HTTP client)."""


def _capped_http_client(section: LlmSection, cap: int) -> Any:
    """The openai SDK's own HTTP client class (its defaults kept) whose `send` reads each
    answer as it comes, decoded, and stops at `cap` bytes (AnswerTooLarge): the SDK would
    read the whole body, on success and on an HTTP error alike, before any check of ours."""
    import openai

    class Capped(openai.DefaultAsyncHttpxClient):
        async def send(self, request: Any, **kwargs: Any) -> Any:
            kwargs["stream"] = True
            response = await super().send(request, **kwargs)
            body = bytearray()
            try:
                async for chunk in response.aiter_bytes():  # decoded: a bomb counts as it grows
                    body += chunk
                    if len(body) > cap:
                        raise AnswerTooLarge(f"the endpoint's answer is over {cap} bytes")
            finally:
                await response.aclose()
            drop = {"content-encoding", "content-length", "transfer-encoding"}
            headers = [(k, v) for k, v in response.headers.multi_items()
                       if k.lower() not in drop]
            return type(response)(response.status_code, headers=headers, content=bytes(body),
                                  request=request, extensions=response.extensions)

    return Capped(timeout=section.timeout_s)


class ExtractiveProvider:
    """The offline default: deterministic extractive answers (harness/extractive.py)."""

    name = "extractive"
    model = "extractive-bm25"

    async def complete(self, request: SubRequest) -> SubAnswer:
        return SubAnswer(extract_answer(request.slice_text, request.question,
                                        max_words=request.max_words))

    async def aclose(self) -> None:
        return None


class OpenAIProvider:
    """Any OpenAI-compatible chat-completions endpoint, through `openai.AsyncOpenAI`."""

    name = "openai"

    def __init__(self, section: LlmSection) -> None:
        # Imported here, not per call: the first import costs 0.5-2 s and must never eat into
        # a sub-call's timeout. Only a configured model pays it (the offline default does not).
        import openai  # noqa: F401
        self.model = section.model
        self.endpoint = section.base_url or DEFAULT_ENDPOINT
        self._key = section.api_key
        self._section = section
        self._client: openai.AsyncOpenAI | None = None

    def _scrub(self, text: str) -> str:
        if self._key:
            text = text.replace(self._key, "***")
        return text[:300]

    async def complete(self, request: SubRequest) -> SubAnswer:
        import openai  # already imported by __init__: a dictionary lookup

        if self._client is None:  # created on the broker's loop, the only one that uses it
            self._client = openai.AsyncOpenAI(
                api_key=self._key or "sk-no-key",  # local servers need a non-empty value
                base_url=self.endpoint,
                timeout=self._section.timeout_s,
                max_retries=0,  # retries are ours, so each one is counted
                http_client=_capped_http_client(self._section, MAX_BODY_BYTES),
            )
        try:
            resp = await self._client.chat.completions.create(
                model=self.model,
                messages=request.messages(),
                max_tokens=self._section.max_tokens,
                temperature=self._section.temperature,
                stream=False,
            )
        except AnswerTooLarge as exc:  # passed on as it is (openai 2+), not retried
            raise LlmUnavailable(str(exc)) from None
        except openai.APITimeoutError as exc:
            raise TimeoutError("the endpoint did not answer in time") from exc
        except openai.APIConnectionError as exc:
            if isinstance(exc.__cause__, AnswerTooLarge):  # wrapped (openai 1.x)
                raise LlmUnavailable(str(exc.__cause__)) from None
            raise TransientError(f"cannot reach {self.endpoint}") from exc
        except openai.APIStatusError as exc:
            status = exc.status_code
            if status in (408, 409, 429) or status >= 500:
                raise TransientError(f"HTTP {status} from the endpoint") from exc
            if status in (401, 403):  # never echo the body: it may quote part of the key
                raise LlmUnavailable(f"HTTP {status}: authentication refused") from exc
            raise LlmUnavailable(f"HTTP {status}: {self._scrub(exc.message)}") from exc
        except openai.OpenAIError as exc:
            raise LlmUnavailable(self._scrub(str(exc))) from exc
        except (ValueError, RecursionError, AttributeError, TypeError) as exc:
            # the client decodes the body leniently: not JSON, nested past the recursion
            # limit, a number of 5,000 digits, or JSON of another shape fails in there
            raise LlmUnavailable(f"the endpoint's answer is not a chat completion "
                                 f"({type(exc).__name__})") from None
        return _answer(resp)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()


def _answer(resp: Any) -> SubAnswer:
    """The text and token counts of a chat completion, checked: the endpoint is outside the
    boundary, and the client builds its objects without validation (ADVRPC: a body whose
    `content` was a list or whose `message` was null was an AttributeError, `"prompt_tokens":
    1e400` or `NaN` made the exec's result and every later `status` -32603, not JSON).
    A lone surrogate in the text becomes U+FFFD; a count that is not an int in
    [0, MAX_TOKEN_COUNT] is recorded as 0."""
    try:
        choices = resp.choices
        text = choices[0].message.content if choices else None
        usage = resp.usage
        counts = (usage.prompt_tokens, usage.completion_tokens) if usage else (0, 0)
    except (AttributeError, TypeError, IndexError, KeyError):
        raise LlmUnavailable("the endpoint's answer is not a chat completion") from None
    if not isinstance(text, str) or not text.strip():
        raise LlmUnavailable("the model returned no text")
    prompt, completion = (n if isinstance(n, int) and not isinstance(n, bool)
                          and 0 <= n <= MAX_TOKEN_COUNT else 0 for n in counts)
    return SubAnswer(_LONE_SURROGATE.sub("\ufffd", text.strip()[:MAX_ANSWER_CHARS]),
                     prompt, completion)
