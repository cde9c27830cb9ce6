"""The LLM broker behind `rlm_call`: bounded depth-1 sub-calls, on the trusted side only.

A sub-call is one system turn (prompts/rlm_system.md) and one user turn (prompts/rlm_user.md,
which fences the slice as data) sent to an OpenAI-compatible chat-completions endpoint, with no
tools, no REPL and no way to call back: its answer is a string, returned as data. With no model
configured the `extractive` provider answers deterministically from the slice instead.

Every bound is enforced here, before a request leaves the process:
- calls per top-level exec (`ExecBudget`, one per exec; every attempt counts, retries
  included, cache hits do not), RlmBudgetExceeded past it;
- calls in flight (an anyio.CapacityLimiter shared by the whole session);
- depth 1: a call made while a sub-call is being served is refused (RlmDepthExceeded);
- a per-attempt timeout (RlmTimeout) and a fixed number of retries with exponential back-off
  (the SDK's own retries are off, so each one is counted);
- the exec's deadline (`ExecBudget.deadline`, time.monotonic): every attempt's timeout and
  every back-off is clipped to the time left, no attempt starts once it is spent, and a batch
  is cancelled when it runs out (RlmTimeout);
- the exec's end (`Broker.cancel(budget)`: the exec was cancelled, or its cell is over): its
  sub-calls in flight are cancelled and later ones refused (RlmCancelled). ADVRPC (session
  27): a cancelled exec's five calls ran on against the endpoint to the old exec's deadline,
  holding every in-flight slot, so the next exec's one call waited 30 s;
- a batch needing more uncached calls than are left is refused before any is sent;
- the slice size (RlmSliceTooLarge); a session ledger of calls, tokens and outcomes, and a
  cache keyed by sha256(provider, model, messages, parameters).

Threading: the broker owns its event loop (an anyio BlockingPortal on a private thread), so its
sync methods `call`/`batch`/`run` can be used from any thread: the sandbox's exec thread, an
anyio worker thread, or the CLI. The API key lives only in the provider object here; it is
never part of a prompt, a status, an error message or anything sent to the worker.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import math
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.from_thread

from .config import LlmSection
from .llm_provider import OFFLINE_REASON, ExtractiveProvider, OpenAIProvider, shown_endpoint
from .llm_types import (
    ExecBudget,
    LlmUnavailable,
    Provider,
    RlmBudgetExceeded,
    RlmCancelled,
    RlmDepthExceeded,
    RlmError,
    RlmSliceTooLarge,
    RlmTimeout,
    SubAnswer,
    SubRequest,
    TransientError,
    build_request,
)

__all__ = [
    "Broker",
    "ExecBudget",
    "LedgerEntry",
    "LlmUnavailable",
    "RlmBudgetExceeded",
    "RlmCancelled",
    "RlmDepthExceeded",
    "RlmError",
    "RlmSliceTooLarge",
    "RlmTimeout",
    "SubAnswer",
    "SubRequest",
    "build_request",
]

CACHE_MAX = 4096
LEDGER_MAX = 10_000
BACKOFF_CAP_S = 8.0

# True while this task is serving a sub-call; any call made in that context is refused.
_SERVING: contextvars.ContextVar[bool] = contextvars.ContextVar("rmh_llm_serving", default=False)
# How to stop the sub-calls of the request this code runs for, when it runs in a thread that
# a cancel of the request abandons (harness.binding, `stops_on_cancel`).
_STOPS: contextvars.ContextVar[list[Callable[[], None]] | None] = contextvars.ContextVar(
    "rmh_llm_request_stops", default=None)


@contextlib.contextmanager
def stops_on_cancel() -> Iterator[list[Callable[[], None]]]:
    """Collect, for code run in this context (and threads started from it), how to stop its
    sub-calls: a caller that gives up on it calls each."""
    stops: list[Callable[[], None]] = []
    token = _STOPS.set(stops)
    try:
        yield stops
    finally:
        _STOPS.reset(token)


def stop_with_request(budget: ExecBudget, broker: Broker) -> None:
    """Register `budget`'s sub-calls to stop when the request running this is cancelled."""
    stops = _STOPS.get()
    if stops is not None:
        stops.append(lambda: broker.cancel(budget))


@dataclass(frozen=True)
class LedgerEntry:
    """One attempt (or cache hit) in the session ledger."""

    exec_id: int
    key: str  # first 16 hex digits of the cache key
    outcome: str  # ok | cached | timeout | transient | unavailable
    prompt_tokens: int = 0
    completion_tokens: int = 0


class Broker:
    """Bounded sub-calls for one session. Use as a context manager, or call close()."""

    def __init__(self, provider: Provider, limits: LlmSection, *, reason: str = "") -> None:
        self.provider = provider
        self.limits = limits
        self.reason = reason
        self.ledger: deque[LedgerEntry] = deque(maxlen=LEDGER_MAX)
        self._cache: dict[str, SubAnswer] = {}
        self._lock = threading.Lock()
        self._execs = 0
        self._limiter: anyio.CapacityLimiter | None = None
        self._portal: anyio.from_thread.BlockingPortal | None = None
        self._thread: threading.Thread | None = None
        self._loop_thread = -1
        self._closed = False

    @classmethod
    def from_config(cls, section: LlmSection) -> Broker:
        """An OpenAI-compatible provider when a model is configured, else the extractive one."""
        if section.model:  # a base URL that cannot be one: status says why its calls fail
            return cls(p := OpenAIProvider(section), section, reason=p.problem)
        return cls(ExtractiveProvider(), section, reason=OFFLINE_REASON)

    # -- accounting -----------------------------------------------------------------------
    def new_budget(self) -> ExecBudget:
        """A fresh budget for one top-level exec."""
        with self._lock:
            self._execs += 1
            return ExecBudget(self.limits.calls_per_exec, self._execs, self.provider.name)

    def totals(self) -> dict[str, int]:
        """Session totals from the ledger."""
        with self._lock:
            entries = list(self.ledger)
        return {
            "execs": self._execs,
            "attempts": sum(e.outcome != "cached" for e in entries),
            "answered": sum(e.outcome == "ok" for e in entries),
            "cache_hits": sum(e.outcome == "cached" for e in entries),
            "prompt_tokens": sum(e.prompt_tokens for e in entries),
            "completion_tokens": sum(e.completion_tokens for e in entries),
        }

    def status(self) -> dict[str, Any]:
        """Which provider is active and why, the limits and the session totals (no key)."""
        lim = self.limits
        return {
            "provider": self.provider.name,
            "model": self.provider.model,
            "endpoint": shown_endpoint(getattr(self.provider, "endpoint", "")),
            "reason": self.reason,
            "limits": {
                "calls_per_exec": lim.calls_per_exec, "in_flight": lim.in_flight, "depth": 1,
                "timeout_s": lim.timeout_s, "max_retries": lim.max_retries,
                "slice_max_chars": lim.slice_max_chars, "max_tokens": lim.max_tokens,
            },
            "session": self.totals(),
        }

    def _record(self, entry: LedgerEntry) -> None:
        with self._lock:
            self.ledger.append(entry)

    # -- async core (runs on the broker's loop) --------------------------------------------
    async def arun(self, request: SubRequest, budget: ExecBudget) -> str:
        """Answer one request within the bounds; the text, or a typed RlmError."""
        if _SERVING.get():
            raise RlmDepthExceeded("sub-calls cannot make calls: rlm depth is 1")
        if len(request.slice_text) > self.limits.slice_max_chars:
            raise RlmSliceTooLarge(
                f"slice has {len(request.slice_text)} characters; the cap is "
                f"{self.limits.slice_max_chars} (pass a smaller slice)"
            )
        scope = anyio.CancelScope()
        if budget.watch(scope):
            try:
                with scope:
                    return await self._arun(request, budget)
            finally:
                budget.unwatch(scope)
        raise RlmCancelled("the exec is over (cancelled or ended): the sub-call was stopped")

    async def _arun(self, request: SubRequest, budget: ExecBudget) -> str:
        key = self._key(request)
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.limits.in_flight)
        async with self._limiter:
            cached = self._cache.get(key)
            if cached is not None:
                budget.add(cache_hits=1)
                self._record(LedgerEntry(budget.exec_id, key[:16], "cached"))
                return cached.text
            answer = await self._attempts(request, budget, key)
        self._cache[key] = answer
        if len(self._cache) > CACHE_MAX:
            self._cache.pop(next(iter(self._cache)))
        return answer.text

    async def _attempts(self, request: SubRequest, budget: ExecBudget, key: str) -> SubAnswer:
        """1 + max_retries attempts, each counted (one after the provider adapted to a refused
        parameter is no retry); back-off: Retry-After if longer, capped at BACKOFF_CAP_S."""
        last: RlmError | None = None
        retry, n, wait = 0, 0, None  # retries, attempts, seconds before the next (None: none)
        while retry <= self.limits.max_retries:
            if wait is not None:
                if wait >= budget.time_left():
                    break  # no time for another attempt: report the last failure
                budget.add(retries=1)
                await anyio.sleep(wait)
            timeout = min(self.limits.timeout_s, budget.time_left())
            if timeout <= 0:
                break
            try:
                budget.take()
            except RlmBudgetExceeded as exc:
                raise exc from last
            token, n = _SERVING.set(True), n + 1
            try:
                with anyio.fail_after(timeout):
                    answer = await self.provider.complete(request)
            except TimeoutError as exc:
                self._record(LedgerEntry(budget.exec_id, key[:16], "timeout"))
                last = RlmTimeout(
                    f"no answer within {timeout:g} s (attempt {n}"
                    f"{'' if timeout == self.limits.timeout_s else ', clipped to the deadline'})"
                )
                last.__cause__, retry = exc, retry + 1
                wait = min(BACKOFF_CAP_S, self.limits.retry_backoff_s * 2 ** (retry - 1))
                continue
            except TransientError as exc:
                self._record(LedgerEntry(budget.exec_id, key[:16], "transient"))
                last, retry = LlmUnavailable(f"{exc} (attempt {n})"), retry + (not exc.adapted)
                wait = None if exc.adapted else min(BACKOFF_CAP_S, max(
                    exc.retry_after, self.limits.retry_backoff_s * 2 ** (retry - 1)))
                continue
            except RlmError:
                self._record(LedgerEntry(budget.exec_id, key[:16], "unavailable"))
                raise
            finally:
                _SERVING.reset(token)
            budget.add(answer=answer)
            self._record(LedgerEntry(budget.exec_id, key[:16], "ok",
                                     answer.prompt_tokens, answer.completion_tokens))
            return answer
        if last is None:
            raise RlmTimeout("the exec's deadline is spent: no sub-call was sent")
        raise last

    async def abatch(self, requests: Sequence[SubRequest], budget: ExecBudget) -> list[str]:
        """Answers in input order, a pair given twice sent once (PLUG5: each copy was sent and
        answered apart); at most `in_flight` at once. The first failure (in input order) is
        raised after all finish; the answers that arrived are cached (a rerun costs only the
        failed calls)."""
        keys = [self._key(r) for r in requests]
        unique = dict(zip(keys, requests, strict=True))
        uncached = [k for k in unique if k not in self._cache]
        if len(uncached) > budget.remaining:
            raise RlmBudgetExceeded(
                f"the batch needs {len(uncached)} sub-calls; this exec has {budget.remaining} "
                f"of {budget.limit} left (nothing was sent)"
            )
        results: dict[str, str | Exception] = {}

        async def one(key: str, request: SubRequest) -> None:
            try:
                results[key] = await self.arun(request, budget)
            except Exception as exc:  # re-raised below, in input order
                results[key] = exc

        left = budget.time_left()
        with anyio.move_on_after(None if math.isinf(left) else left) as scope:
            async with anyio.create_task_group() as tg:
                for key, request in unique.items():
                    tg.start_soon(one, key, request)
        if scope.cancelled_caught:
            raise RlmTimeout("the exec's deadline passed during the batch; unsent calls dropped")
        out: list[str] = []
        for r in map(results.__getitem__, keys):
            if isinstance(r, Exception):
                raise r
            out.append(r)
        return out

    def _key(self, request: SubRequest) -> str:
        material = {
            "provider": self.provider.name,
            "model": self.provider.model,
            "messages": request.messages(),
            "max_tokens": self.limits.max_tokens,
            "temperature": self.limits.temperature,
            "max_words": request.max_words,
        }
        blob = json.dumps(material, sort_keys=True, ensure_ascii=False).encode("utf-8")
        return hashlib.sha256(blob).hexdigest()

    # -- sync facade (any thread except the broker's own loop) -----------------------------
    def _enter(self) -> anyio.from_thread.BlockingPortal:
        if _SERVING.get() or threading.get_ident() == self._loop_thread:
            raise RlmDepthExceeded("sub-calls cannot make calls: rlm depth is 1")
        with self._lock:
            if self._closed:
                raise LlmUnavailable("the broker is closed")
            if self._portal is None:
                self._portal, self._thread = _start_loop()
                self._loop_thread = self._portal.call(threading.get_ident)
            return self._portal

    def run(self, request: SubRequest, budget: ExecBudget) -> str:
        """Blocking `arun`."""
        return self._enter().call(self.arun, request, budget)

    def call(self, slice_text: str, question: str, budget: ExecBudget,
             max_words: int | None = None) -> str:
        """Blocking rlm_call on a rendered slice."""
        return self.run(build_request(slice_text, question, max_words), budget)

    def batch(
        self, pairs: Sequence[tuple[str, str]], budget: ExecBudget, max_words: int | None = None
    ) -> list[str]:
        """Blocking rlm_batch on rendered slices: answers in input order."""
        requests = [build_request(s, q, max_words) for s, q in pairs]
        return self._enter().call(self.abatch, requests, budget)

    def cancel(self, budget: ExecBudget) -> None:
        """The exec of `budget` is over: cancel its sub-calls in flight (each raises
        RlmCancelled to its caller, and frees its in-flight slot) and refuse later ones.
        From any thread; does not wait."""
        scopes = budget.stop()
        with self._lock:
            portal = self._portal
        if portal is None or not scopes:
            return

        async def stop_all() -> None:
            for scope in scopes:
                scope.cancel()

        with contextlib.suppress(RuntimeError):  # the broker's loop has stopped: none runs
            portal.start_task_soon(stop_all)

    def close(self) -> None:
        """Close the provider's connections and stop the broker's loop (idempotent)."""
        with self._lock:
            portal, thread, self._closed = self._portal, self._thread, True
            self._portal, self._thread = None, None
        if portal is not None and thread is not None:
            try:
                portal.call(self.provider.aclose)
            finally:
                portal.call(portal.stop, True)
                thread.join(timeout=10)

    def __enter__(self) -> Broker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _start_loop() -> tuple[anyio.from_thread.BlockingPortal, threading.Thread]:
    """The broker's event loop on a DAEMON thread (anyio's start_blocking_portal uses a
    non-daemon one, which would hang interpreter exit if a broker were never closed)."""
    ready = threading.Event()
    box: list[anyio.from_thread.BlockingPortal] = []

    async def main() -> None:
        async with anyio.from_thread.BlockingPortal() as portal:
            box.append(portal)
            ready.set()
            await portal.sleep_until_stopped()

    thread = threading.Thread(target=anyio.run, args=(main,), name="rmh-llm", daemon=True)
    thread.start()
    if not ready.wait(timeout=30) or not box:
        raise LlmUnavailable("the broker's event loop did not start")
    return box[0], thread
