"""MCP's `notifications/cancelled`, sent by the official `mcp` client, stops a long
`vault.ingest` in a real `rmh serve` between notes (INGSTOP, session 31, tested the JSON-RPC
`$/cancelRequest` only). The client abandons its request once the first notes are on disk
(polled); the SDK then sends the cancel. The server answers nothing for the ingest (MCP's
rule), stays usable, takes back the notes of the conversation it was writing (STORE6, session
32: no link left dangling), and an ingest of the same export completes the vault byte for byte
as one uninterrupted ingest does."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import anyio
import pytest
from mcp import ClientSession
from mcp import types as mcp_types
from mcp.client.stdio import stdio_client
from pydantic import BaseModel, ConfigDict

from .test_mcp_sdk_client import server_params
from .test_serve_ingest_stop import export, notes, state, vault

pytestmark = pytest.mark.slow


class Ingest(mcp_types.Request[dict[str, Any], Literal["vault.ingest"]]):
    """`vault.ingest`, rmh's JSON-RPC method, sent through the SDK's own request path."""

    method: Literal["vault.ingest"] = "vault.ingest"


class Ingested(BaseModel):
    """`vault.ingest`'s result: the notes written (the rest kept as sent)."""

    model_config = ConfigDict(extra="allow")
    written: int


def ingest_request(text: str) -> Ingest:
    return Ingest(params={"conversation": text, "format": "text"})


async def whole_ingest(root: Path, text: str) -> int:
    async with stdio_client(server_params(root)) as (rx, tx), ClientSession(rx, tx) as session:
        await session.initialize()
        result = await session.send_request(ingest_request(text), Ingested)
        return result.written


async def cancelled_then_completed(root: Path, text: str) -> tuple[int, int, int]:
    """(notes on disk once the cancelled ingest had stopped, notes before it, what the second
    ingest wrote)."""
    before = notes(root)
    async with stdio_client(server_params(root)) as (rx, tx), ClientSession(rx, tx) as session:
        await session.initialize()
        async with anyio.create_task_group() as tg:

            async def run() -> None:
                await session.send_request(ingest_request(text), Ingested)
                raise AssertionError("the cancelled ingest was answered")

            tg.start_soon(run)
            while notes(root) < before + 5:  # poll: its write phase has begun
                await anyio.sleep(0.02)
            tg.cancel_scope.cancel()  # the SDK sends notifications/cancelled
        await session.send_ping()  # the session goes on
        # a vault call runs after the ingest has left the vault's thread: it has stopped
        await session.call_tool("list", {})
        stopped_at = notes(root)
        again = await session.send_request(ingest_request(text), Ingested)
    return stopped_at, before, again.written


@pytest.mark.parametrize("seed", [5])
def test_an_mcp_cancel_stops_a_long_ingest_between_notes(tmp_path: Path, seed: int) -> None:
    text = export(seed)
    whole = vault(tmp_path / "whole")
    stopped = vault(tmp_path / "stopped")

    async def main() -> tuple[int, tuple[int, int, int]]:
        with anyio.fail_after(600):  # a bound far over the need: a hang fails, not hangs CI
            return await whole_ingest(whole, text), await cancelled_then_completed(stopped, text)

    total, (stopped_at, before, again) = anyio.run(main)
    assert stopped_at == before  # stopped mid-conversation: that conversation taken back
    assert again == total  # and written whole again
    assert state(stopped) == state(whole)
