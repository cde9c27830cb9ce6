"""A cancelled `ask` (and one running at SIGTERM) is answered at once and its sub-LLM call is
stopped, on a real `rmh serve` against a real endpoint on loopback that never answers.

Before ADVRPC (session 27) `ask` ran in a thread a cancel could not leave: `$/cancelRequest`
was answered only when the ask gave up on the endpoint (181 s at the default timeout and
retries), with its result (-32030), not -32800; MCP `notifications/cancelled` left the call
running as long; SIGTERM ended the process 181 s later with no answer for the ask. Here the
endpoint's timeout is an hour, so before the fix the endpoint's connection stayed open.
"""

from __future__ import annotations

import select
import signal
from pathlib import Path
from typing import Any

import pytest

from .llm_stub_endpoint import ChatEndpoint, Reply
from .test_server_e2e import Server, make_vault

pytestmark = pytest.mark.slow

QUESTION = {"question": "When is Project Atlas due?"}


def never(n: int, body: dict[str, Any]) -> Reply:
    return Reply(until_closed=True)


def answer(server: Server) -> Any:
    """The next answer, or a failure when none comes in 60 s (before the fix: none for an
    hour)."""
    ready, _, _ = select.select([server.stdout], [], [], 60)
    assert ready, "no answer"
    return server.recv()


@pytest.mark.parametrize("how", ["$/cancelRequest", "notifications/cancelled", "SIGTERM"])
def test_a_cancelled_ask_is_answered_and_stops_its_call(tmp_path: Path, how: str) -> None:
    with ChatEndpoint(never) as endpoint:
        config = tmp_path / "rmh.toml"
        config.write_text(f'[llm]\nmodel = "m"\nbase_url = "{endpoint.url}"\n'
                          "timeout_s = 3600\nmax_retries = 0\n", encoding="utf-8")
        server = Server(make_vault(tmp_path / "vault"), tmp_path,
                        env_extra={"RMH_CONFIG": str(config)})
        try:
            if how == "notifications/cancelled":
                server.send("tools/call", {"name": "ask", "arguments": QUESTION}, "ask")
            else:
                server.send("vault.ask", QUESTION, "ask")
            assert endpoint.wait_count(1) == 1  # the sub-call is at the endpoint
            if how == "SIGTERM":
                server.proc.send_signal(signal.SIGTERM)
                assert answer(server)["error"]["data"]["kind"] == "server_shutting_down"
            elif how == "$/cancelRequest":
                server.send(how, {"id": "ask"})
                assert answer(server)["error"]["code"] == -32800
            else:
                server.send(how, {"requestId": "ask"})  # answered by nothing
                server.send("ping", None, "p")
                assert answer(server)["id"] == "p"
            assert endpoint.wait_closed(1, timeout_s=60) == 1  # rmh hung up: the call stopped
            assert endpoint.count == 1
            if how != "SIGTERM":
                assert server.call("ping", rid="after")["result"] == {}
            assert server.finish() == 0
            answers = sum(b'"id":"ask"' in line for line in server.lines)
            assert answers == (0 if how == "notifications/cancelled" else 1), server.lines
        finally:
            if server.proc.poll() is None:
                server.proc.kill()
                server.proc.wait()
