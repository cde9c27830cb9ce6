"""`rmh serve` as a real subprocess: holding answers a client has not read never starves the
frame that made them (rpc/flight.py: a slot waits only for whole answers to be written)."""

from __future__ import annotations

import json
import select
from pathlib import Path
from typing import Any

import pytest

from .test_server_e2e import Server, make_vault

pytestmark = pytest.mark.slow


def recv_within(srv: Server, seconds: float) -> Any:
    ready, _, _ = select.select([srv.stdout], [], [], seconds)
    assert ready, f"no answer in {seconds} s; stderr:\n{srv.stderr_path.read_text()}"
    return srv.recv()


def test_a_batch_whose_own_errors_pass_the_bound_is_answered(tmp_path: Path) -> None:
    """300 invalid elements (`{}`, 3 bytes each, ~70 bytes of error each, which a
    response_too_large refusal cannot make smaller) and one `vault.search` in one 1 KB batch,
    under --max-frame 4096 (16 KiB of unwritten answers): the batch's own errors counted as
    answers waiting to be written, so its search waited for a slot until they were written,
    and they were written only once the search was done. The batch was never answered and
    no ordinary method ran again on that connection (on the default 8 MiB cap, 500,000 `{}`
    in a 1.5 MB batch did the same)."""
    srv = Server(make_vault(tmp_path / "v"), tmp_path, "--max-frame", "4096")
    try:
        search = {"jsonrpc": "2.0", "method": "vault.search", "params": {"query": "atlas"},
                  "id": "s"}
        srv.send_raw(json.dumps([{}] * 300 + [search]).encode() + b"\n")
        whole = recv_within(srv, 30)  # the array passes the cap: one refusal, id null
        assert whole["id"] is None and whole["error"]["data"]["kind"] == "response_too_large"
        srv.send("vault.search", {"query": "atlas"}, rid="after")
        after = recv_within(srv, 30)
        assert after["id"] == "after" and after["result"]["hits"], after
    except BaseException:
        srv.proc.kill()  # a held server would drain for two minutes at end of input
        raise
    assert srv.finish() == 0
