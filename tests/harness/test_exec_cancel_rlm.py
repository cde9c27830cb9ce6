"""A cancelled exec's sub-LLM calls stop with it, on a real `rmh serve` against a real
endpoint on loopback: they free their in-flight slots, so the next exec's call is sent at once.

Before ADVRPC (session 27) a cancel (`$/cancelRequest`, MCP `notifications/cancelled`) killed
the cell's worker but not its `rlm_batch`: the five calls ran on against the endpoint (and
its bill) until the cancelled exec's own deadline, holding all five in-flight slots, so the
next exec's one `rlm_call` waited for them (30 s at the default deadline; here, with the
first exec's deadline an hour away, past the second's whole deadline).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sandbox import probe

from .llm_stub_endpoint import ChatEndpoint, Reply
from .test_server_e2e import Server, make_vault

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not probe().available, reason="no sandbox tier runs here")]


def script(n: int, body: dict[str, Any]) -> Reply:
    """Questions with 'held' are answered only when the endpoint stops; others at once."""
    held = "held" in body["messages"][-1]["content"]
    return Reply(text=f"answer {n}", delay_s=3600.0 if held else 0.0)


@pytest.mark.parametrize("cancel", ["notifications/cancelled", "$/cancelRequest"])
def test_a_cancelled_exec_frees_its_sub_call_slots(tmp_path: Path, cancel: str) -> None:
    with ChatEndpoint(script) as endpoint:
        server = Server(make_vault(tmp_path / "vault"), tmp_path,
                        env_extra={"OPENAI_BASE_URL": endpoint.url, "RMH_MODEL": "m"})
        try:
            server.send("repl.exec", {"code": "rlm_batch([('s', f'held {i}') for i in range(5)])",
                                      "deadline_s": 3600}, rid="batch")
            assert endpoint.wait_count(5) == 5  # every in-flight slot is taken
            if cancel == "$/cancelRequest":
                server.send(cancel, {"id": "batch"})
                assert server.recv()["error"]["code"] == -32800
            else:
                server.send(cancel, {"requestId": "batch"})  # answered by nothing
            answer = server.call("repl.exec", {"code": "rlm_call('s', 'now')", "deadline_s": 60},
                                 rid=2)
            out = answer.get("result") or {}
            # the whole answer and the server's log: a failure says why (CI, session 42: only
            # `{'ok': False, 'stdout': '', ...}` was shown, the error cut off)
            assert out.get("ok") is True and out.get("value") == "'answer 5'", (
                answer, server.stderr_path.read_text()[-4000:])
            assert server.call("status", rid=3)["result"]["llm"]["session"]["answered"] == 1
            assert server.finish() == 0
        finally:
            if server.proc.poll() is None:
                server.proc.kill()
                server.proc.wait()
