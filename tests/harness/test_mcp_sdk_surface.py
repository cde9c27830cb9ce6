"""The official MCP SDK client drives every tool of a real `rmh serve`: annotations, output
schemas (the client validates every successful result against them), compact search results,
safe edits (a stale hash is refused and the file untouched), and the REPL's help and lint."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, TextContent

from harness.operations import OPERATIONS

from .test_mcp_sdk_client import server_params
from .test_server_e2e import make_vault

pytestmark = pytest.mark.slow

COMPACT_K5_MAX = 1_000  # characters of a k = 5 search's text content (issues 14, 30)


def text(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def test_every_tool_through_the_sdk(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault")
    atlas = vault / "Project Atlas.md"
    seen: dict[str, Any] = {}

    async def main() -> None:
        with anyio.fail_after(180):
            async with stdio_client(server_params(vault)) as (rx, tx), \
                    ClientSession(rx, tx) as session:
                await session.initialize()
                tools = {t.name: t for t in (await session.list_tools()).tools}
                declared = {op.mcp: op for op in OPERATIONS if op.mcp is not None}
                assert set(tools) == set(declared) | {"session_start", "session_end"}
                for name, tool in tools.items():
                    if name.startswith("session_"):  # harness.mcp_sessions
                        assert tool.output_schema is not None and tool.title
                        continue
                    op = declared[name]
                    assert tool.output_schema is not None, name
                    assert tool.output_schema["type"] == "object"
                    assert tool.annotations is not None
                    assert tool.annotations.read_only_hint is op.read_only, name
                    assert tool.annotations.destructive_hint is op.destructive, name
                    assert tool.annotations.idempotent_hint is op.idempotent, name
                    assert tool.title and tool.annotations.open_world_hint is op.open_world
                assert tools["search"].annotations.read_only_hint is True  # type: ignore[union-attr]
                assert "logged for learning" in (tools["search"].description or "")
                assert tools["edit"].annotations.destructive_hint is True  # type: ignore[union-attr]
                for fn in ("search(", "read(", "edit(", "rlm_call(", "help()"):
                    assert fn in (tools["exec"].description or ""), fn

                async def call(name: str, args: dict[str, Any]) -> CallToolResult:
                    result = await session.call_tool(name, args)  # validates outputSchema
                    seen[name] = result
                    return result

                found = await call("search", {"query": "auth rewrite", "k": 5})
                assert not found.is_error
                assert len(text(found)) <= COMPACT_K5_MAX
                hit = found.structured_content["hits"][0]
                assert hit["note"] == "Project Atlas.md" and "auth rewrite" in hit["snippet"]
                assert "receipt" not in hit and "stages" not in found.structured_content
                explained = await call("search", {"query": "auth rewrite", "k": 5,
                                                  "explain": True})
                assert "receipt" in explained.structured_content["hits"][0]

                read = await call("read", {"note": "Project Atlas"})
                digest = read.structured_content["hash"]
                assert len(digest) == 64

                refused = await call("write", {"note": "Project Atlas", "content": "gone"})
                assert refused.is_error and "note_exists" in text(refused)
                assert refused.structured_content is not None

                # A person edits the note in Obsidian between the agent's read and its write.
                atlas.write_text(atlas.read_text("utf-8") + "Edited by hand.\n", "utf-8")
                stale = await call("edit", {"note": "Project Atlas", "kind": "append",
                                            "text": "agent\n", "expected_hash": digest})
                assert stale.is_error and "edit_conflict" in text(stale)
                data = stale.structured_content["error"]
                assert data["expected_hash"] == digest and data["current_hash"] != digest
                stale_write = await call("write", {"note": "Project Atlas", "content": "x",
                                                   "expected_hash": digest})
                assert stale_write.is_error and "edit_conflict" in text(stale_write)
                assert atlas.read_text("utf-8").endswith("Edited by hand.\n")

                fresh = await call("read", {"note": "Project Atlas"})
                edited = await call("edit", {
                    "note": "Project Atlas", "kind": "replace", "find": "Monday",
                    "text": "Friday", "expected_hash": fresh.structured_content["hash"]})
                assert not edited.is_error, text(edited)
                miscount = await call("edit", {"note": "Project Atlas", "kind": "replace",
                                               "find": "o", "text": "0"})
                assert miscount.is_error and "edit_refused" in text(miscount)

                wrote = await call("write", {"note": "inbox/Idea", "content": "See [[Lunch]]."})
                assert not wrote.is_error
                assert not (await call("links", {"note": "inbox/Idea"})).is_error
                assert not (await call("backlinks", {"note": "Lunch"})).is_error
                assert not (await call("neighbors", {"note": "Lunch", "hops": 2})).is_error
                assert not (await call("context", {"query": "lunch"})).is_error
                why = await call("why", {"note": "Project Atlas"})
                assert not why.is_error, text(why)
                assert why.structured_content["note"] == "Project Atlas.md"
                not_a_fact = await call("correct", {"note": "Project Atlas",
                                                    "action": "reject"})
                assert not_a_fact.is_error and "edit_refused" in text(not_a_fact)
                listed = await call("list", {"what": "notes", "folder": "inbox"})
                assert listed.structured_content["items"] == [{"note": "inbox/Idea.md"}]
                moved = await call("move", {"note": "inbox/Idea", "new": "inbox/Idea 2"})
                assert not moved.is_error
                assert not (await call("delete", {"note": "inbox/Idea 2"})).is_error
                asked = await call("ask", {"question": "When is Project Atlas due?"})
                assert not asked.is_error, text(asked)
                used = asked.structured_content["notes"]  # the notes the answer used, only
                assert "Project Atlas.md" in used and "Lunch.md" not in used

                ran = await call("exec", {"code": "help()"})
                assert not ran.is_error
                listing = ran.structured_content["stdout"]
                assert "search" in listing and "edit" in listing
                assert "Python's online help" not in listing
                shown = await call("exec", {"code": "help(read)"})
                out = shown.structured_content["stdout"]
                assert out.startswith("read(note: str) -> dict") and "readread" not in out
                assert "*args" not in out
                linted = await call("exec", {"code": "try:\n    1/0\nexcept Exception as e:\n"
                                             "    print(type(e).__name__, (1).__class__.__name__)"})
                assert not linted.is_error, text(linted)
                assert linted.structured_content["stdout"] == "ZeroDivisionError int\n"
                assert "lint warning" in linted.structured_content["stderr"]

    anyio.run(main)
    assert set(seen) == {op.mcp for op in OPERATIONS if op.mcp is not None}
    body = atlas.read_text("utf-8")
    assert "Friday" in body and "Monday" not in body and body.endswith("Edited by hand.\n")
    assert json.loads(text(seen["search"])) == seen["search"].structured_content
