"""One MCP `tools/call` through the harness's own dispatcher, in process (no server): for
tests that drive a tool page by page between changes to the vault."""

from __future__ import annotations

import json
from typing import Any

import anyio

from harness.errors import map_exception
from harness.mcp import mcp_methods
from harness.methods import Harness, method_table
from rpc import Dispatcher


def tool(harness: Harness, name: str, args: dict[str, Any]) -> Any:
    """The `structuredContent` of calling tool `name` with `args` (asserted not an error)."""
    d = Dispatcher({**method_table(harness), **mcp_methods(harness)},
                   map_exception=map_exception)
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                        "params": {"name": name, "arguments": args}})
    out = anyio.run(d.dispatch, frame.encode())
    assert out is not None
    result = json.loads(out)["result"]
    assert not result.get("isError"), result
    return result["structuredContent"]
