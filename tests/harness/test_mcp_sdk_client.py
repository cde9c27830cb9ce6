"""The official `mcp` Python SDK client drives `rmh serve` over stdio, unmodified."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent

from .test_server_e2e import CHILD_ENV, make_vault

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow




def text(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def server_params(vault: Path) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
    env["PYTHONPATH"] = str(REPO)
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "harness", "--vault", str(vault), "serve", "--no-dense"],
        env=env,
        cwd=str(REPO),
    )


def test_mcp_sdk_client_session(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault")

    async def main() -> None:
        with anyio.fail_after(120):
            async with stdio_client(server_params(vault)) as (rx, tx), \
                    ClientSession(rx, tx) as session:
                init = await session.initialize()
                assert init.server_info.name == "rmh"
                assert init.capabilities.tools is not None
                assert init.instructions and "search" in init.instructions
                await session.send_ping()

                tools = await session.list_tools()
                names = {t.name for t in tools.tools}
                assert {"search", "read", "write", "exec", "links", "backlinks"} <= names
                for tool in tools.tools:
                    assert tool.input_schema["type"] == "object"

                found = await session.call_tool("search", {"query": "auth rewrite", "k": 5})
                assert not found.is_error
                hits = json.loads(text(found))["hits"]
                assert hits[0]["note"] == "Project Atlas.md"

                read = await session.call_tool("read", {"note": "Caro"})
                assert not read.is_error
                assert "hiking" in json.loads(text(read))["text"]

                missing = await session.call_tool("read", {"note": "No Such Note"})
                assert missing.is_error
                assert "note_not_found" in text(missing)

                wrote = await session.call_tool(
                    "write", {"note": "inbox/Idea", "content": "Links to [[Project Atlas]]."}
                )
                assert not wrote.is_error
                back = await session.call_tool("backlinks", {"note": "Project Atlas"})
                assert "inbox/Idea.md" in json.loads(text(back))["items"]

                bad = await session.call_tool("search", {"query": 3})
                assert bad.is_error and "query" in text(bad)

                ran = await session.call_tool("exec", {"code": "print(len(search('hiking')))"})
                assert not ran.is_error
                assert json.loads(text(ran))["stdout"].strip().isdigit()
                crashed = await session.call_tool("exec", {"code": "1/0"})
                assert crashed.is_error and "ZeroDivisionError" in text(crashed)

    anyio.run(main)
    assert (vault / "inbox" / "Idea.md").read_text(encoding="utf-8") == (
        "Links to [[Project Atlas]]."
    )
