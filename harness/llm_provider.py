"""The two sub-call backends: the offline extractive reasoner and any OpenAI-compatible
chat-completions endpoint (through `openai.AsyncOpenAI`).

Providers answer one request and classify failures; retries, timeouts, budgets and caching are
the broker's (harness/llm.py). A provider raises TimeoutError (retryable, counted as a timeout),
TransientError (retryable: connection errors, HTTP 408/409/429/5xx) or LlmUnavailable (final).
"""

from __future__ import annotations

import contextvars
import re
from typing import TYPE_CHECKING, Any

from .config import LlmSection
from .extractive import extract_answer
from .key_forms import MASK, key_pattern, scrubbed
from .llm_endpoint import base_url, setup_problem
from .llm_endpoint import shown_endpoint as shown_endpoint  # harness/llm.py's
from .llm_refusal import refused_param
from .llm_types import LlmUnavailable, SubAnswer, SubRequest, TransientError, charge_redirect

if TYPE_CHECKING:
    import openai

# The longest answer text a sub-call returns (max_tokens bounds a well-behaved model; this
# bounds what an endpoint that ignores it can put into the REPL).
MAX_ANSWER_CHARS = 64 * 1024
# Redirects one attempt follows (a moved endpoint, http -> https); each is a call of the
# exec's budget. PLUG5 (session 31): a redirect loop was 11-16 requests per counted call.
MAX_REDIRECTS = 1
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


def describe(section: LlmSection) -> dict[str, str]:
    """The provider the broker picks for `section` (Broker.from_config), without building it:
    `rmh status` says it without importing openai, and why its calls will fail when its base
    URL cannot be one (each call is LlmUnavailable: OpenAIProvider._open)."""
    if section.model:
        endpoint = section.base_url or DEFAULT_ENDPOINT
        return {"provider": OpenAIProvider.name, "model": section.model,
                "endpoint": shown_endpoint(base_url(endpoint)),
                "reason": setup_problem(endpoint, section.api_key.strip())}
    return {"provider": ExtractiveProvider.name, "model": ExtractiveProvider.model,
            "endpoint": "", "reason": OFFLINE_REASON}


# the request an HTTP client's `send` was given (the hops after it are redirects it follows)
_FIRST: contextvars.ContextVar[object] = contextvars.ContextVar("rmh_llm_first", default=None)


class AnswerTooLarge(Exception):
    """An endpoint's answer passed MAX_BODY_BYTES (raised inside the HTTP client)."""


def _capped_http_client(section: LlmSection, cap: int) -> Any:
    """The openai SDK's own HTTP client class (its defaults kept) whose `send` reads each
    answer as it comes, decoded, and stops at `cap` bytes (AnswerTooLarge): the SDK would
    read the whole body, on success and on an HTTP error alike, before any check of ours."""
    import openai

    class Capped(openai.DefaultAsyncHttpxClient):
        def _redirect_headers(self, request: Any, url: Any, method: str) -> Any:
            headers = super()._redirect_headers(request, url, method)
            if "Authorization" in request.headers and "Authorization" not in headers:
                headers.pop("api-key", None)  # leaving the origin: Azure's key header too
            return headers

        async def send(self, request: Any, **kwargs: Any) -> Any:
            kwargs["stream"] = True
            first = _FIRST.set(request)
            try:
                response = await super().send(request, **kwargs)
            finally:
                _FIRST.reset(first)
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
                                  request=response.request,  # the last, after redirects
                                  extensions=response.extensions)

    async def each_request(request: Any) -> None:  # a redirect followed: one more call
        if request is not _FIRST.get():
            charge_redirect()

    return Capped(timeout=section.timeout_s, max_redirects=MAX_REDIRECTS,
                  event_hooks={"request": [each_request]})


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
    """Any OpenAI-compatible chat-completions endpoint, through `openai.AsyncOpenAI`.

    A query in base_url (Azure's `?api-version=...`) is sent with every request, and then the
    key also as Azure's `api-key` header. A 400/422 refusing `max_tokens` (OpenAI's reasoning
    models want `max_completion_tokens`) or `temperature` (refused, or only its default taken;
    harness/llm_refusal.py reads which) makes this provider send the other name, or none,
    from then on (TransientError adapted)."""

    name = "openai"

    def __init__(self, section: LlmSection) -> None:
        # Imported here, not per call: the first import costs 0.5-2 s and must never eat into
        # a sub-call's timeout. Only a configured model pays it (the offline default does not).
        import openai  # noqa: F401
        self.model = section.model
        self.endpoint = base_url(section.base_url or DEFAULT_ENDPOINT)  # as the SDK is given it
        self._key = section.api_key.strip()  # a key file's newline is no part of the key
        self._forms = key_pattern(self._key)  # its spellings an echo may carry: key_forms.py
        self.problem = setup_problem(self.endpoint, self._key)  # "" or why each call fails
        self._section = section
        self._client: openai.AsyncOpenAI | None = None
        self._params: dict[str, Any] = {"max_tokens": section.max_tokens,
                                        "temperature": section.temperature}

    def _scrub(self, text: str) -> str:
        if self._key:  # a short key too, in an error (no ordinary answer is blanked by it)
            text = scrubbed(text.replace(self._key, MASK), self._forms)
        return _LONE_SURROGATE.sub("\ufffd", " ".join(text[:4096].split())[:300])

    def _open(self) -> openai.AsyncOpenAI:
        from urllib.parse import parse_qsl, urlsplit, urlunsplit

        import openai

        if problem := setup_problem(self.endpoint, self._key):
            raise LlmUnavailable(problem)  # else 1 + max_retries calls, each "cannot reach"
        base = urlsplit(self.endpoint)
        query = dict(parse_qsl(base.query))
        headers = {"api-key": self._key} if "api-version" in query and self._key else None
        try:
            return openai.AsyncOpenAI(
                api_key=self._key or "sk-no-key",  # local servers need a non-empty value
                base_url=urlunsplit(base._replace(query="", fragment="")),
                default_query=query or None, default_headers=headers,
                timeout=self._section.timeout_s,
                max_retries=0,  # retries are ours, so each one is counted
                http_client=_capped_http_client(self._section, MAX_BODY_BYTES),
            )
        except (ImportError, ValueError, TypeError) as exc:  # $ALL_PROXY=socks5://.. without
            raise LlmUnavailable(  # socksio, a proxy URL httpx cannot read
                f"cannot set up the HTTP client ({_proxy_note() or 'base_url'}): "
                f"{self._scrub(str(exc))}") from None

    async def complete(self, request: SubRequest) -> SubAnswer:
        import openai  # already imported by __init__: a dictionary lookup

        if self._client is None:  # created on the broker's loop, the only one that uses it
            self._client = self._open()
        params = dict(self._params)
        try:
            resp = await self._client.chat.completions.create(
                model=self.model, messages=request.messages(), stream=False, **params)
        except AnswerTooLarge as exc:  # passed on as it is (openai 2+), not retried
            raise LlmUnavailable(str(exc)) from None
        except openai.APITimeoutError as exc:
            raise TimeoutError("the endpoint did not answer in time") from exc
        except openai.APIConnectionError as exc:
            if isinstance(exc.__cause__, AnswerTooLarge):  # wrapped (openai 1.x)
                raise LlmUnavailable(str(exc.__cause__)) from None
            # reached, but it broke off or its answer was no HTTP: "cannot reach" sent the
            # user to check a URL that works (PLUG5, session 31)
            note, cause = _proxy_note(), exc.__cause__
            if type(cause).__name__ in ("TooManyRedirects", "UnsupportedProtocol"):
                where = shown_endpoint(_request_url(cause))
                raise LlmUnavailable(f"{shown_endpoint(self.endpoint)} redirected the request "
                                     f"to {where}, which is no endpoint to follow (a second "
                                     "redirect, or no http(s)): set base_url to where the "
                                     "endpoint is") from exc
            if type(cause).__name__ == "RemoteProtocolError":
                raise TransientError(f"{shown_endpoint(self.endpoint)} answered no whole HTTP "
                                     f"response ({self._scrub(str(cause))[:120]})") from exc
            why = "; ".join(x for x in (_os_reason(exc), note) if x)
            raise TransientError(f"cannot reach {shown_endpoint(self.endpoint)}"
                                 + (f" ({why})" if why else "")) from exc
        except openai.APIStatusError as exc:
            raise self._status_error(exc, params) from exc
        except openai.OpenAIError as exc:
            raise LlmUnavailable(self._scrub(str(exc))) from exc
        except (ValueError, RecursionError, AttributeError, TypeError) as exc:
            # the client decodes the body leniently: not JSON, nested past the recursion
            # limit, a number of 5,000 digits, or JSON of another shape fails in there
            raise LlmUnavailable(f"the endpoint's answer is not a chat completion "
                                 f"({type(exc).__name__})") from None
        try:
            answer = _answer(resp)
        except LlmUnavailable as exc:  # an error member of the body may quote anything
            raise LlmUnavailable(self._scrub(str(exc))) from None
        text = scrubbed(answer.text, self._forms)
        if text != answer.text:
            # an endpoint (a proxy, an echo server) that quotes the request's headers in its
            # answer handed the key to the REPL (session 41, NOTES-SBX17): spelt *** there
            # too, in the encodings an echo spells it in (key_forms.py; session 42)
            answer = SubAnswer(text, answer.prompt_tokens, answer.completion_tokens)
        return answer

    def _status_error(self, exc: Any, sent: dict[str, Any]) -> Exception:
        """The typed error for an HTTP error answer (TransientError: worth another attempt)."""
        status, code = exc.status_code, getattr(exc, "code", None)
        body = exc.body if isinstance(exc.body, dict) else {}  # the body's "error", or it all
        message = (body["message"] if isinstance(body.get("message"), str) else exc.body
                   if isinstance(exc.body, str) and exc.body.strip() else str(exc.message))
        request = exc.response.request  # the last one: a redirect may have been followed
        if request.method != "POST":  # a 301/302/303 made the POST a GET (http -> https)
            return LlmUnavailable(f"HTTP {status}: the endpoint redirected the request to "
                                  f"{shown_endpoint(str(request.url))} as a {request.method}: "
                                  "set base_url to where it redirects")
        if status in (401, 403):  # never echo the body: it may quote part of the key
            return LlmUnavailable(f"HTTP {status}: authentication refused (check [llm] api_key "
                                  "or $OPENAI_API_KEY)")
        if status == 429 and code == "insufficient_quota":  # no retry makes it pass
            return LlmUnavailable(f"HTTP 429: the account's quota is spent: "
                                  f"{self._scrub(message)}")
        if status in (408, 409, 429) or status >= 500:
            # the wait asked for is said: past the exec's deadline, one attempt is all (PLUG5)
            wait = _retry_after(exc.response.headers)
            asked = f", which asks for a retry after {wait:g} s" if wait else ""
            return TransientError(f"HTTP {status} from the endpoint{asked}", retry_after=wait)
        if status in (400, 422):
            refused = refused_param(exc.body, message, sent)  # harness/llm_refusal.py
            if refused == "max_tokens" and refused in self._params:  # (once: calls overlap)
                self._params["max_completion_tokens"] = self._params.pop("max_tokens")
            elif refused in ("max_completion_tokens", "temperature"):
                self._params.pop(refused, None)
            if refused:
                return TransientError(f"HTTP {status}: the endpoint refused {refused}",
                                      adapted=True)
        hint = ""
        if status == 404 and not re.search(r"/v\d|/openai/", _path(self.endpoint)):
            hint = " (no /v1 in base_url: most servers serve /v1/chat/completions)"
        return LlmUnavailable(f"HTTP {status}: {self._scrub(message)}{hint}")

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()


def _path(url: str) -> str:
    from urllib.parse import urlsplit

    try:
        return urlsplit(url).path
    except ValueError:
        return ""


def _request_url(error: Any) -> str:
    """The URL of the request an HTTP client error is about (its redirect target)."""
    try:
        return str(error.request.url)
    except (AttributeError, RuntimeError):  # httpx raises RuntimeError when none is set
        return "?"


def _retry_after(headers: Any) -> float:
    """Seconds from `retry-after-ms` or `retry-after` (seconds only; 0 if absent or odd)."""
    for name, unit in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            value = float(headers.get(name, "")) / unit
        except (TypeError, ValueError):
            continue
        if 0 <= value < float("inf"):
            return value
    return 0.0


def _proxy_note() -> str:
    """The proxy variables the HTTP client reads that are set (their names only: a proxy URL
    may hold a password)."""
    import os

    names = [n for n in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy",
                         "all_proxy") if os.environ.get(n)]
    return f"proxy from ${', $'.join(names)}; $NO_PROXY bypasses it" if names else ""


def _os_reason(exc: BaseException) -> str:
    """Why a connection failed, from the first OSError in `exc`'s chain ("Connection refused",
    "Name or service not known"), with where to look; "" when none says. The OS's words only:
    an exception's own text may quote a URL, and a URL a password (test_llm_servers.py)."""
    import os

    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, OSError) and isinstance(cur.strerror, str) and cur.strerror:
            # asyncio's "Connect call failed ('HOST', PORT)" names a proxy's address: errno's
            # own words; a resolver's error (negative errno) has only its strerror
            errno = cur.errno if isinstance(cur.errno, int) else 0
            said = os.strerror(errno) if errno > 0 else cur.strerror
            return (f"{said[:120]}: is the server running there? "
                    "[llm] base_url or $OPENAI_BASE_URL names it")
        cur = cur.__cause__ or cur.__context__
    return ""


def _answer(resp: Any) -> SubAnswer:
    """The text and token counts of a chat completion, checked: the endpoint is outside the
    boundary, and the client builds its objects without validation (ADVRPC: a body whose
    `content` was a list or whose `message` was null was an AttributeError, `"prompt_tokens":
    1e400` or `NaN` made the exec's result and every later `status` -32603, not JSON).
    `content` as a list of parts (LiteLLM, Mistral) is the text of its text parts; an answer
    cut by max_tokens (finish_reason "length") ends in TRUNCATED; no text says why (reasoning
    only, cut before any answer, filtered, no choices). A lone surrogate in the text becomes
    U+FFFD; a count that is not an int in [0, MAX_TOKEN_COUNT] is recorded as 0."""
    try:
        choices = resp.choices
        message = choices[0].message if choices else None
        text = _text(message.content) if message is not None else None
        finish = choices[0].finish_reason if choices else None
        usage = resp.usage
        counts = (usage.prompt_tokens, usage.completion_tokens) if usage else (0, 0)
    except (AttributeError, TypeError, IndexError, KeyError):
        raise LlmUnavailable("the endpoint's answer is not a chat completion") from None
    if not isinstance(text, str) or not text.strip():
        raise LlmUnavailable(_why_no_text(resp, message, finish))
    prompt, completion = (n if isinstance(n, int) and not isinstance(n, bool)
                          and 0 <= n <= MAX_TOKEN_COUNT else 0 for n in counts)
    text = text.strip()[:MAX_ANSWER_CHARS] + (TRUNCATED if finish == "length" else "")
    return SubAnswer(_LONE_SURROGATE.sub("\ufffd", text), prompt, completion)


# appended to an answer the endpoint cut at max_tokens: the caller sees it is incomplete
TRUNCATED = " [truncated: the model reached max_tokens]"


def _text(content: object) -> str | None:
    """`content` as text: a string, or the text parts of a list of parts joined."""
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict)
                 and p.get("type", "text") in ("text", "output_text")]
        return "".join(p for p in parts if isinstance(p, str))
    return content if isinstance(content, str) else None


def _why_no_text(resp: Any, message: Any, finish: object) -> str:
    reasoning = any(isinstance(getattr(message, name, None), str) and getattr(message, name)
                    for name in ("reasoning_content", "reasoning"))
    error = getattr(resp, "error", None)
    if finish == "length":
        return ("the model reached max_tokens before any answer text"
                + (" (it spent them on reasoning)" if reasoning else "")
                + ": raise [llm] max_tokens")
    if reasoning:
        return "the model returned reasoning but no answer text"
    if getattr(message, "tool_calls", None) or getattr(message, "function_call", None):
        return "the model answered with a tool call, not text (a sub-call offers no tools)"
    if finish == "content_filter":
        return "the endpoint's content filter withheld the answer"
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        error = error["message"]
    if isinstance(error, str):  # {"error": {"message": ..}} (OpenRouter), {"error": ".."}
        return f"the endpoint answered an error: {error[:300]}"
    if not resp.choices:
        return "the endpoint's answer has no choices"
    return "the model returned no text"
