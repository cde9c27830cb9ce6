"""`context`'s date range over the wire: a `date_from` after `date_to` is a bad argument
naming `date_from`, on JSON-RPC (`vault.context`: -32602, `data.param`) and on MCP
(`tools/call context`: an `isError` result of kind `bad_argument`, `param`); an ordered range
(one day included) is answered. Untested over the wire before (session 31's open item);
generated pairs of dates, both orders, through one real `rmh serve`."""

from __future__ import annotations

import json
import random
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from .test_server_e2e import Server, make_vault


def date_pairs(seed: int, count: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    pairs = [("2024-05-01", "2024-05-01"), ("2024-05-02", "2024-05-01")]
    for _ in range(count):
        a = date(2000, 1, 1) + timedelta(days=rng.randrange(40 * 365))
        b = a + timedelta(days=rng.choice([1, 2, 30, 365, 9000]) * rng.choice([-1, 1]))
        pairs.append((a.isoformat(), b.isoformat()))
    return pairs


def test_a_range_that_ends_before_it_starts_is_a_bad_date_from(tmp_path: Path) -> None:
    pairs = date_pairs(32, 12)
    server = Server(make_vault(tmp_path / "vault"), tmp_path)
    try:
        for i, (start, end) in enumerate(pairs):
            args = {"query": "lunch", "date_from": start, "date_to": end}
            server.send("vault.context", args, f"rpc{i}")
            server.send("tools/call", {"name": "context", "arguments": args}, f"mcp{i}")
        answers: dict[str, Any] = {}
        while len(answers) < 2 * len(pairs):
            msg = server.recv()
            answers[msg["id"]] = msg
        assert server.finish() == 0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
    for i, (start, end) in enumerate(pairs):
        rpc, mcp = answers[f"rpc{i}"], answers[f"mcp{i}"]["result"]
        if start > end:  # ISO dates order as text
            assert rpc["error"]["code"] == -32602, rpc
            assert rpc["error"]["data"]["param"] == "date_from", rpc
            assert end in rpc["error"]["data"]["reason"], rpc
            assert mcp["isError"] is True, mcp
            error = mcp["structuredContent"]["error"]
            assert (error["kind"], error["param"]) == ("bad_argument", "date_from"), mcp
            assert json.loads(mcp["content"][0]["text"]) == mcp["structuredContent"]
        else:
            assert "result" in rpc, rpc
            assert not mcp.get("isError"), mcp
