"""MCP (Model Context Protocol) on the same pipe: initialize, tools/list, tools/call, ping.

The server answers the MCP lifecycle and tool methods next to its own JSON-RPC methods, so any
MCP client can use a vault with no glue. Version negotiation (MCP "Lifecycle"): if the client's
`protocolVersion` is one we speak we answer it, otherwise we answer our latest and the client
decides. Tool failures (a note not found, bad arguments, user code that raised) are results
with `isError: true` the model can read and act on; only an unknown tool name is a protocol
error (-32602), as the MCP specification asks.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio

from rpc import AsyncMethod, RpcError, invalid_params

from . import conversation_tools as conv
from .methods import Harness, map_exception, version
from .tools import MAX_HOPS, MAX_K, BadArgument

PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")  # newest first

INSTRUCTIONS = """\
This server is your long-term memory: an Obsidian vault of markdown notes linked by [[wiki-links]].
- Before answering from memory, `search` it (hybrid keyword + meaning + link retrieval); then
  `read` the notes that look relevant. Follow `links`, `backlinks` and `neighbors` to gather
  context around a note.
- Save what is worth remembering with `write` (one idea per note, a clear title, and
  [[links]] to related notes so the graph can use them). Notes are addressed by vault path
  ("folder/Note.md") or by title.
- For a question about past conversations, `context` gives a short, dated, speaker-labelled
  excerpt within a word budget; `ask` runs the recursive query loop and returns an answer with
  the notes it used.
- For multi-step work use `exec`: it runs Python in a sandboxed REPL whose globals include
  search, read, write, links, backlinks, neighbors, context, what_came_next, ask and
  rlm_call(slice, question) (a bounded sub-model call: 15 per exec); help(name) explains each;
  variables persist between calls. Print what you want to see.
"""

_NOTE = {"type": "string", "description": "vault-relative path ('folder/Note.md') or a title"}


def _schema(props: Mapping[str, Any], required: tuple[str, ...]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": dict(props),
        "required": list(required),
        "additionalProperties": False,
    }


TOOLS: tuple[dict[str, Any], ...] = (
    {"name": "search", "description": "Search the vault; hits best first with their paths.",
     "inputSchema": _schema({"query": {"type": "string", "description": "what to look for"},
                             "k": {"type": "integer", "minimum": 1, "maximum": MAX_K,
                                   "default": 10}}, ("query",))},
    {"name": "read", "description": "Read one note: text, frontmatter, tags and links.",
     "inputSchema": _schema({"note": _NOTE}, ("note",))},
    {"name": "write", "description": "Create or replace a note with the given markdown.",
     "inputSchema": _schema({"note": _NOTE, "content": {"type": "string"}}, ("note", "content"))},
    {"name": "move", "description": "Rename/move a note; links to it are rewritten.",
     "inputSchema": _schema({"note": _NOTE, "new": {"type": "string"}}, ("note", "new"))},
    {"name": "delete", "description": "Move a note to the vault's trash (recoverable).",
     "inputSchema": _schema({"note": _NOTE}, ("note",))},
    {"name": "links", "description": "Outgoing links of a note and where they resolve.",
     "inputSchema": _schema({"note": _NOTE}, ("note",))},
    {"name": "backlinks", "description": "Notes that link to a note.",
     "inputSchema": _schema({"note": _NOTE}, ("note",))},
    {"name": "neighbors", "description": "Notes within a few links of a note, nearest first.",
     "inputSchema": _schema({"note": _NOTE, "hops": {"type": "integer", "minimum": 1,
                                                     "maximum": MAX_HOPS, "default": 1}},
                            ("note",))},
    {"name": "context", "description": "Budgeted, dated, speaker-labelled context from "
     "conversation notes for a question (no LLM).",
     "inputSchema": _schema({"query": {"type": "string"},
                             "budget_words": {"type": "integer", "minimum": 1, "default": 600},
                             "date_from": {"type": "string", "description": "ISO date"},
                             "date_to": {"type": "string", "description": "ISO date"}},
                            ("query",))},
    {"name": "ask", "description": "Answer a question with the recursive query loop: retrieve, "
     "follow links, ask sub-questions; returns the answer, the notes used and the trace.",
     "inputSchema": _schema({"question": {"type": "string"},
                             "k": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5}},
                            ("question",))},
    {"name": "exec", "description": "Run Python in the sandboxed REPL (vault functions are "
     "globals; state persists). Returns output, the last value and any error.",
     "inputSchema": _schema({"code": {"type": "string"}}, ("code",))},
)


def _result(value: Any, *, is_error: bool = False) -> dict[str, Any]:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=1)
    out: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": is_error}
    if isinstance(value, dict) and not is_error:
        out["structuredContent"] = value
    elif isinstance(value, list) and not is_error:
        out["structuredContent"] = {"items": value}
    return out


def mcp_methods(h: Harness) -> dict[str, AsyncMethod]:
    """The MCP methods to merge into the JSON-RPC method table."""
    ops, run = h.ops, h.thread.acall
    calls: dict[str, Callable[[dict[str, Any]], Awaitable[Any]]] = {
        "search": lambda a: run(ops.search, a.get("query"), a.get("k", 10)),
        "read": lambda a: run(ops.read, a.get("note")),
        "write": lambda a: run(ops.write, a.get("note"), a.get("content")),
        "move": lambda a: run(ops.move, a.get("note"), a.get("new")),
        "delete": lambda a: run(ops.delete, a.get("note")),
        "links": lambda a: run(ops.links, a.get("note")),
        "backlinks": lambda a: run(ops.backlinks, a.get("note")),
        "neighbors": lambda a: run(ops.neighbors, a.get("note"),
                                                        a.get("hops", 1)),
        "context": lambda a: anyio.to_thread.run_sync(
            lambda: conv.context(ops, a.get("query"), a.get("budget_words", 600), None,
                                 a.get("date_from"), a.get("date_to"))),
        "ask": lambda a: h.ask(a.get("question"), a.get("k", 5)),
        "exec": lambda a: h.exec(a.get("code")),
    }
    schemas = {t["name"]: t["inputSchema"] for t in TOOLS}

    async def initialize(
        protocolVersion: Any = None, capabilities: Any = None, clientInfo: Any = None,
        _meta: Any = None,
    ) -> dict[str, Any]:
        if not isinstance(protocolVersion, str):
            raise invalid_params("protocolVersion", "must be a string")
        chosen = protocolVersion if protocolVersion in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]
        return {
            "protocolVersion": chosen,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "rmh", "title": "rmh memory vault", "version": version()},
            "instructions": INSTRUCTIONS,
        }

    async def initialized(**_ignored: Any) -> None:
        return None

    async def tools_list(cursor: Any = None, _meta: Any = None) -> dict[str, Any]:
        return {"tools": [dict(t) for t in TOOLS]}

    async def tools_call(name: Any, arguments: Any = None, _meta: Any = None) -> dict[str, Any]:
        if not isinstance(name, str) or name not in calls:
            raise RpcError(-32602, f"Unknown tool: {str(name)[:100]}", {"param": "name"})
        args = {} if arguments is None else arguments
        if not isinstance(args, dict):
            return _result("arguments must be an object", is_error=True)
        unknown = sorted(set(args) - set(schemas[name]["properties"]))
        if unknown:
            return _result(f"unknown argument(s): {', '.join(unknown)}", is_error=True)
        try:
            value = await calls[name](args)
        except BadArgument as exc:
            return _result(f"bad argument {exc.param}: {exc.reason}", is_error=True)
        except RpcError as exc:
            return _result(exc.to_json(), is_error=True)
        except Exception as exc:
            mapped = map_exception(exc)
            if mapped is None:
                raise
            return _result(mapped.to_json(), is_error=True)
        failed = name == "exec" and isinstance(value, dict) and bool(value.get("error"))
        return _result(value, is_error=failed)

    return {
        "initialize": initialize,
        "notifications/initialized": initialized,
        "tools/list": tools_list,
        "tools/call": tools_call,
    }
