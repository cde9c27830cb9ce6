"""Explicit session handles: MCP's stateless revision (2026-07-28, SEP-2567) on stdio.

The stateless revision has no protocol session; state that spans calls travels in a handle
the server mints and the client passes back as an ordinary tool argument. Here the state is
the learning session: the `session_start` tool mints a handle ("h-<hex>") and opens a
learning session under it (the same `SessionHooks.start` as `session.start`), a learning
tool called with `session=<handle>` records its usage in that session, and `session_end`
ends it (its evidence applies; `answer` counts the notes it used). Several handles may be
open on one connection at once, next to the connection's own session, which a call with no
handle keeps using exactly as before (the handshake versions and SDK clients of today).
A handle this connection did not mint, or one already ended, is `no_session`. Handles still
open when the connection ends are ended then (harness.methods.Harness.shutdown).

The handle reaches the vault thread in a context variable (`CALL_SESSION`), set around one
tool call; `Harness.use_session` returns it instead of the connection's session.
"""

from __future__ import annotations

import contextvars
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Protocol

import anyio

from .errors import BadArgument, Refused
from .vault_ops import VaultThread

CALL_SESSION: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "rmh_call_session", default=None)
MAX_HANDLE = 200
MAX_ANSWER = 200_000

# The tools whose usage a handle attributes (those that record usage for learning).
HANDLED_TOOLS = frozenset({"search", "read", "ask", "write", "edit"})

HANDLE_SCHEMA: dict[str, Any] = {
    "type": "string", "maxLength": MAX_HANDLE, "description": "session_start's handle"}


class Hooks(Protocol):
    def start(self, session: str) -> Mapping[str, Any]: ...
    def end(self, session: str, answer: str | None = None) -> Mapping[str, Any]: ...


class Handles:
    """The handles one connection minted and has not ended."""

    def __init__(self, thread: VaultThread, hooks: Hooks) -> None:
        self._thread = thread
        self._hooks = hooks
        self._open: set[str] = set()

    def __contains__(self, handle: object) -> bool:
        return handle in self._open

    async def start(self) -> dict[str, Any]:
        handle = "h-" + uuid.uuid4().hex
        started = await self._thread.acall(self._hooks.start, handle)
        self._open.add(handle)
        return {"session": handle, **dict(started)}

    async def end(self, handle: str, answer: str | None = None) -> dict[str, Any]:
        if handle not in self._open:
            raise Refused("no_session", "unknown or ended session handle; call session_start")
        self._open.discard(handle)
        with anyio.CancelScope(shield=True):  # session-end work is never half done
            ended = await self._thread.acall(self._hooks.end, handle, answer)
        return {"session": handle, **dict(ended)}

    async def close(self) -> list[str]:
        """End every open handle (connection end); the ones ended, sorted."""
        ended = sorted(self._open)
        for handle in ended:
            await self.end(handle)
        return ended

    @contextmanager
    def using(self, handle: Any) -> Iterator[None]:
        """Attribute the usage of the calls inside to `handle` (checked: open, a string)."""
        if not isinstance(handle, str):
            raise BadArgument("session", "must be a string")
        if handle not in self._open:
            raise Refused("no_session", "unknown or ended session handle; call session_start")
        token = CALL_SESSION.set(handle)
        try:
            yield
        finally:
            CALL_SESSION.reset(token)


def session_tools() -> tuple[dict[str, Any], ...]:
    """The MCP tools that mint and end handles."""
    return (
        {"name": "session_start", "title": "Start a session",
         "description": "Open a learning session; pass its handle as `session` to "
                        "search/read/ask/write/edit, then session_end.",
         "inputSchema": {"type": "object", "properties": {}},
         "outputSchema": {"type": "object", "properties": {"session": {"type": "string"}},
                          "required": ["session"]},
         "annotations": {"readOnlyHint": False, "destructiveHint": False,
                         "idempotentHint": False, "openWorldHint": False}},
        {"name": "session_end", "title": "End a session",
         "description": "End a session; learning runs. `answer`: your final answer (the "
                        "notes it uses count as used).",
         "inputSchema": {"type": "object", "required": ["session"], "properties": {
             "session": HANDLE_SCHEMA,
             "answer": {"type": "string"}}},
         "outputSchema": {"type": "object", "properties": {"session": {"type": "string"}},
                          "required": ["session"]},
         "annotations": {"readOnlyHint": False, "destructiveHint": False,
                         "idempotentHint": False, "openWorldHint": False}},
    )


def with_handle(tool: dict[str, Any]) -> dict[str, Any]:
    """`tool` with the optional `session` argument added when its usage can be attributed."""
    if tool["name"] not in HANDLED_TOOLS:
        return tool
    schema = dict(tool["inputSchema"])
    schema["properties"] = {**schema["properties"], "session": HANDLE_SCHEMA}
    return {**tool, "inputSchema": schema}


async def call_session_tool(handles: Handles, name: str, arguments: Mapping[str, Any]
                            ) -> dict[str, Any]:
    """Run `session_start` / `session_end` with checked arguments."""
    if name == "session_start":
        if arguments:
            raise BadArgument(sorted(arguments)[0], "unexpected argument")
        return await handles.start()
    extra = sorted(set(arguments) - {"session", "answer"})
    if extra:
        raise BadArgument(extra[0], "unexpected argument")
    if "session" not in arguments:
        raise BadArgument("session", "missing")
    handle, answer = arguments["session"], arguments.get("answer")
    if not isinstance(handle, str):
        raise BadArgument("session", "must be a string")
    if answer is not None and (not isinstance(answer, str) or len(answer) > MAX_ANSWER):
        raise BadArgument("answer", f"must be a string of at most {MAX_ANSWER} characters")
    return await handles.end(handle, answer)
