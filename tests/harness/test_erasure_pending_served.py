"""A running `rmh serve` while another process's `rmh forget` fails part-way (a note the file
system will not let rmh remove: `chattr +i`, EPERM even for root), all real processes.

Invariant: once an erasure intent is pending (its text may still be readable), no process that
serves the vault returns the erased text; a server started before the erasure answers every
call that reads the vault with erasure_pending (-32019, without the erased names), as a fresh
open does, and serves again by itself once another process (`rmh doctor`) finished the erasure.
Before, the running server kept serving the erased notes from its index and its snapshot (its
watcher saw nothing change: the immutable note was still there) until it restarted."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.harness.test_crash_forget import (
    ERASED,
    LINES,
    SECRET,
    notes,
    occurrences,
    rmh,
)
from tests.harness.test_erasure_pending import _chattr, with_immutable_note
from tests.harness.test_server_e2e import Server

pytestmark = pytest.mark.slow
ERASED_WORDS = (SECRET, *LINES, "Quillon", "Marrow")
READS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("vault.search", {"query": f"who owns {SECRET}", "k": 5}),
    ("vault.search", {"query": "launch code floorboard", "k": 5}),
    ("vault.read", {"note": "people/Quillon.md"}),
    ("vault.read", {"note": "keep"}),
    ("vault.list", {}),
    ("vault.links", {"note": "links"}),
    ("vault.backlinks", {"note": "keep"}),
    ("vault.neighbors", {"note": "links", "hops": 2}),
    ("vault.context", {"query": f"what is the launch code of {SECRET}"}),
    ("vault.why", {"note": "keep"}),
    ("resources/list", {}),
    ("resources/read", {"uri": "rmh://note/people/Quillon.md"}),
    ("session.end", {"answer": f"The launch code of {SECRET} is under the floorboard."}),
)

# after the erasure: asking for the subject again would log it anew (the client's own words)
AFTER = tuple((m, {k: v.replace(SECRET, "Quillon") if isinstance(v, str) else v
                   for k, v in p.items()}) for m, p in READS)


def _leaks(line: bytes, words: tuple[str, ...] = ERASED_WORDS) -> list[str]:
    text = line.decode("utf-8", "replace")
    for _, params in READS + AFTER:  # a query or a name echoed back: the client's own text
        for asked in (params.get("query"), params.get("note"), params.get("uri")):
            text = text.replace(f'"{asked}"', "") if asked else text
    return [w for w in words if w.casefold() in text.casefold()]


@pytest.fixture
def immutable_note(tmp_path: Path) -> Iterator[Path]:
    yield from with_immutable_note(tmp_path)


def _server(work: Path, tmp: Path) -> Server:
    return Server(work / "vault", tmp, env_extra={
        "RMH_EMBED_CACHE": str(work / "shared.sqlite"), "HOME": str(work)})


def test_a_running_server_stops_serving_an_erasure_another_process_could_not_finish(
        immutable_note: Path, tmp_path: Path) -> None:
    work = immutable_note
    srv = _server(work, tmp_path)
    try:
        assert "result" in srv.call("session.start", {"session": "s-before"}, 2)
        before = srv.call("vault.search", READS[0][1])["result"]
        assert {h["note"] for h in before["hits"]} & {"people/Quillon.md"}, before
        assert SECRET in srv.call("vault.read", {"note": "Quillon"})["result"]["text"]
        r = rmh(work, "forget", "--subject", SECRET, "--json")
        assert r.returncode == 1 and json.loads(r.stdout)["error"]["kind"] == "erasure_pending"
        mark = len(srv.lines)
        for rid, (method, params) in enumerate(READS, start=10):
            out = srv.call(method, params, rid)
            assert out.get("error", {}).get("code") == -32019, (method, out)
        tool = srv.call("tools/call", {"name": "search", "arguments": {"query": SECRET}}, 99)
        assert tool["result"]["isError"] is True
        error = tool["result"]["structuredContent"]["error"]
        assert error["kind"] == "erasure_pending" and "rmh doctor" in error["message"], error
        assert srv.call("ping", None, 100)["result"] == {}  # the server itself is well
        leaked = [(ln, _leaks(ln)) for ln in srv.lines[mark:] if _leaks(ln)]
        assert not leaked, leaked
        assert _chattr("-i", work / "vault" / "people" / "Quillon.md")
        fixed = rmh(work, "doctor", "--json")
        assert fixed.returncode == 0, fixed.stderr
        assert set(notes(work)) == {"keep.md", "links.md"}
        mark = len(srv.lines)
        assert "result" in srv.call("session.start", {"session": "s-after"}, 199)
        for rid, (method, params) in enumerate(AFTER, start=200):  # served again, by itself
            out = srv.call(method, params, rid)
            if "people/" in str(params):  # the erased note: not found
                assert out["error"]["code"] in (-32003, -32002), out
            else:
                assert "result" in out, (method, out)
        assert "Groceries" in srv.call("vault.read", {"note": "keep"}, 300)["result"]["text"]
        # (links.md, which stays, names [[Quillon]]: only the erased notes' own text counts)
        after = (SECRET, *LINES, *ERASED)
        leaked = [(ln, _leaks(ln, after)) for ln in srv.lines[mark:] if _leaks(ln, after)]
        assert not leaked, leaked
    finally:
        assert srv.finish() == 0, srv.stderr_path.read_text()
    assert occurrences(work) == {}  # nothing the server wrote since (it exited) holds any
