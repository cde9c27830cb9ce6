"""A cancelled cell that loses the REPL's namespace is reported by the next exec, on a real
`rmh serve`.

A cancel (`$/cancelRequest`, MCP `notifications/cancelled`) of a running cell kills its worker:
the namespace is gone. Before ADVRPC (session 26) only the cancelled cell's own result said
`state_lost`, and no client reads it (MCP wants no answer, `$/cancelRequest` answers -32800),
so the next cell met a NameError with `state_lost` false. A deadline, by contrast, is
answered with `state_lost` true.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from sandbox import probe

from .test_server_e2e import Server, make_vault

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not probe().available, reason="no sandbox tier runs here")]


BUSY = """import time
while True:
    try:
        read('Go')
        break
    except Exception:
        time.sleep(0.02)
"""


@pytest.mark.parametrize("cancel", ["notifications/cancelled", "$/cancelRequest"])
def test_the_exec_after_a_cancelled_cell_says_the_state_was_lost(tmp_path: Path,
                                                                 cancel: str) -> None:
    vault = make_vault(tmp_path / "vault")
    server = Server(vault, tmp_path)
    try:
        assert server.call("repl.exec", {"code": "x = 1\nx"}, rid=1)["result"]["value"] == "1"
        server.send("repl.exec", {"code": "write('Running', 'now')\nimport time\n"
                                          "time.sleep(60)"}, rid="long")
        end = time.monotonic() + 60
        while not (vault / "Running.md").exists():  # the cell is running
            assert time.monotonic() < end, "the cell never ran"
            time.sleep(0.05)
        if cancel == "$/cancelRequest":
            server.send(cancel, {"id": "long"})
            assert server.recv()["error"]["code"] == -32800
        else:
            server.send(cancel, {"requestId": "long"})  # answered by nothing
        after = server.call("repl.exec", {"code": "'x' in globals()"}, rid=2)["result"]
        assert after["value"] == "False" and after["state_lost"] is True, after
        again = server.call("repl.exec", {"code": "x = 2\nx"}, rid=3)["result"]
        assert again["value"] == "2" and again["state_lost"] is False, again  # said once
        # a cancel before the cell starts loses nothing, and says nothing. "busy" holds the
        # REPL until the note Go exists, written only once "queued" is answered (it slept
        # 3 s: a server slower than that between two frames started "queued" first)
        server.send("repl.exec", {"code": BUSY, "deadline_s": 120}, rid="busy")
        server.send("repl.exec", {"code": "x = 3"}, rid="queued")
        server.send("$/cancelRequest", {"id": "queued"})
        queued = server.recv()  # "busy" cannot answer before Go
        assert queued["id"] == "queued" and queued["error"]["code"] == -32800, queued
        server.send("vault.write", {"note": "Go", "content": "go"}, rid="go")
        answers = {msg["id"]: msg for msg in (server.recv(), server.recv())}
        assert "result" in answers["go"], answers
        assert answers["busy"]["result"]["ok"] is True, answers
        kept = server.call("repl.exec", {"code": "x"}, rid=4)["result"]
        assert kept["value"] == "2" and kept["state_lost"] is False, kept
        assert server.finish() == 0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
