"""`rmh serve` started while another process's erasure is pending (a note the file system will
not let rmh remove: `chattr +i`), all real processes: it answers every vault call with
erasure_pending (-32019, without the erased names), and once `rmh doctor` finished the erasure
it serves the vault, by itself. Before, it answered -32019 until it was restarted (it had only
the unready table, harness/unready.py, and never looked again)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness.test_crash_forget import SECRET, notes, rmh
from tests.harness.test_erasure_pending import _chattr, with_immutable_note
from tests.harness.test_erasure_pending_served import AFTER, _leaks, _server

pytestmark = pytest.mark.slow


@pytest.fixture
def immutable_note(tmp_path: Path) -> Iterator[Path]:
    yield from with_immutable_note(tmp_path)


def test_a_server_started_while_an_erasure_is_pending_serves_once_it_is_finished(
        immutable_note: Path, tmp_path: Path) -> None:
    work = immutable_note
    r = rmh(work, "forget", "--subject", SECRET, "--json")
    assert r.returncode == 1 and json.loads(r.stdout)["error"]["kind"] == "erasure_pending"
    srv = _server(work, tmp_path)
    try:
        init = srv.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                       "clientInfo": {"name": "t", "version": "1"}}, 1)
        assert "restart" not in init["result"]["instructions"], init
        for rid in (2, 3):  # asked twice: the journal did not change, no new open
            out = srv.call("vault.read", {"note": "keep"}, rid)
            assert out["error"]["code"] == -32019, out
        tool = srv.call("tools/call", {"name": "search", "arguments": {"query": "keep"}}, 4)
        assert tool["result"]["isError"] is True
        assert tool["result"]["structuredContent"]["error"]["kind"] == "erasure_pending"
        assert not [ln for ln in srv.lines if _leaks(ln)]
        assert _chattr("-i", work / "vault" / "people" / "Quillon.md")
        fixed = rmh(work, "doctor", "--json")
        assert fixed.returncode == 0, fixed.stderr
        assert set(notes(work)) == {"keep.md", "links.md"}
        mark = len(srv.lines)
        assert "Groceries" in srv.call("vault.read", {"note": "keep"}, 10)["result"]["text"]
        assert "result" in srv.call("session.start", {"session": "s-after"}, 11)
        for rid, (method, params) in enumerate(AFTER, start=20):
            out = srv.call(method, params, rid)
            if "people/" in str(params):  # the erased note: not found
                assert out["error"]["code"] in (-32003, -32002), out
            else:
                assert "result" in out, (method, out)
        tool = srv.call("tools/call", {"name": "search", "arguments": {"query": "groceries"}},
                        99)
        assert not tool["result"].get("isError"), tool
        assert not [ln for ln in srv.lines[mark:] if _leaks(ln, (SECRET,))]
    finally:
        assert srv.finish() == 0, srv.stderr_path.read_text()
