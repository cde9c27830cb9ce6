"""What the operations of the table run against, and an operation bound to it.

`Targets` gives each part of the table (harness.operations) its target: the "vault" part runs on
the connection's `VaultCalls`, "conversation" on `ConversationCalls`, "llm" on `LlmCalls`; the
"control" part runs on the connection itself (harness.methods.Harness). `BoundOperation` is an
operation with its implementing method (`getattr(target, op.run)`) looked up once, called
with checked arguments by name from the event loop (`acall`, where `op.runs` says) or from a
REPL thread (`call`).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from vault import cancellable

from .conversation_tools import ConversationCalls
from .errors import Refused
from .operations import Operation, Part
from .vault_ops import VaultCalls, VaultThread


class LlmTools(Protocol):
    """What the llm part calls (harness.rlm_tools.RlmTools is the implementation)."""

    def ask(self, question: str, budget: int, library: VaultCalls) -> dict[str, Any]: ...
    def rlm_call(self, slice: Any, question: str, max_words: int | None,
                 library: VaultCalls) -> str: ...
    def rlm_batch(self, pairs: Any, max_words: int | None, library: VaultCalls) -> list[str]: ...
    def usage(self) -> dict[str, Any]: ...


class LlmCalls:
    """The llm part's target: the LLM tools over the connection's vault operations, refused
    ("llm_error") when no broker is configured."""

    def __init__(self, rlm: LlmTools | None, ops: VaultCalls) -> None:
        self._rlm = rlm
        self.ops = ops

    def _tools(self) -> LlmTools:
        if self._rlm is None:
            raise Refused("llm_error", "no broker configured")
        return self._rlm

    def ask(self, question: str, budget: int, k: int | None) -> dict[str, Any]:
        return self._tools().ask(question, budget if k is None else k, self.ops)

    def rlm_call(self, slice: Any, question: str, max_words: int | None) -> str:
        return self._tools().rlm_call(slice, question, max_words, self.ops)

    def rlm_batch(self, pairs: Any, max_words: int | None) -> list[str]:
        return self._tools().rlm_batch(pairs, max_words, self.ops)

    def rlm_usage(self) -> dict[str, Any]:
        return self._tools().usage()


@dataclass(frozen=True)
class Targets:
    """What the vault, conversation and llm parts run against: the connection's vault
    operations and, when a broker is configured, its LLM tools."""

    ops: VaultCalls
    rlm: LlmTools | None = None

    def target(self, part: Part) -> object:
        """The object whose methods implement the operations of `part` (not "control")."""
        if part == "vault":
            return self.ops
        if part == "conversation":
            return ConversationCalls(self.ops)
        if part == "llm":
            return LlmCalls(self.rlm, self.ops)
        raise ValueError(f"the {part} part runs against the connection, not Targets")


@dataclass(frozen=True)
class BoundOperation:
    """An operation with its implementing method, callable from the event loop or from a REPL
    thread with checked arguments (by name)."""

    op: Operation
    method: Callable[..., Any]
    thread: VaultThread

    @classmethod
    def of(cls, op: Operation, target: object, thread: VaultThread) -> BoundOperation:
        """`op` bound to `target`'s method named `op.run`."""
        return cls(op, getattr(target, op.run), thread)

    async def acall(self, arguments: Mapping[str, Any]) -> Any:
        """Run from the event loop, where `op.runs` says.

        A vault job, once queued, runs whatever happens to its caller (`VaultThread.acall`):
        so the caller of one that changes the vault waits for it, shielded from a cancel, and
        its request is answered with what it did (an `Operation.stops` change stops at its next
        checkpoint and says what landed: `_stopping`) (ADVRPC: an edit cancelled by
        `$/cancelRequest` while queued behind another call was answered -32800 "Request
        cancelled" and landed anyway: a client that retried appended twice). A cancel that
        comes before the job is queued still stops it."""
        if self.op.runs == "loop":
            return await self.method(**arguments)
        job = functools.partial(self.method, **arguments)
        import anyio.to_thread  # (not at import: a CLI command never calls from a loop)

        from .llm import stops_on_cancel  # (anyio and the broker: the same)

        if self.op.runs == "vault" and self.op.stops:
            return await self._stopping(job)
        if self.op.runs == "vault":
            with anyio.CancelScope(shield=not self.op.read_only):
                return await self.thread.acall(job)
        # A cancel (or the shutdown) answers at once and stops the job's sub-LLM calls, so
        # the thread left behind ends soon (ADVRPC, session 27: a cancelled `ask` waiting on
        # a slow endpoint was answered 181 s later, with its result; SIGTERM took as long)
        with stops_on_cancel() as stops:
            try:
                return await anyio.to_thread.run_sync(job, abandon_on_cancel=True)
            except anyio.get_cancelled_exc_class():
                for stop in stops:
                    stop()
                raise

    async def _stopping(self, job: Callable[[], Any]) -> Any:
        """Run a change that stops between the parts that land whole (`Operation.stops`: an
        ingest, between notes): its stop test (`vault.cancellable`) turns true when its caller
        is cancelled (a cancel, the shutdown), and the caller then waits, shielded, for it to
        reach its next checkpoint and answer what landed (`vault.IngestStopped`) or, done
        before it, its result. A long ingest held SIGTERM for its whole length (PROTO5: 95 s
        for 3,000 lines, ~7 min for 20,000)."""
        import asyncio  # (not at import: a CLI command never calls from a loop)

        import anyio

        stop = threading.Event()

        def stoppable() -> Any:
            with cancellable(stop.is_set):
                return job()

        waited = asyncio.wrap_future(self.thread.submit(stoppable))
        try:
            return await asyncio.shield(waited)
        except anyio.get_cancelled_exc_class():
            stop.set()
            with anyio.CancelScope(shield=True):
                return await waited

    def call(self, arguments: Mapping[str, Any]) -> Any:
        """Run in the calling thread (a REPL call; never for a "loop" operation)."""
        return self.method(**arguments)
