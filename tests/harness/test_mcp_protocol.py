"""MCP methods in-process over a real vault: negotiation, tool schemas, tool errors."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from harness.errors import map_exception
from harness.mcp import PROTOCOL_VERSIONS, TOOLS, mcp_methods
from harness.methods import Harness, method_table
from harness.tools import build_functions, vault_functions
from rpc import Dispatcher


def rpc(h: Harness, method: str, params: Any, rid: Any = 1) -> Any:
    d = Dispatcher({**method_table(h), **mcp_methods(h)}, map_exception=map_exception)
    frame = json.dumps({"jsonrpc": "2.0", "method": method, "params": params, "id": rid})
    out = anyio.run(d.dispatch, frame.encode())
    assert out is not None
    return json.loads(out)


@pytest.mark.parametrize("asked, answered", [
    ("2025-06-18", "2025-06-18"), ("2024-11-05", "2024-11-05"),
    ("1999-01-01", PROTOCOL_VERSIONS[0]),
])
def test_version_negotiation(harness: Harness, asked: str, answered: str) -> None:
    out = rpc(harness, "initialize", {"protocolVersion": asked, "capabilities": {},
                                      "clientInfo": {"name": "t", "version": "0"}})["result"]
    assert out["protocolVersion"] == answered
    assert out["serverInfo"]["name"] == "rmh" and "tools" in out["capabilities"]
    assert "search" in out["instructions"]


def test_initialize_without_version_names_the_parameter(harness: Harness) -> None:
    out = rpc(harness, "initialize", {"capabilities": {}})
    assert out["error"]["code"] == -32602 and out["error"]["data"]["param"] == "protocolVersion"


def test_tool_schemas_require_what_the_tools_need(harness: Harness) -> None:
    tools = {t["name"]: t for t in rpc(harness, "tools/list", {})["result"]["tools"]}
    assert tools.keys() == {t["name"] for t in TOOLS}
    assert tools["search"]["inputSchema"]["required"] == ["query"]
    assert tools["write"]["inputSchema"]["required"] == ["note", "content"]
    assert tools["exec"]["inputSchema"]["required"] == ["code"]


def test_unknown_tool_is_a_protocol_error(harness: Harness) -> None:
    out = rpc(harness, "tools/call", {"name": "format_disk", "arguments": {}})
    assert out["error"]["code"] == -32602


def test_tool_failures_are_results_with_is_error(harness: Harness) -> None:
    out = rpc(harness, "tools/call", {"name": "read", "arguments": {"note": "Gamma"}})["result"]
    assert out["isError"] is True and "note_not_found" in out["content"][0]["text"]
    out = rpc(harness, "tools/call", {"name": "read", "arguments": {"nope": 1}})["result"]
    assert out["isError"] is True and "nope" in out["content"][0]["text"]
    out = rpc(harness, "tools/call", {"name": "neighbors", "arguments": {"note": "Alpha",
                                                                         "hops": 99}})["result"]
    assert out["isError"] is True and "hops" in out["content"][0]["text"]


def test_tool_success_has_text_and_structured_content(harness: Harness) -> None:
    out = rpc(harness, "tools/call", {"name": "backlinks", "arguments": {"note": "Beta"}})
    result = out["result"]
    assert "isError" not in result  # absent means false
    assert json.loads(result["content"][0]["text"]) == {"items": ["Alpha.md"]}  # MCP6
    assert result["structuredContent"] == {"items": ["Alpha.md"]}


def test_repl_functions_have_docs_and_unique_names(harness: Harness) -> None:
    table = vault_functions(harness.ops)
    assert set(table) == {"search", "read", "write", "edit", "links", "backlinks", "neighbors",
                          "list_notes", "correct", "why"}
    for name, fn in table.items():
        shown = f"{name}{fn.signature}\n\n{fn.doc}"  # what help(name) shows in the worker
        assert shown.startswith(name + "(") and fn.signature.startswith("(")
        assert fn.doc and name + "(" not in fn.doc.splitlines()[0]
    with pytest.raises(ValueError, match="defined twice"):
        build_functions(table, {"search": table["search"]})


def test_session_lifecycle_and_status(harness: Harness) -> None:
    assert rpc(harness, "session.end", {})["error"]["code"] == -32041
    started = rpc(harness, "session.start", {"session": "abc"})["result"]
    assert started == {"session": "abc"}
    again = rpc(harness, "session.start", {})["result"]
    assert again["ended"]["session"] == "abc" and again["session"] != "abc"
    status = rpc(harness, "status", {})["result"]
    assert status["index"]["notes"] == 2 and status["session"] == again["session"]
    assert "api_key" not in json.dumps(status)


def test_context_and_ask_tools(harness: Harness) -> None:
    # Without a broker the ask tool is a tool failure the model can read, not a protocol error.
    out = rpc(harness, "tools/call", {"name": "ask", "arguments": {"question": "Beta?"}})
    assert out["result"]["isError"] is True
    ctx = rpc(harness, "tools/call", {"name": "context",
                                      "arguments": {"query": "Beta", "budget_words": 50}})
    assert not ctx["result"].get("isError")
    assert ctx["result"]["structuredContent"]["budget_words"] == 50
    bad = rpc(harness, "tools/call", {"name": "context",
                                      "arguments": {"query": "Beta", "budget_words": 0}})
    assert bad["result"]["isError"] is True
    assert "budget_words" in bad["result"]["content"][0]["text"]
