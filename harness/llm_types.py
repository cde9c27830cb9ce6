"""The vocabulary of the LLM broker: its typed errors, a sub-call request and answer, one
exec's budget (`ExecBudget`), and the Provider protocol every backend implements
(harness/llm_provider.py has the two we ship).

The prompt of a sub-call comes from prompts/rlm_system.md and prompts/rlm_user.md; the user
turn fences the slice between two lines tagged with the slice's own sha256 prefix, so the
slice cannot forge the closing fence (it would have to contain its own hash).
"""

from __future__ import annotations

import contextvars
import hashlib
import math
import threading
import time
from dataclasses import dataclass
from string import Template
from typing import TYPE_CHECKING, Any, Protocol

import prompts
from vault import counted

if TYPE_CHECKING:  # the openai package costs seconds to import; only its types are needed here
    import anyio  # (a command that needs no LLM, `rmh read`, imports no anyio either)
    from openai.types.chat import ChatCompletionMessageParam


class RlmError(Exception):
    """Base of the broker's errors; the REPL sees each as an exception of its class name.

    `code_name` and `data()` let the boundary error map (harness.errors) map it
    to its application code ("llm_error" -32030, "budget_exceeded" -32031).
    """

    code_name = "llm_error"

    def data(self) -> dict[str, object]:
        """JSON-safe fields: the error's class name and its message (never the key)."""
        return {"type": type(self).__name__, "reason": str(self)}


class RlmBudgetExceeded(RlmError):
    """The exec's call budget is spent (every attempt counts, retries included)."""

    code_name = "budget_exceeded"


class RlmTimeout(RlmError):
    """The sub-call did not answer within the per-call timeout, after all retries."""


class LlmUnavailable(RlmError):
    """The endpoint refused, failed or is unreachable, after all retries."""


class RlmDepthExceeded(RlmError):
    """A call was attempted while serving a sub-call: depth is 1."""


class RlmCancelled(RlmError):
    """The exec the sub-call belongs to was cancelled or has ended: the call was stopped."""


class RlmSliceTooLarge(RlmError):
    """The slice is longer than the configured cap (slice_max_chars)."""


class TransientError(Exception):
    """A provider failure worth retrying (connection error, HTTP 408/409/429/5xx).
    `retry_after`: the seconds the endpoint asked to wait (Retry-After), 0 if none;
    `adapted`: the provider changed its request to suit the endpoint (a parameter it refused),
    so the next attempt is not a retry of the same request (it still counts as a call)."""

    def __init__(self, message: str, *, retry_after: float = 0.0, adapted: bool = False) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.adapted = adapted


@dataclass(frozen=True)
class SubRequest:
    """One sub-call: the two turns sent to a model, plus the raw slice and question."""

    system: str
    user: str
    slice_text: str = ""
    question: str = ""
    max_words: int | None = None

    def messages(self) -> list[ChatCompletionMessageParam]:
        return [
            {"role": "system", "content": self.system},
            {"role": "user", "content": self.user},
        ]


@dataclass(frozen=True)
class SubAnswer:
    """A provider's answer text and its token usage (0 where the provider has none)."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0


def build_request(slice_text: str, question: str, max_words: int | None = None) -> SubRequest:
    """The rlm_call request: the slice fenced by a tag derived from its own sha256.

    The slice cannot forge the closing fence: it would have to contain its own hash.
    """
    fence = hashlib.sha256(slice_text.encode("utf-8")).hexdigest()[:16]
    rule = f"Answer in at most {counted(max_words, 'word')}." if max_words else ""
    user = Template(prompts.load("rlm_user")).substitute(
        fence=fence, slice=slice_text, question=question.strip(), length_rule=rule
    )
    return SubRequest(prompts.load("rlm_system"), user, slice_text, question, max_words)


class Provider(Protocol):
    """Something that answers a SubRequest; raises TimeoutError, _Transient or RlmError."""

    @property
    def name(self) -> str: ...

    @property
    def model(self) -> str: ...

    async def complete(self, request: SubRequest) -> SubAnswer: ...

    async def aclose(self) -> None: ...


class ExecBudget:
    """The counters of one top-level exec. Thread-safe; `report()` is JSON-safe."""

    def __init__(self, limit: int, exec_id: int, provider: str) -> None:
        self.limit = limit
        self.exec_id = exec_id
        self.provider = provider
        self.calls = 0
        self.retries = 0
        self.cache_hits = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.deadline = math.inf  # time.monotonic() by which the exec must be answered
        self.cancelled = False  # the exec is over: no more sub-calls (Broker.cancel)
        self._scopes: set[anyio.CancelScope] = set()  # its sub-calls running on the broker
        self._lock = threading.Lock()

    def watch(self, scope: anyio.CancelScope) -> bool:
        """Register a running sub-call's scope; False when the exec is over already."""
        with self._lock:
            if not self.cancelled:
                self._scopes.add(scope)
            return not self.cancelled

    def unwatch(self, scope: anyio.CancelScope) -> None:
        with self._lock:
            self._scopes.discard(scope)

    def stop(self) -> list[anyio.CancelScope]:
        """Mark the exec over; the scopes of its sub-calls still running."""
        with self._lock:
            self.cancelled = True
            return list(self._scopes)

    def time_left(self) -> float:
        """Seconds to the exec's deadline (infinity when none is bound)."""
        return self.deadline - time.monotonic()

    def take(self) -> None:
        """Count one attempt, or raise RlmBudgetExceeded if the budget is spent. The attempt
        (the task calling this, then the provider) charges this budget for each redirect
        its HTTP client follows: `charge_redirect`."""
        with self._lock:
            if self.calls >= self.limit:
                raise RlmBudgetExceeded(
                    f"rlm budget spent: {self.limit} sub-calls per exec (retries count)"
                )
            self.calls += 1
        _ATTEMPT.set(self)

    @property
    def remaining(self) -> int:
        with self._lock:
            return self.limit - self.calls

    def add(
        self, *, retries: int = 0, cache_hits: int = 0, answer: SubAnswer | None = None
    ) -> None:
        with self._lock:
            self.retries += retries
            self.cache_hits += cache_hits
            if answer is not None:
                self.prompt_tokens += answer.prompt_tokens
                self.completion_tokens += answer.completion_tokens

    def report(self) -> dict[str, Any]:
        with self._lock:
            return {
                "provider": self.provider,
                "calls": self.calls,
                "limit": self.limit,
                "retries": self.retries,
                "cache_hits": self.cache_hits,
                "tokens": {"prompt": self.prompt_tokens, "completion": self.completion_tokens},
            }


_ATTEMPT: contextvars.ContextVar[ExecBudget | None] = contextvars.ContextVar(
    "rmh_llm_attempt", default=None)


def charge_redirect() -> None:
    """A redirect the running attempt's HTTP client is about to follow is one more request
    to the endpoint: one more call of that attempt's budget (RlmBudgetExceeded when spent),
    so the endpoint never sees more requests than the budget allows (PLUG5, session 31: a
    redirect loop was 11 to 16 requests per counted call)."""
    budget = _ATTEMPT.get()
    if budget is not None:
        budget.take()
