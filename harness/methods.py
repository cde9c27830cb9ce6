"""The connection (`Harness`) and the JSON-RPC methods derived from the operation table.

One `Harness` per connection holds the open vault, the vault thread, the REPL (started on
first use) and the open session. Every connection is a session (issue 13): unless the client
opened one with `session.start`, the first operation that records usage (a learning search,
a read, a write, on any surface: JSON-RPC, MCP tools, REPL host functions) opens an implicit
one, "c-<hex>"; it ends at `session.end`, end of input, SIGTERM or MCP shutdown (the server's
`on_shutdown` runs `shutdown`), and the next recording operation opens a new one. The
Harness is the context of the table's "control" operations (exec, reset, sessions, status).
`method_table(h)` has one method per operation with a JSON-RPC name (harness.operations),
taking the operation's parameters by name or position (bound by the dispatcher to the
signature the parameters generate) and checking them (harness.validate),
plus `ping`. Exceptions are mapped to JSON-RPC errors by harness.errors.map_exception, the
dispatcher's hook (re-exported here for the wiring).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import uuid
from collections.abc import Callable, Mapping
from importlib import metadata
from typing import Any, Protocol

import anyio

from rpc import AsyncMethod
from sandbox import CancelToken, HostFunction, probe
from vault import LEDGER_FILE, DiskFull, Vault, is_disk_full

from .binding import BoundOperation, Targets
from .config import Config
from .errors import Refused
from .errors import map_exception as map_exception
from .extraction import configured
from .llm import ExecBudget
from .mcp_sessions import CALL_SESSION, Handles
from .operations import OPERATIONS
from .rlm_tools import RlmTools
from .tools import build_functions, conversation_functions, vault_functions
from .validate import signature
from .vault_ops import VaultCalls, VaultThread

log = logging.getLogger("rmh.methods")


class Repl(Protocol):
    """What the harness needs of the sandbox (`sandbox.Sandbox` satisfies it)."""

    @property
    def tier(self) -> str: ...
    def exec(self, code: str, *, deadline_s: float | None = None,
             cancel: CancelToken | None = None) -> Any: ...
    def reset(self) -> None: ...
    def close(self) -> None: ...


ReplFactory = Callable[[Mapping[str, HostFunction]], Repl]
FunctionParts = Callable[[VaultCalls], Mapping[str, HostFunction]]


class SessionHooks(Protocol):
    """Session work done by learning; both run on the vault thread and return JSON-safe data."""

    def start(self, session: str) -> Mapping[str, Any]: ...
    def end(self, session: str, answer: str | None = None) -> Mapping[str, Any]: ...


class NullHooks:
    """No learning: sessions only label usage."""

    def start(self, session: str) -> Mapping[str, Any]:
        return {}

    def end(self, session: str, answer: str | None = None) -> Mapping[str, Any]:
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


class Harness:
    """The state of one connection; the context of the table's control operations."""

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
        self.ops = VaultCalls(vault, self.thread, self.use_session,
                              configured(config, vault.root))
        self.env = Targets(self.ops, rlm)
        self.hooks: SessionHooks = hooks if hooks is not None else NullHooks()
        self.session: str | None = None
        self.implicit = False  # the open session was opened by use, not by session.start
        self.handles = Handles(self.thread, self.hooks)  # explicit handles (harness.mcp_sessions)
        self._repl_factory = repl_factory
        self.rlm = rlm
        self._extra = (*extra_functions, rlm.functions) if rlm is not None else extra_functions
        self._repl: Repl | None = None
        self._repl_error: str | None = None
        self._exec_lock = anyio.Lock()
        # a cell whose request was cancelled may lose the namespace (its worker is killed) in a
        # result nobody reads: the next exec's result says state_lost instead
        self._cell_lock = threading.Lock()
        self._lost_unreported = False
        self._closed = False

    # -- the REPL ------------------------------------------------------------------------

    def _ensure_repl(self) -> Repl:
        if self._repl is None:
            if self._repl_factory is None:
                raise Refused("sandbox_refused", "no sandbox configured")
            parts = [
                vault_functions(self.ops),
                conversation_functions(self.ops),
                *(part(self.ops) for part in self._extra),
            ]
            self._repl = self._repl_factory(build_functions(*parts))
        return self._repl

    def bound(self) -> list[BoundOperation]:
        """Every operation of the table with its context on this connection."""
        return [BoundOperation.of(op, self if op.part == "control" else self.env.target(op.part),
                         self.thread) for op in OPERATIONS]

    async def exec(self, code: str, deadline_s: int | None = None) -> Any:
        """Run a cell (`repl.exec`); arguments checked by the operation table.

        A cancel of this request (`$/cancelRequest`) cancels this cell through its own token,
        whenever it comes: while the cell waits for the REPL, before it starts (it then never
        runs), or while it runs (its worker is killed, even during a host call). The request
        is answered at once; the thread left behind returns as soon as the sandbox has
        stopped the cell, and the next exec's result says `state_lost` if it lost the
        namespace (ADVRPC: it was said only in the cancelled cell's result, which no client
        reads, so the next cell found its variables gone with `state_lost` false). The cell's
        sub-LLM calls still in flight are stopped with it (harness/llm.py `Broker.cancel`)."""
        limit = None if deadline_s is None else float(deadline_s)
        token = CancelToken()
        budgets: list[ExecBudget] = []  # the cell's sub-LLM budget, once its thread made it
        try:
            return await self._exec(code, limit, token, budgets)
        except anyio.get_cancelled_exc_class():
            token.cancel()  # before or during the run: never lost (sandbox/cancel.py)
            self._stop_calls(budgets)
            raise

    def _stop_calls(self, budgets: list[ExecBudget]) -> None:
        if self.rlm is not None:
            for budget in budgets:
                self.rlm.broker.cancel(budget)

    async def _exec(self, code: str, limit: float | None, token: CancelToken,
                    budgets: list[ExecBudget]) -> Any:
        async with self._exec_lock:
            repl = await anyio.to_thread.run_sync(self._ensure_repl)
            rlm = self.rlm

            def run() -> tuple[Any, dict[str, Any] | None]:
                # The sub-LLM budget lives in this thread's context: one per top-level exec.
                budget = rlm.begin_exec() if rlm is not None else None
                if budget is not None:
                    budgets.append(budget)
                with self._cell_lock:  # a cell abandoned by a cancel records its loss first
                    try:
                        result = repl.exec(code, deadline_s=limit, cancel=token)
                    finally:  # the cell is over (even killed in a host call): so are its calls
                        self._stop_calls(budgets)
                    self._lost_unreported |= bool(getattr(result, "state_lost", False))
                return result, budget.report() if budget is not None else None

            result, usage = await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
            with self._cell_lock:  # this result is read: it reports every loss so far
                lost, self._lost_unreported = self._lost_unreported, False
        out = to_json(result)
        if lost and isinstance(out, dict):
            out["state_lost"] = True
        if usage is not None and isinstance(out, dict):
            out["rlm"] = usage
        return out

    async def reset(self) -> dict[str, Any]:
        async with self._exec_lock:
            repl = self._repl

            def clear() -> None:
                with self._cell_lock:  # an empty namespace is what a reset asks for
                    if repl is not None:
                        repl.reset()
                    self._lost_unreported = False

            await anyio.to_thread.run_sync(clear)
        return {"reset": True}

    # -- sessions ------------------------------------------------------------------------

    def use_session(self) -> str | None:
        """The open session for a recording operation, opening the connection's implicit
        session first when there is none (any thread: it runs on the vault thread, where
        every vault call is serialised, so two callers never open two sessions). Inside a
        call that carries an explicit handle (harness.mcp_sessions) it is that handle."""
        handle = CALL_SESSION.get()
        if handle is not None:
            return handle
        return self.thread.call(self._use_session)

    def _use_session(self) -> str | None:
        if self.session is None and not self._closed:
            sid = "c-" + uuid.uuid4().hex[:16]
            self.hooks.start(sid)
            self.session, self.implicit = sid, True
            log.info("implicit session %s started", sid)
        return self.session

    async def session_start(self, session: str | None = None) -> dict[str, Any]:
        sid = session if session is not None else "s-" + uuid.uuid4().hex[:16]
        out: dict[str, Any] = {}
        if self.session is not None:
            out["ended"] = await self.session_end()
        # the session is this connection's before the start runs (a session.end or search sent
        # right after it, answered meanwhile, finds it; their vault work queues behind the
        # start on the vault thread); a refused start leaves no session open
        self.session, self.implicit = sid, False
        try:
            started = await self.thread.acall(self.hooks.start, sid)
        except BaseException:
            if self.session == sid:
                self.session = None
            raise
        out.update({"session": sid, **dict(started)})
        return out

    async def session_end(self, answer: str | None = None, session: str | None = None
                          ) -> dict[str, Any]:
        """End this connection's session; `session`, where given, must name it (a client
        passes back the id it started: refused before as an unexpected parameter, NEWUSER9),
        else no_session and the session stays open."""
        sid = self.session
        if sid is None:
            raise Refused("no_session", "call session.start first")
        if session is not None and session != sid:
            raise Refused("no_session", f"session {session!r} is not open here: session.end "
                          f"ends this connection's session, {sid!r}")
        self.session = None
        with anyio.CancelScope(shield=True):  # session-end work is never half done
            ended = await self.thread.acall(self.hooks.end, sid, answer)
        log.info("session %s ended", sid)
        return {"session": sid, **dict(ended)}

    # -- status --------------------------------------------------------------------------

    def _index_stats(self) -> dict[str, Any]:
        self.vault.sync(postpone_full=True)  # on a full disk: the index as it is
        corpus = self.vault.corpus()
        counts = dict(self.vault.counts())
        return {**counts, "edges": len(corpus.edges), "generation": corpus.generation,
                "calibration": self.vault.calibration(),
                "dense": self.vault.dense_health()}  # the index held: never built here

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
            "changes": self.vault.change_detection(),
            "read_only": self.vault.read_only,
            "stages": self._stages(),
            "llm": llm_status,
            "session": self.session,
            "session_implicit": self.implicit if self.session is not None else None,
        }

    def _stages(self) -> dict[str, bool]:
        return {"dense": self.vault.dense, "rerank": self.vault.reranks}

    # -- end -----------------------------------------------------------------------------

    async def shutdown(self) -> None:
        """Flush session-end work, stop the REPL, close the vault. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self.session is not None:
            try:
                await self.session_end()
            except Exception as exc:
                if not is_disk_full(exc):
                    log.exception("session end failed at shutdown")
                else:  # its events are logged; the rewards apply at the next recovery
                    log.warning("session end postponed at shutdown: %s", DiskFull(LEDGER_FILE))
        try:
            await self.handles.close()
        except Exception:
            log.exception("ending the open session handles failed at shutdown")
        if self._repl is not None:
            repl, self._repl = self._repl, None
            await anyio.to_thread.run_sync(repl.close)
        await self.thread.acall(self.vault.close)
        self.thread.close()


def rpc_method(bound: BoundOperation) -> AsyncMethod:
    """One operation as a JSON-RPC method: params by name or position, bound once by the
    dispatcher to the generated signature, then checked (`Operation.checked`) and run."""
    op = bound.op

    async def method(*args: Any, **kwargs: Any) -> Any:
        return await bound.acall(op.checked(args, kwargs))

    method.__name__ = method.__qualname__ = op.name
    method.__signature__ = signature(op.params)  # type: ignore[attr-defined]
    return method


async def ping(**_ignored: Any) -> dict[str, Any]:
    """Liveness (JSON-RPC and MCP): protocol, not an operation; any params are ignored."""
    return {}


def method_table(h: Harness) -> dict[str, AsyncMethod]:
    """JSON-RPC method name -> async method, for every operation with a JSON-RPC name."""
    table = {b.op.rpc: rpc_method(b) for b in h.bound() if b.op.rpc is not None}
    return {**table, "ping": ping}
