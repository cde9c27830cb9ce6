"""MCP (Model Context Protocol) on the same pipe: initialize, tools/list, tools/call, ping,
resources (harness.mcp_resources), prompts (harness.mcp_prompts), server/discover.

The server answers the MCP lifecycle and tool methods next to its own JSON-RPC methods, so any
MCP client can use a vault with no glue. Version negotiation (MCP "Lifecycle"): if the client's
`protocolVersion` is one we speak we answer it, otherwise we answer our latest and the client
decides. The tools are derived from the operation table (harness.operations): one per
operation with an MCP name, its `inputSchema` generated from the parameter declarations and
its `annotations` from the effect flags; arguments are checked like the JSON-RPC params.
Tool failures (a note not found, bad arguments, user code that raised, even a bug) are results
with `isError: true` the model can read and act on, built by harness.errors.to_mcp; only an
unknown tool name is a protocol error (-32602), as the MCP specification asks.

The stateless revision (2026-07-28) is spoken on the same pipe, next to the handshake
versions: nothing here needs `initialize` first, so a client may start with `server/discover`
(supported versions, capabilities, identity, instructions) and send every request with
`_meta["io.modelcontextprotocol/protocolVersion"]`; a version we do not speak is -32602 with
the supported list, and every 2026-07-28 result carries `resultType: "complete"` (a list or
read result also its `cacheScope` and `ttlMs`; `versioned`). Learning sessions: a call with
no handle uses the connection's session (harness.methods); the stateless revision's explicit
handles (`session_start`, then `session=<handle>` on the learning tools, `session_end`) are
harness.mcp_sessions.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

from rpc import AsyncMethod, RpcError, invalid_params

from .errors import BadArgument, to_mcp, tool_result
from .mcp_prompts import prompt_methods
from .mcp_resources import one_page, resource_methods
from .mcp_sessions import HANDLED_TOOLS, call_session_tool, session_tools, with_handle
from .methods import Harness, version
from .operations import OPERATIONS, Operation
from .validate import Param, json_schema

PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")  # newest first
# The stateless revision (no initialize; version and capabilities in each request's _meta;
# `server/discover`). Spoken next to the versions above, on the same pipe.
STATELESS_VERSION = "2026-07-28"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
# Who answers, stamped in the `_meta` of the 2026-07-28 results (the revision: servers SHOULD
# include it on every response; the SDK client reads it from `server/discover`), but a
# `tools/call`'s: 62 characters on every search would spend the wire budget of a k = 5 result.
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

INSTRUCTIONS = """\
This server is your long-term memory: an Obsidian vault of markdown notes linked by [[wiki-links]].
- Before answering from memory, `search` it (hybrid keyword + meaning + link retrieval); then
  `read` the notes that look relevant. Follow `links`, `backlinks` and `neighbors` to gather
  context around a note.
- Each search hit has a short snippet of its best passage; `read` a note for all of it
  (explain=true adds each hit's score receipt).
- Save what is worth remembering with `write` (one idea per note, a clear title, and
  [[links]] to related notes so the graph can use them). Notes are addressed by vault path
  ("folder/Note.md") or by title. Change part of a note with `edit` (append, prepend, a
  heading's section, find-and-replace). To replace or edit a note a person may be editing,
  pass the `hash` that `read` returned as expected_hash: a changed file is then refused
  (edit_conflict) instead of overwritten; `write` of an existing note needs overwrite=true.
- For a question about past conversations, `context` gives a short, dated, speaker-labelled
  excerpt within a word budget; `ask` runs the recursive query loop and returns an answer with
  the notes it used.
- For multi-step work use `exec`: it runs Python in a sandboxed REPL whose globals include
  search, read, write, links, backlinks, neighbors, context, what_came_next, ask and
  rlm_call(slice, question) (a bounded sub-model call: 15 per exec); help(name) explains each;
  variables persist between calls. Print what you want to see.
"""


# Said once, in the instructions, when the vault is read only for this server (vault
# ReadOnlyVault): the tools still answer; writes are refused with kind read_only_vault.
READ_ONLY_INSTRUCTIONS = """\
- This vault is READ ONLY for this server (its .rmh folder is not writable by this user, or
  it is on a read-only mount): search, read, list, links and context answer from the index as
  it is, nothing is logged for learning, and write, edit, move and delete are refused
  (read_only_vault). Do not retry them.
"""


# The same, once per connection, as `notice` in the first result of a tool that would log for
# learning.
READ_ONLY_NOTICE = ("read-only vault: nothing is logged for learning; write, edit, move and "
                    "delete are refused (read_only_vault)")


def instructions(read_only: bool) -> str:
    """The server's instructions (READ_ONLY_INSTRUCTIONS added for a read-only vault)."""
    return INSTRUCTIONS + READ_ONLY_INSTRUCTIONS if read_only else INSTRUCTIONS


LEARNS = " Changes no note; logged for learning"
# A string bound this long is no hint an agent needs (the server still checks it and names
# it in the error): the MCP schema leaves it out.
SCHEMA_MAX_LENGTH = 1_000


def repl_globals() -> str:
    """The REPL's vault globals: the functions that are also tools, by name (same parameters
    as the tool), then the others one line each with signature and summary."""
    tools = [f"{op.repl}()" for op in OPERATIONS if op.repl is not None and op.mcp is not None]
    lines = [f"- {op.repl}({_args(op.params)}): {op.summary}"
             for op in OPERATIONS if op.repl is not None and op.mcp is None]
    head = (f"- {', '.join(tools)}: as the tools (list_notes is list); search() returns the "
            "hits")
    return "\n".join([head, *lines, "- help(): lists these; help(name): one in full"])


def _args(params: tuple[Param, ...]) -> str:
    out: list[str] = []
    for p in params:
        if p.keyword_only and "*" not in out:
            out.append("*")
        out.append(p.name if p.required else f"{p.name}={p.default!r}")
    return ", ".join(out)


def description(op: Operation) -> str:
    """The tool description: the summary, the learning side effect when it has one, and for
    exec the globals its code can call."""
    text = op.summary
    if op.learns:
        text += LEARNS + (" (learn=false: not)." if _has_learn(op) else ".")
    if op.name != "exec":
        return text
    return f"{text}\nGlobals:\n{repl_globals()}"


def _has_learn(op: Operation) -> bool:
    return any(p.name == "learn" for p in op.params)


def compact(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` without the string bounds no agent needs (SCHEMA_MAX_LENGTH and over)."""
    props = {}
    for name, prop in schema["properties"].items():
        if prop.get("maxLength", 0) >= SCHEMA_MAX_LENGTH:
            prop = {k: v for k, v in prop.items() if k != "maxLength"}
        props[name] = prop
    return {**schema, "properties": props}


def tool(op: Operation) -> dict[str, Any]:
    """The MCP tool description of an operation: title, input and output schemas, and its
    effect as all four annotation hints (MCP "ToolAnnotations")."""
    out: dict[str, Any] = {
        "name": op.mcp,
        "title": op.title or op.name,
        "description": description(op),
        "inputSchema": compact(json_schema(op.params)),
        "annotations": {"readOnlyHint": op.read_only,
                        "destructiveHint": op.destructive, "idempotentHint": op.idempotent,
                        "openWorldHint": op.open_world},
    }
    if op.output is not None:
        out["outputSchema"] = op.output
    return out


TOOLS: tuple[dict[str, Any], ...] = (
    *(with_handle(tool(op)) for op in OPERATIONS if op.mcp is not None), *session_tools())
SESSION_TOOLS = frozenset(t["name"] for t in session_tools())


def negotiate(protocol_version: Any) -> str:
    """The version we answer (MCP "Lifecycle"): the client's when we speak it, else our
    latest; a missing version is -32602."""
    if not isinstance(protocol_version, str):
        raise invalid_params("protocolVersion", "must be a string")
    return protocol_version if protocol_version in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]


CAPABILITIES: dict[str, Any] = {
    "tools": {"listChanged": False},
    "resources": {"subscribe": False, "listChanged": False},
    "prompts": {"listChanged": False},
}


def server_info() -> dict[str, Any]:
    return {"name": "rmh", "title": "rmh memory vault", "version": version()}


def meta_version(meta: Any) -> str | None:
    """The protocol version a request names in its `_meta` (the stateless revision), checked:
    one we do not speak is -32602 listing the ones we do; None when it names none."""
    if not isinstance(meta, dict) or META_VERSION not in meta:
        return None
    asked = meta[META_VERSION]
    if asked != STATELESS_VERSION and asked not in PROTOCOL_VERSIONS:
        raise RpcError(-32602, "Unsupported protocol version",
                       {"param": "_meta", "requested": str(asked)[:40],
                        "supported": [STATELESS_VERSION, *PROTOCOL_VERSIONS]})
    return str(asked)


# The 2026-07-28 results a client may cache: scope and time-to-live (ms). The tools and
# prompts are fixed for a server version; notes change at any time, so never reuse them.
CACHED = {"tools/list": ("public", 3_600_000), "prompts/list": ("public", 3_600_000),
          "resources/templates/list": ("public", 3_600_000), "server/discover": ("public", 0),
          "resources/list": ("private", 0), "resources/read": ("private", 0)}


def stamped(method: str, result: dict[str, Any]) -> dict[str, Any]:
    """`result` as the stateless revision asks: `resultType: "complete"`, the server's
    identity in `_meta` (kept with any `_meta` the result has; not on a tool call's result),
    and for a cacheable result its `cacheScope` and `ttlMs`."""
    result.setdefault("resultType", "complete")
    if method != "tools/call":
        meta = result.get("_meta")
        result["_meta"] = {**(meta if isinstance(meta, dict) else {}),
                           META_SERVER_INFO: {"name": "rmh", "version": version()}}
    if method in CACHED:
        scope, ttl = CACHED[method]
        result.setdefault("cacheScope", scope)
        result.setdefault("ttlMs", ttl)
    return result


def versioned(method: str, fn: AsyncMethod) -> AsyncMethod:
    """`fn` checking the version a request names in `_meta` (-32602 for one we do not
    speak) and stamping its result when that version is the stateless revision."""
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    async def call(*args: Any, **kwargs: Any) -> Any:
        try:
            meta = sig.bind_partial(*args, **kwargs).arguments.get("_meta")
        except TypeError:  # the dispatcher binds first and names the culprit
            meta = None
        modern = meta_version(meta) == STATELESS_VERSION or method == "server/discover"
        result = await fn(*args, **kwargs)
        return stamped(method, result) if modern and isinstance(result, dict) else result

    return call


def discover(read_only: bool = False) -> dict[str, Any]:
    """The `server/discover` result: versions, capabilities, identity, instructions."""
    return {"resultType": "complete",
            "supportedVersions": [STATELESS_VERSION, *PROTOCOL_VERSIONS],
            "capabilities": CAPABILITIES, "serverInfo": server_info(),
            "instructions": instructions(read_only)}


def tool_call_result(op: Operation, value: Any, notice: str | None = None) -> dict[str, Any]:
    """A successful call's MCP result: the operation's compact view of `value` (with `notice`
    added to an object result)."""
    failed = op.reports_failure and isinstance(value, dict) and bool(value.get("error"))
    viewed = op.mcp_view(value) if op.mcp_view is not None else value
    if notice is not None and isinstance(viewed, dict) and not failed:
        viewed = {**viewed, "notice": notice}
    return tool_result(viewed, is_error=failed)


def too_large(limit: int) -> dict[str, Any]:
    """The `tools/call` result answered when a tool's own is over the frame limit: a tool
    failure the model can read and act on (MCPRPC, session 28: a 6 MB note, written through
    `write`, read through `read` was a -32090 protocol error, which hosts do not show the
    model; the result carries the text twice, as JSON text and as structuredContent)."""
    return tool_result({"error": {
        "kind": "response_too_large", "code": -32090, "limit": limit,
        "message": f"the result is over {limit} bytes, the most one answer may hold; ask for "
                   "less, or take it in parts with exec (e.g. read(note)['text'][:100000])"}},
        is_error=True)


# Results `rpc.Dispatcher` answers instead of a `response_too_large` error, by method.
OVERSIZE = {"tools/call": too_large}


def mcp_methods(h: Harness) -> dict[str, AsyncMethod]:
    """The MCP methods to merge into the JSON-RPC method table."""
    calls = {b.op.mcp: b for b in h.bound() if b.op.mcp is not None}
    noticed: list[bool] = []  # READ_ONLY_NOTICE said on this connection

    async def initialize(
        protocolVersion: Any = None, capabilities: Any = None, clientInfo: Any = None,
        _meta: Any = None,
    ) -> dict[str, Any]:
        return {"protocolVersion": negotiate(protocolVersion), "capabilities": CAPABILITIES,
                "serverInfo": server_info(),
                "instructions": instructions(h.vault.read_only)}

    async def initialized(**_ignored: Any) -> None:
        return None

    async def tools_list(cursor: Any = None, _meta: Any = None) -> dict[str, Any]:
        one_page(cursor)
        return {"tools": [dict(t) for t in TOOLS]}

    async def server_discover(_meta: Any = None, **_ignored: Any) -> dict[str, Any]:
        return discover(h.vault.read_only)

    async def tools_call(name: Any, arguments: Any = None, _meta: Any = None) -> dict[str, Any]:
        if not isinstance(name, str) or (name not in calls and name not in SESSION_TOOLS):
            raise RpcError(-32602, f"Unknown tool: {str(name)[:100]}", {"param": "name"})
        try:
            if arguments is not None and not isinstance(arguments, dict):
                raise BadArgument("arguments", "must be an object")
            args = dict(arguments or {})
            if name in SESSION_TOOLS:
                return tool_result(await call_session_tool(h.handles, name, args))
            bound = calls[name]
            handle = args.pop("session", None) if name in HANDLED_TOOLS else None
            checked = bound.op.arguments((), args)
            if handle is None:
                value = await bound.acall(checked)
            else:
                with h.handles.using(handle):
                    value = await bound.acall(checked)
        except Exception as exc:
            return to_mcp(exc, name)
        notice = None
        if bound.op.learns and h.vault.read_only and not noticed:
            noticed.append(True)
            notice = READ_ONLY_NOTICE
        return tool_call_result(bound.op, value, notice)

    methods: dict[str, AsyncMethod] = {
        "server/discover": server_discover,
        "initialize": initialize,
        "notifications/initialized": initialized,
        "tools/list": tools_list,
        "tools/call": tools_call,
        **resource_methods(h),
        **prompt_methods(),
    }
    return {name: versioned(name, fn) for name, fn in methods.items()}
