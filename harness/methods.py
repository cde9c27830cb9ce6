"""The JSON-RPC method table: thin adapters over `VaultOps`, the sandbox and sessions.

One `Harness` per connection holds the open vault, the vault thread, the REPL (started on
first use) and the open session. `method_table(h)` maps method names to async functions whose
parameters are the JSON-RPC `params` by name (`query`, `k`, `note`, `content`, `code`, ...).
`map_exception` is the boundary mapping: a bad argument -> -32602 naming it; any typed domain
error that carries `code_name` and `data()` (every `VaultError`, sandbox and LLM errors) -> its
application code from `rpc.APPLICATION_CODES`, with its structured data; anything else is an
internal error whose text never leaves the process.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from collections.abc import Callable, Mapping
from importlib import metadata
from typing import Any, Protocol

import anyio

from rpc import AsyncMethod, RpcError, application_error, invalid_params
from sandbox import HostFunction, SandboxError, probe
from vault import Vault

from . import conversation_tools as conv
from .config import Config
from .rlm_tools import RlmTools
from .tools import BadArgument, VaultOps, VaultThread, build_functions, int_arg, vault_functions

log = logging.getLogger("rmh.methods")

MAX_CODE = 1_000_000  # characters of code in one exec


class Repl(Protocol):
    """What the harness needs of the sandbox (`sandbox.Sandbox` satisfies it)."""

    @property
    def tier(self) -> str: ...
    def exec(self, code: str, *, deadline_s: float | None = None) -> Any: ...
    def cancel(self) -> object: ...
    def reset(self) -> None: ...
    def close(self) -> None: ...


ReplFactory = Callable[[Mapping[str, HostFunction]], Repl]
FunctionParts = Callable[[VaultOps], Mapping[str, HostFunction]]


class SessionHooks(Protocol):
    """Session work done by learning; both run on the vault thread and return JSON-safe data."""

    def start(self, session: str) -> Mapping[str, Any]: ...
    def end(self, session: str) -> Mapping[str, Any]: ...


class NullHooks:
    """No learning: sessions only label usage."""

    def start(self, session: str) -> Mapping[str, Any]:
        return {}

    def end(self, session: str) -> Mapping[str, Any]:
        return {}


def version() -> str:
    try:
        return metadata.version("rmh")
    except metadata.PackageNotFoundError:
        return "0.1.0"


def to_json(value: Any) -> Any:
    """A sandbox/LLM result value as JSON (its `to_json()`, or its dataclass fields)."""
    if hasattr(value, "to_json"):
        return value.to_json()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value


def map_exception(exc: Exception) -> RpcError | None:
    """The boundary mapping of expected failures to JSON-RPC errors (None: internal error)."""
    if isinstance(exc, BadArgument):
        return invalid_params(exc.param, exc.reason)
    if isinstance(exc, SandboxError):
        return application_error("sandbox_error", {"reason": str(exc)[:300]})
    code_name = getattr(exc, "code_name", None)
    data_fn = getattr(exc, "data", None)
    if isinstance(code_name, str) and callable(data_fn):
        data = data_fn()
        return application_error(code_name, data if isinstance(data, Mapping) else None)
    return None


class Harness:
    """The state of one connection and the operations every surface calls."""

    def __init__(
        self,
        config: Config,
        vault: Vault,
        *,
        repl_factory: ReplFactory | None = None,
        hooks: SessionHooks | None = None,
        extra_functions: tuple[FunctionParts, ...] = (),
        rlm: RlmTools | None = None,
    ) -> None:
        self.config = config
        self.vault = vault
        self.thread = VaultThread()
        self.ops = VaultOps(vault, self.thread, lambda: self.session)
        self.hooks: SessionHooks = hooks if hooks is not None else NullHooks()
        self.session: str | None = None
        self._repl_factory = repl_factory
        self.rlm = rlm
        self._extra = (*extra_functions, rlm.functions) if rlm is not None else extra_functions
        self._repl: Repl | None = None
        self._repl_error: str | None = None
        self._exec_lock = anyio.Lock()
        self._closed = False

    # -- the REPL ------------------------------------------------------------------------

    def _ensure_repl(self) -> Repl:
        if self._repl is None:
            if self._repl_factory is None:
                raise application_error("sandbox_refused", {"reason": "no sandbox configured"})
            parts = [
                vault_functions(self.ops),
                conv.conversation_functions(self.ops),
                *(part(self.ops) for part in self._extra),
            ]
            self._repl = self._repl_factory(build_functions(*parts))
        return self._repl

    async def exec(self, code: Any, deadline_s: Any = None) -> Any:
        src = code if isinstance(code, str) else None
        if src is None:
            raise BadArgument("code", "must be a string")
        if len(src) > MAX_CODE:
            raise BadArgument("code", f"longer than {MAX_CODE} characters")
        limit = None if deadline_s is None else float(int_arg("deadline_s", deadline_s, 1, 3600))
        async with self._exec_lock:
            repl = await anyio.to_thread.run_sync(self._ensure_repl)
            rlm = self.rlm

            def run() -> tuple[Any, dict[str, Any] | None]:
                # The sub-LLM budget lives in this thread's context: one per top-level exec.
                budget = rlm.begin_exec() if rlm is not None else None
                result = repl.exec(src, deadline_s=limit)
                return result, budget.report() if budget is not None else None

            try:
                result, usage = await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
            except anyio.get_cancelled_exc_class():
                repl.cancel()  # kills the running code; the abandoned thread then returns
                raise
        out = to_json(result)
        if usage is not None and isinstance(out, dict):
            out["rlm"] = usage
        return out

    async def ask(self, question: Any, k: Any = 5) -> Any:
        """The recursive query loop (`vault.ask`)."""
        rlm = self.rlm
        if rlm is None:
            raise application_error("llm_error", {"reason": "no broker configured"})
        if not isinstance(question, str) or not question.strip() or len(question) > 10_000:
            raise BadArgument("question", "must be a non-empty string of at most 10000 characters")
        top = int_arg("k", k, 1, 20)
        return await anyio.to_thread.run_sync(lambda: rlm.ask(question, top, self.ops))

    async def reset(self) -> dict[str, Any]:
        async with self._exec_lock:
            if self._repl is not None:
                await anyio.to_thread.run_sync(self._repl.reset)
        return {"reset": True}

    # -- sessions ------------------------------------------------------------------------

    async def session_start(self, session: Any = None) -> dict[str, Any]:
        if session is not None:
            sid = text_or_bad("session", session)
        else:
            sid = "s-" + uuid.uuid4().hex[:16]
        out: dict[str, Any] = {}
        if self.session is not None:
            out["ended"] = await self.session_end()
        self.session = sid
        started = await self.thread.acall(self.hooks.start, sid)
        out.update({"session": sid, **dict(started)})
        return out

    async def session_end(self) -> dict[str, Any]:
        sid = self.session
        if sid is None:
            raise application_error("no_session", {"reason": "call session.start first"})
        self.session = None
        with anyio.CancelScope(shield=True):  # session-end work is never half done
            ended = await self.thread.acall(self.hooks.end, sid)
        log.info("session %s ended", sid)
        return {"session": sid, **dict(ended)}

    # -- status --------------------------------------------------------------------------

    def _index_stats(self) -> dict[str, Any]:
        self.vault.sync()
        corpus = self.vault.corpus()
        counts = dict(self.vault.index.counts())
        return {**counts, "edges": len(corpus.edges), "generation": corpus.generation}

    async def status(self) -> dict[str, Any]:
        stats = await self.thread.acall(self._index_stats)
        if self.rlm is not None:
            llm_status: dict[str, Any] = dict(self.rlm.broker.status())
        else:
            llm_status = {"provider": "none", "model": None}
        if self._repl is not None:
            tier: str | None = self._repl.tier
        else:  # the tier the REPL will get (probed once per process, about 0.1 s)
            tier = (await anyio.to_thread.run_sync(probe)).best
        return {
            "version": version(),
            "vault": str(self.vault.root),
            "isolation_tier": tier or "none (code execution refused)",
            "repl_started": self._repl is not None,
            "index": stats,
            "stages": self._stages(),
            "llm": llm_status,
            "session": self.session,
        }

    def _stages(self) -> dict[str, bool]:
        engine = self.vault.engine
        return {"dense": getattr(engine, "encoder", None) is not None,
                "rerank": getattr(engine, "reranker", None) is not None}

    # -- end -----------------------------------------------------------------------------

    async def shutdown(self) -> None:
        """Flush session-end work, stop the REPL, close the vault. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self.session is not None:
            try:
                await self.session_end()
            except Exception:
                log.exception("session end failed at shutdown")
        if self._repl is not None:
            repl, self._repl = self._repl, None
            await anyio.to_thread.run_sync(repl.close)
        await self.thread.acall(self.vault.close)
        self.thread.close()


def text_or_bad(param: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 200:
        raise BadArgument(param, "must be a non-empty string of at most 200 characters")
    return value


def method_table(h: Harness) -> dict[str, AsyncMethod]:
    """JSON-RPC method name -> async adapter. Parameter names are the protocol."""
    ops, run = h.ops, h.thread.acall

    async def search(query: Any, k: Any = 10) -> Any:
        return await run(ops.search, query, k)

    async def read(note: Any) -> Any:
        return await run(ops.read, note)

    async def write(note: Any, content: Any) -> Any:
        return await run(ops.write, note, content)

    async def move(note: Any, new: Any) -> Any:
        return await run(ops.move, note, new)

    async def delete(note: Any) -> Any:
        return await run(ops.delete, note)

    async def links(note: Any) -> Any:
        return await run(ops.links, note)

    async def backlinks(note: Any) -> Any:
        return await run(ops.backlinks, note)

    async def neighbors(note: Any, hops: Any = 1) -> Any:
        return await run(ops.neighbors, note, hops)

    async def exec_(code: Any, deadline_s: Any = None) -> Any:
        return await h.exec(code, deadline_s)

    async def session_start(session: Any = None) -> Any:
        return await h.session_start(session)

    async def ping(**_ignored: Any) -> dict[str, Any]:
        return {}

    async def ask(question: Any, k: Any = 5) -> Any:
        return await h.ask(question, k)

    async def context(query: Any, budget_words: Any = 600, conversation: Any = None,
                      date_from: Any = None, date_to: Any = None) -> Any:
        return await anyio.to_thread.run_sync(
            lambda: conv.context(ops, query, budget_words, conversation, date_from, date_to)
        )

    async def ingest(conversation: Any, format: Any = "auto") -> Any:
        return await anyio.to_thread.run_sync(lambda: conv.ingest(ops, conversation, format))

    return {
        "vault.search": search,
        "vault.read": read,
        "vault.write": write,
        "vault.move": move,
        "vault.delete": delete,
        "vault.links": links,
        "vault.backlinks": backlinks,
        "vault.neighbors": neighbors,
        "vault.ask": ask,
        "vault.context": context,
        "vault.ingest": ingest,
        "repl.exec": exec_,
        "repl.reset": h.reset,
        "session.start": session_start,
        "session.end": h.session_end,
        "status": h.status,
        "ping": ping,
    }
