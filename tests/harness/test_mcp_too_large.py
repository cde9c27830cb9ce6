"""A `tools/call` whose result is over the frame limit is a tool failure the model can read
(`isError`, kind `response_too_large`), not a JSON-RPC error, through a real `rmh serve`.

Before (MCPRPC, session 28): a note written with the `write` tool and read back with `read`
was answered -32090 "Response too large", a protocol error hosts do not show the model, once
the note passed half the limit (the result holds the text twice: as JSON text and as
structuredContent); `resources/read` of the same note fit. Generated over note sizes and
single or batched frames; JSON-RPC methods keep their -32090 error.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .test_server_e2e import Server, make_vault

pytestmark = pytest.mark.slow

LIMIT = 65_536


@pytest.mark.parametrize("size", [LIMIT // 2 + 1_000, LIMIT - 2_000, 3 * LIMIT])
def test_an_oversize_tool_result_is_a_tool_failure(tmp_path: Path, size: int) -> None:
    vault = make_vault(tmp_path / "v")
    (vault / "Big.md").write_text("w" * size, encoding="utf-8")
    srv = Server(vault, tmp_path, "--max-frame", str(LIMIT))
    try:
        read = {"name": "read", "arguments": {"note": "Big"}}
        single = srv.call("tools/call", read, rid=1)
        srv.send_raw(json.dumps([
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": read},
            {"jsonrpc": "2.0", "id": 3, "method": "vault.read", "params": {"note": "Big"}},
            {"jsonrpc": "2.0", "id": 4, "method": "ping"}]).encode() + b"\n")
        batch = {m["id"]: m for m in srv.recv()}
        small = srv.call("tools/call", {"name": "read", "arguments": {"note": "Lunch"}}, rid=5)
    finally:
        srv.stdin.close()
        srv.proc.wait(60)
    for answer in (single, batch[2]):
        result = answer["result"]
        assert result["isError"] is True, answer
        error = result["structuredContent"]["error"]
        assert error["kind"] == "response_too_large" and error["limit"] == LIMIT
        assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    if size > LIMIT:
        assert batch[3]["error"]["code"] == -32090  # JSON-RPC keeps its protocol error
    assert batch[4]["result"] == {}
    assert "isError" not in small["result"] and small["result"]["structuredContent"]["text"]
    assert all(len(line) <= LIMIT for line in srv.lines)
