"""The MCP stateless revision (2026-07-28) on stdio, next to the handshake versions: a real
`rmh serve` answers `server/discover` and tool calls that carry their version in `_meta`, with
no `initialize` at all; the official SDK client (handshake) works on the same server."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from harness.mcp import PROTOCOL_VERSIONS, STATELESS_VERSION
from tests.forks import run_cli

from .test_server_e2e import CHILD_ENV, REPO, make_vault

pytestmark = pytest.mark.slow

META = {"io.modelcontextprotocol/protocolVersion": STATELESS_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"}}


def exchange(vault: Path, frames: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
    env["PYTHONPATH"] = str(REPO)
    proc = run_cli(["--vault", str(vault), "serve", "--no-dense"], env=env, cwd=REPO,
                   stdin="".join(json.dumps(f) + "\n" for f in frames), timeout=120)
    assert proc.returncode == 0, proc.stderr
    return {m["id"]: m for m in map(json.loads, proc.stdout.splitlines())}


def test_stateless_requests_need_no_initialize(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault")
    answers = exchange(vault, [
        {"jsonrpc": "2.0", "id": "d", "method": "server/discover", "params": {"_meta": META}},
        {"jsonrpc": "2.0", "id": "l", "method": "tools/list", "params": {"_meta": META}},
        {"jsonrpc": "2.0", "id": "s", "method": "tools/call",
         "params": {"_meta": META, "name": "search", "arguments": {"query": "auth rewrite"}}},
        {"jsonrpc": "2.0", "id": "x", "method": "tools/call", "params": {
            "_meta": {**META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"},
            "name": "search", "arguments": {"query": "auth"}}},
        {"jsonrpc": "2.0", "id": "o", "method": "tools/call",
         "params": {"name": "read", "arguments": {"note": "Caro"}}},
    ])
    found = answers["d"]["result"]
    assert found["resultType"] == "complete"
    assert found["supportedVersions"] == [STATELESS_VERSION, *PROTOCOL_VERSIONS]
    assert {"tools", "resources", "prompts"} <= set(found["capabilities"])
    assert found["serverInfo"]["name"] == "rmh" and "search" in found["instructions"]
    assert answers["l"]["result"]["resultType"] == "complete"
    for key in ("d", "l"):  # a 2026-07-28 result says who answered; a tool result is lean
        stamp = answers[key]["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]
        assert stamp["name"] == "rmh" and stamp["version"]
    assert "_meta" not in answers["s"]["result"]
    searched = answers["s"]["result"]
    assert searched["resultType"] == "complete"
    assert searched["structuredContent"]["hits"][0]["note"] == "Project Atlas.md"
    refused = answers["x"]["error"]
    assert refused["code"] == -32602 and STATELESS_VERSION in refused["data"]["supported"]
    legacy = answers["o"]["result"]  # no _meta, no initialize: answered as before
    assert "resultType" not in legacy and "hiking" in legacy["structuredContent"]["text"]
