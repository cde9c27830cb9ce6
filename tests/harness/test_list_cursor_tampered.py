"""A tampered or malformed cursor (API7), through a real `rmh serve`: raw JSON-RPC
(`vault.list`, `resources/list`) and the official `mcp` client (the `list` tool,
`resources/list`).

The decision: a cursor is refused (-32602 naming `cursor`; the `list` tool's `isError`
`bad_argument`) when it is malformed or names what its listing can never hold: a note outside
the folder listed, a path no note may have ("../x"), a tag count of 0. A well-formed key the
vault does not hold is a position (the page's last note may have been deleted since, which
the server cannot tell from a key made up): the page holds what sorts after it. MCP6 left all
of these read as positions."""

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

REPO = Path(__file__).resolve().parents[2]
CHILD_ENV = ("PATH", "HOME", "LANG", "TMPDIR", "RMH_EMBED_CACHE", "XDG_CACHE_HOME",
             "RMH_GRAPH_CACHE")

pytestmark = pytest.mark.slow

# (listing, folder, cursor): each refused
REFUSED = [
    ("notes", "", "notes:@d/N1.md"),  # a note of another folder
    ("notes", "d", "notes:@N1.md"),  # the root's, listing d
    ("notes", "d", "notes:@d/../../etc/passwd"),
    ("notes", "d", "notes:@/etc/passwd"),
    ("notes", "d", "notes:@"),
    ("notes", "d", "notes:@d/a\u0000b.md"),
    ("folders", "", "folders:@d/e"),  # not a folder directly in the root
    ("folders", "", "folders:@../x"),
    ("folders", "d", "notes:@d/N1.md"),  # another listing's
    ("tags", "", "tags:@0:t1"),
    ("tags", "", "tags:@x:t1"),
    ("tags", "", "tags:@3:"),
    ("tags", "", "tags:@t1"),
    ("recent", "", "recent:@12:../x.md"),
    ("recent", "d", "recent:@12:e/N1.md"),  # outside d
    ("recent", "", "recent:@1e9:d/N1.md"),
    ("recent", "", "recent:@d/N1.md"),
    ("notes", "d", "notes:x"),
    ("notes", "d", "notes:-1"),
]
# (listing, folder, cursor, what the page holds: the items after the key)
POSITIONS = [
    ("notes", "d", "notes:@d/N1x.md", ["d/N2.md", "d/N3.md"]),
    ("notes", "d", "notes:@d/A never existed.md", ["d/N0.md", "d/N1.md", "d/N2.md", "d/N3.md"]),
    ("folders", "", "folders:@dz", ["e"]),
    ("tags", "", "tags:@3:t1z", ["t2", "t3", "t0", "t4"]),  # all 4; t1-t3 3; t0, t4 1
    ("recent", "d", "recent:@1:d/N0.md", []),  # older than any: nothing after it
    # before 1970: a time a note may have (VAULT10: its own cursor was refused), older still
    ("recent", "", "recent:@-5:d/N1.md", []),
]


def _vault(root: Path) -> Path:
    (root / ".rmh").mkdir(parents=True)
    (root / "N1.md").write_text("root\n", encoding="utf-8")
    for i in range(4):
        (root / "d").mkdir(exist_ok=True)
        (root / "d" / f"N{i}.md").write_text(f"#all #t{i} #t{i + 1}\n", encoding="utf-8")
    (root / "e").mkdir()
    (root / "e" / "N1.md").write_text("#t1 #t2 #t3\n", encoding="utf-8")
    return root


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
    env["PYTHONPATH"] = str(REPO)
    return env


def _args(vault: Path) -> list[str]:
    return ["-m", "harness", "--vault", str(vault), "serve", "--no-dense"]


def _key(item: dict[str, Any]) -> str:
    return str(item.get("note") or item.get("folder") or item.get("tag"))


def test_json_rpc_refuses_a_tampered_cursor_and_reads_a_made_up_key_as_a_position(
        tmp_path: Path) -> None:
    vault = _vault(tmp_path / "v")
    frames = [{"jsonrpc": "2.0", "id": i, "method": "vault.list",
               "params": {"what": what, "folder": folder, "cursor": cursor, "limit": 50}}
              for i, (what, folder, cursor, *_) in enumerate([*REFUSED, *POSITIONS])]
    frames += [{"jsonrpc": "2.0", "id": 1000 + i, "method": "resources/list",
                "params": {"cursor": c}} for i, c in enumerate(("p:../x", "p:/etc", "p:"))]
    frames.append({"jsonrpc": "2.0", "id": 2000, "method": "resources/list",
                   "params": {"cursor": "p:d/N1x.md"}})
    stdin = "".join(json.dumps(f) + "\n" for f in frames)
    done = subprocess.run([sys.executable, *_args(vault)], input=stdin, capture_output=True,
                          text=True, env=_env(), cwd=REPO, timeout=120, check=False)
    answers = {a["id"]: a for a in map(json.loads, done.stdout.splitlines())}
    assert len(answers) == len(frames), done.stderr
    for i, (what, folder, cursor) in enumerate(REFUSED):
        err = answers[i].get("error")
        assert err is not None and err["code"] == -32602, (what, folder, cursor, answers[i])
        assert err["data"]["param"] == "cursor"
    for i, (_, _, cursor, expected) in enumerate(POSITIONS, len(REFUSED)):
        assert [_key(x) for x in answers[i]["result"]["items"]] == expected, (cursor, answers[i])
    for i in range(3):
        assert answers[1000 + i]["error"]["code"] == -32602, answers[1000 + i]
    after = [r["name"] for r in answers[2000]["result"]["resources"]]
    assert after == ["d/N2.md", "d/N3.md", "e/N1.md"]


def test_the_official_mcp_client_sees_the_same(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "v")
    params = StdioServerParameters(command=sys.executable, args=_args(vault), env=_env(),
                                   cwd=str(REPO))

    async def main() -> None:
        with anyio.fail_after(120):
            async with stdio_client(params) as (rx, tx), ClientSession(rx, tx) as session:
                await session.initialize()
                await session.list_tools()  # the SDK validates outputs against these
                for what, folder, cursor in REFUSED:
                    out = await session.call_tool("list", {"what": what, "folder": folder,
                                                           "cursor": cursor})
                    block = out.content[0]
                    assert out.is_error and isinstance(block, TextContent), (cursor, out)
                    error = json.loads(block.text)["error"]
                    assert error["kind"] == "bad_argument" and error["param"] == "cursor"
                for what, folder, cursor, expected in POSITIONS:
                    out = await session.call_tool("list", {"what": what, "folder": folder,
                                                           "cursor": cursor})
                    assert not out.is_error and out.structured_content is not None
                    assert [_key(x) for x in out.structured_content["items"]] == expected
                for cursor in ("p:../x", "p:/etc"):
                    with pytest.raises(MCPError) as caught:
                        await session.list_resources(params=PaginatedRequestParams(cursor=cursor))
                    assert caught.value.code == -32602
                page = await session.list_resources(
                    params=PaginatedRequestParams(cursor="p:d/N1x.md"))
                assert [r.name for r in page.resources] == ["d/N2.md", "d/N3.md", "e/N1.md"]

    anyio.run(main)
