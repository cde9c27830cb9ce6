"""Explicit session handles (MCP 2026-07-28, SEP-2567) through a real `rmh serve`: the official
SDK client, speaking the stateless revision (it discovers, no initialize), opens two handles
on one connection, threads them through its calls, and the learning ledger keys each call's
usage on its handle; the handshake client of today keeps its per-connection session."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import anyio
import pytest
from mcp import Client, ClientSession
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, TextContent

from harness.mcp import STATELESS_VERSION

from .test_mcp_sdk_client import server_params
from .test_server_e2e import make_vault

pytestmark = pytest.mark.slow


def payload(result: CallToolResult) -> dict[str, object]:
    block = result.content[0]
    assert isinstance(block, TextContent)
    doc: dict[str, object] = json.loads(block.text)
    return doc


def sessions(vault: Path) -> dict[str, tuple[list[str], bool]]:
    """session id -> (event kinds in order, ended), from the learning ledger."""
    with sqlite3.connect(vault / ".rmh" / "learned.sqlite") as db:
        kinds: dict[str, list[str]] = {}
        for sid, kind in db.execute("SELECT session, kind FROM events ORDER BY seq"):
            kinds.setdefault(sid, []).append(kind)
        ended = {sid: end is not None for sid, end in db.execute("SELECT id, ended FROM session")}
    return {sid: (kinds.get(sid, []), ended.get(sid, False)) for sid in kinds}


def test_stateless_client_threads_handles_that_learning_keys_on(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault")

    async def main() -> tuple[str, str]:
        with anyio.fail_after(120):
            async with Client(server_params(vault), mode="auto") as client:
                assert client.protocol_version == STATELESS_VERSION  # discovered, no handshake
                assert client.server_info is not None and client.server_info.name == "rmh"
                tools = {t.name: t for t in (await client.list_tools()).tools}
                assert {"session_start", "session_end"} <= set(tools)
                assert "session" in tools["search"].input_schema["properties"]
                assert "session" not in tools["links"].input_schema["properties"]
                assert (await client.list_prompts()).prompts  # cacheable results validate too
                notes = (await client.list_resources()).resources
                assert notes and (await client.read_resource(notes[0].uri)).contents
                a = str(payload(await client.call_tool("session_start", {}))["session"])
                b = str(payload(await client.call_tool("session_start", {}))["session"])
                assert a != b and a.startswith("h-")
                found = await client.call_tool(
                    "search", {"query": "auth rewrite", "k": 3, "session": a})
                assert not found.is_error
                assert not (await client.call_tool(
                    "read", {"note": "Lunch", "session": b})).is_error
                assert not (await client.call_tool("read", {"note": "Caro"})).is_error
                ended = await client.call_tool(
                    "session_end", {"session": a, "answer": "Project Atlas is the auth rewrite."})
                assert not ended.is_error and payload(ended)["session"] == a
                again = await client.call_tool("session_end", {"session": a})
                assert again.is_error and "no_session" in json.dumps(payload(again))
                forged = await client.call_tool(
                    "search", {"query": "auth", "session": "h-not-minted-here"})
                assert forged.is_error and "no_session" in json.dumps(payload(forged))
                bad = await client.call_tool("search", {"query": "auth", "session": 7})
                assert bad.is_error and "bad_argument" in json.dumps(payload(bad))
                return a, b

    a, b = anyio.run(main)  # stdin closes: the open handle b and the connection session end
    seen = sessions(vault)
    assert seen[a][1] and seen[b][1], seen  # both ended: a by session_end, b at connection end
    assert "search" in " ".join(seen[a][0]) and "search" not in " ".join(seen[b][0])
    assert any("read" in k for k in seen[b][0])
    own = [sid for sid in seen if sid not in (a, b)]
    assert len(own) == 1 and own[0].startswith("c-")  # the call with no handle: the connection's
    assert any("read" in k for k in seen[own[0]][0]) and seen[own[0]][1]


def test_handshake_client_keeps_its_connection_session(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault")

    async def main() -> None:
        with anyio.fail_after(120):
            async with stdio_client(server_params(vault)) as (rx, tx), \
                    ClientSession(rx, tx) as session:
                await session.initialize()
                assert not (await session.call_tool("search", {"query": "auth"})).is_error
                assert not (await session.call_tool("read", {"note": "Caro"})).is_error

    anyio.run(main)
    seen = sessions(vault)
    assert len(seen) == 1 and next(iter(seen)).startswith("c-") and next(iter(seen.values()))[1]
