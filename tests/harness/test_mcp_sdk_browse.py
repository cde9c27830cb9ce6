"""The official MCP SDK client against a real `rmh serve`: notes as resources (listed in
pages, read, a template), prompts, the list tool; and a server started on a folder that is not
a vault yet, which still answers the handshake and says what to do in every tool result."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp.types import PaginatedRequestParams, TextContent

from harness.mcp_resources import PAGE

from .test_mcp_sdk_client import server_params
from .test_server_e2e import CHILD_ENV, REPO, make_vault

pytestmark = pytest.mark.slow


def many_notes(vault: Path, n: int) -> None:
    (vault / "bulk").mkdir()
    for i in range(n):
        tag = " #even" if i % 2 == 0 else ""
        (vault / "bulk" / f"Note {i:03d}.md").write_text(f"Note number {i}.{tag}\n", "utf-8")


def test_resources_prompts_and_list_through_the_sdk(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault")
    many_notes(vault, PAGE + 5)

    async def main() -> None:
        with anyio.fail_after(180):
            async with stdio_client(server_params(vault)) as (rx, tx), \
                    ClientSession(rx, tx) as session:
                init = await session.initialize()
                assert init.capabilities.resources is not None
                assert init.capabilities.prompts is not None
                first = await session.list_resources()
                assert len(first.resources) == PAGE and first.next_cursor
                second = await session.list_resources(
                    params=PaginatedRequestParams(cursor=first.next_cursor))
                assert second.next_cursor is None
                uris = [str(r.uri) for r in (*first.resources, *second.resources)]
                assert len(uris) == len(set(uris)) == PAGE + 5 + 3
                atlas = next(r for r in first.resources if r.name == "Project Atlas.md")
                assert str(atlas.uri) == "rmh://note/Project%20Atlas.md"
                read = await session.read_resource(atlas.uri)
                block = read.contents[0]
                assert getattr(block, "text", "").startswith("Project Atlas is the auth rewrite")
                by_title = await session.read_resource("rmh://note/Caro")  # an alias works
                assert "hiking" in getattr(by_title.contents[0], "text", "")
                with pytest.raises(MCPError):
                    await session.read_resource("rmh://note/No%20Such%20Note")
                templates = await session.list_resource_templates()
                assert templates.resource_templates[0].uri_template == "rmh://note/{path}"

                prompts = {p.name: p for p in (await session.list_prompts()).prompts}
                assert set(prompts) == {"recall", "remember", "review"}
                got = await session.get_prompt("recall", {"topic": "the auth rewrite"})
                content = got.messages[0].content
                assert isinstance(content, TextContent)
                assert "the auth rewrite" in content.text and "search" in content.text
                with pytest.raises(MCPError):
                    await session.get_prompt("remember", {})

                pages: list[Any] = []
                cursor = None
                while True:
                    args: dict[str, Any] = {"what": "notes", "folder": "bulk", "limit": 40}
                    if cursor:
                        args["cursor"] = cursor
                    page = (await session.call_tool("list", args)).structured_content
                    pages += page["items"]
                    cursor = page["next_cursor"]
                    if cursor is None:
                        break
                assert [p["note"] for p in pages] == [
                    f"bulk/Note {i:03d}.md" for i in range(PAGE + 5)]
                tags = (await session.call_tool("list", {"what": "tags"})).structured_content
                assert tags["items"][0] == {"tag": "even", "notes": (PAGE + 5 + 1) // 2}
                ran = await session.call_tool("exec", {"code": (
                    "p = list_notes('folders')\nprint([f['folder'] for f in p['items']])")})
                assert (ran.structured_content or {})["stdout"] == "['bulk', 'people']\n"
                wrong = await session.call_tool("list", {"what": "notes", "cursor": "tags:3"})
                assert wrong.is_error
                assert wrong.structured_content["error"]["param"] == "cursor"

    anyio.run(main)


def unready_params(folder: Path | None) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
    env["PYTHONPATH"] = str(REPO)
    vault = ["--vault", str(folder)] if folder is not None else []
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "harness", *vault, "serve", "--no-dense"],
                                 env=env, cwd=str(REPO))


@pytest.mark.parametrize("kind", ["empty folder", "missing folder", "no vault given"])
def test_serve_without_a_vault_answers_and_says_what_to_do(tmp_path: Path, kind: str) -> None:
    folder: Path | None = tmp_path / "notes"
    if kind == "empty folder":
        folder.mkdir()  # type: ignore[union-attr]
    elif kind == "no vault given":
        folder = None

    async def main() -> None:
        with anyio.fail_after(120):
            async with stdio_client(unready_params(folder)) as (rx, tx), \
                    ClientSession(rx, tx) as session:
                init = await session.initialize()
                assert init.instructions and "rmh" in init.instructions
                tools = (await session.list_tools()).tools
                assert {"search", "read", "write"} <= {t.name for t in tools}
                for name, args in (("search", {"query": "x"}), ("read", {"note": "a"})):
                    result = await session.call_tool(name, args)
                    assert result.is_error
                    error = (result.structured_content or {})["error"]
                    assert error["kind"] == "not_a_vault"
                    fix = "rmh init" if folder is not None else "--vault"
                    assert fix in error["message"]
                assert (await session.list_resources()).resources == []

    anyio.run(main)
    if folder is not None:
        assert not (folder / ".rmh").exists()  # serving never initialises


def test_serve_without_a_vault_refuses_json_rpc_with_not_a_vault(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
    env["PYTHONPATH"] = str(REPO)
    frames = [{"jsonrpc": "2.0", "id": 1, "method": "vault.search", "params": {"query": "x"}},
              {"jsonrpc": "2.0", "id": 2, "method": "ping"}]
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "--vault", str(tmp_path), "serve", "--no-dense"],
        input="".join(json.dumps(f) + "\n" for f in frames), capture_output=True, text=True,
        env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    answers = {m["id"]: m for m in map(json.loads, proc.stdout.splitlines())}
    assert answers[1]["error"]["code"] == -32001
    assert answers[1]["error"]["data"]["kind"] == "not_a_vault"
    assert answers[2]["result"] == {}
