"""Cursors a client sends back to the list methods: only one this server gave is read, any
other is a clear -32602 (MCP "Pagination": invalid cursors SHOULD be -32602), never -32603.

Generated over every non-ASCII character `str.isdigit` accepts (MCPRPC, session 28: "n:²"
passed the `isdigit` check and made `int` raise, an internal error on `resources/list`,
`vault.list` and the `list` tool; "n:٣" was read as 3) and over offsets long past the
4,300-digit limit of `int`. And a note written or deleted between two pages of
`resources/list` loses or repeats no other note (the offset cursor did both).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import pytest

from harness.errors import map_exception
from harness.mcp import mcp_methods
from harness.methods import Harness, method_table
from rpc import Dispatcher

UNICODE_DIGITS = [c for c in map(chr, range(0x80, sys.maxunicode + 1)) if c.isdigit()]
NUMBERS = [*UNICODE_DIGITS[::7], "1" + UNICODE_DIGITS[0], "9" * 19, "9" * 5_000]


def _answer(harness: Harness, method: str, params: dict[str, Any]) -> Any:
    d = Dispatcher({**method_table(harness), **mcp_methods(harness)},
                   map_exception=map_exception)
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    out = anyio.run(d.dispatch, frame.encode())
    assert out is not None
    return json.loads(out)


def test_the_digits_sampled_are_the_ones_int_trips_on() -> None:
    assert "²" in UNICODE_DIGITS and "٣" in UNICODE_DIGITS and len(UNICODE_DIGITS) > 300


@pytest.mark.parametrize("number", NUMBERS, ids=lambda n: f"U+{ord(n[-1]):04X}x{len(n)}")
def test_a_cursor_that_is_not_ours_is_invalid_params(harness: Harness, number: str) -> None:
    for method, cursor in (("resources/list", f"n:{number}"), ("vault.list", f"notes:{number}")):
        out = _answer(harness, method, {"cursor": cursor})
        assert out.get("error", {}).get("code") == -32602, (method, out)
        assert out["error"]["data"]["param"] == "cursor"
    tool = _answer(harness, "tools/call", {"name": "list",
                                           "arguments": {"cursor": f"notes:{number}"}})
    assert tool["result"]["isError"], tool
    assert tool["result"]["structuredContent"]["error"]["kind"] == "bad_argument", tool


def test_the_cursors_the_server_gives_still_page(harness: Harness) -> None:
    for i in range(105):
        assert "result" in _answer(harness, "vault.write", {"note": f"n{i:03}", "content": "x"})
    first = _answer(harness, "resources/list", {})["result"]
    second = _answer(harness, "resources/list", {"cursor": first["nextCursor"]})["result"]
    uris = [r["uri"] for r in first["resources"] + second["resources"]]
    assert len(uris) == len(set(uris)) == 107 and "nextCursor" not in second
    listed = _answer(harness, "vault.list", {"limit": 100})["result"]
    rest = _answer(harness, "vault.list", {"cursor": listed["next_cursor"]})["result"]
    assert len(listed["items"]) + len(rest["items"]) == 107


@pytest.mark.parametrize("change", ["delete n000", "delete n099", "delete n100",
                                    "write a-first", "write n099b", "write z-last"])
def test_paging_resources_while_notes_change_lists_every_lasting_note_once(
        harness: Harness, change: str) -> None:
    for i in range(110):
        assert "result" in _answer(harness, "vault.write", {"note": f"n{i:03}", "content": "x"})
    before = {r["uri"] for r in _listed(harness)}
    seen: list[str] = []
    page = _answer(harness, "resources/list", {})["result"]
    seen += [r["uri"] for r in page["resources"]]
    verb, note = change.split()
    if verb == "delete":
        assert "result" in _answer(harness, "vault.delete", {"note": note})
    else:
        assert "result" in _answer(harness, "vault.write", {"note": note, "content": "x"})
    after = {r["uri"] for r in _listed(harness)}
    while "nextCursor" in page:
        page = _answer(harness, "resources/list", {"cursor": page["nextCursor"]})["result"]
        seen += [r["uri"] for r in page["resources"]]
    assert len(seen) == len(set(seen)), sorted(u for u in seen if seen.count(u) > 1)
    assert before & after <= set(seen), sorted((before & after) - set(seen))


def _listed(harness: Harness) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    page: dict[str, Any] = {"nextCursor": None}
    while "nextCursor" in page:
        cursor = page["nextCursor"]
        page = _answer(harness, "resources/list", {} if cursor is None else {"cursor": cursor})
        page = page["result"]
        out += page["resources"]
    return out


@pytest.mark.parametrize("method", ["tools/list", "prompts/list", "resources/templates/list"])
@pytest.mark.parametrize("cursor", ["bogus", "n:0", "p:A", "", 5, [], {}])
def test_a_list_of_one_page_refuses_any_cursor(harness: Harness, method: str,
                                               cursor: Any) -> None:
    assert "nextCursor" not in _answer(harness, method, {})["result"]
    out = _answer(harness, method, {"cursor": cursor})
    assert out.get("error", {}).get("code") == -32602, out
    assert out["error"]["data"]["param"] == "cursor"
