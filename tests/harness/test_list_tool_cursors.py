"""The `list` tool's pages while notes change (MCP6): a note written or deleted between two
pages of "notes" or "folders" loses or repeats no other item (the offset cursor did both;
resources/list, which had the same defect, got the same fix in session 28). Cursors given
before (offsets) still page; a keyset cursor with no key is refused."""

from __future__ import annotations

import json

import anyio
import pytest

from harness.errors import map_exception
from harness.mcp import mcp_methods
from harness.methods import Harness, method_table
from rpc import Dispatcher

from .mcp_tool import tool

LIMIT = 4


def listed(harness: Harness, what: str, folder: str) -> list[str]:
    key = "note" if what == "notes" else "folder"
    out = tool(harness, "list", {"what": what, "folder": folder, "limit": 500})
    return [item[key] for item in out["items"]]


# (listing, folder, change): every side of the first page's boundary (the 4th item, d/N03 or
# d/F3), written or deleted; the fixture's notes are Alpha.md and Beta.md in the root.
CHANGES = [(what, folder, f"{verb} {where}/{stem}{i}")
           for what, folder, where, stem in (("notes", "d", "d", "N0"),
                                             ("folders", "d", "d/F", "x"))
           for verb in ("delete", "write")
           for i in (0, 2, 3, 4, 8)]


def _setup(harness: Harness) -> None:
    for i in range(10):
        tool(harness, "write", {"note": f"d/N0{i}", "content": "x\n"})
        tool(harness, "write", {"note": f"d/F{i}/x0", "content": "x\n"})


def _path(what: str, change: str) -> str:
    verb, path = change.split()
    if what == "folders":  # d/F/x3 -> a note in folder d/F3 (deleted: its only note)
        head, _, tail = path.rpartition("/x")
        return f"{head}{tail}/x0" if verb == "delete" else f"{head}{tail}a/x0"
    return path if verb == "delete" else f"{path}a"


@pytest.mark.parametrize("what, folder, change", CHANGES)
def test_paging_the_list_tool_while_notes_change_lists_every_lasting_item_once(
        harness: Harness, what: str, folder: str, change: str) -> None:
    _setup(harness)
    key = "note" if what == "notes" else "folder"
    before = set(listed(harness, what, folder))
    page = tool(harness, "list", {"what": what, "folder": folder, "limit": LIMIT})
    seen = [item[key] for item in page["items"]]
    path = _path(what, change)
    if change.startswith("delete"):
        tool(harness, "delete", {"note": path})
    else:
        tool(harness, "write", {"note": path, "content": "x\n"})
    after = set(listed(harness, what, folder))
    assert before != after
    while page["next_cursor"] is not None:
        page = tool(harness, "list", {"what": what, "folder": folder, "limit": LIMIT,
                                      "cursor": page["next_cursor"]})
        seen += [item[key] for item in page["items"]]
    assert len(seen) == len(set(seen)), sorted(s for s in seen if seen.count(s) > 1)
    assert before & after <= set(seen), sorted((before & after) - set(seen))


@pytest.mark.parametrize("what", ["notes", "folders", "tags", "recent"])
def test_offset_cursors_given_before_still_page(harness: Harness, what: str) -> None:
    _setup(harness)
    for i in range(6):
        tool(harness, "edit", {"note": f"d/N0{i}", "kind": "append", "text": f"#t{i}\n"})
    folder = "" if what == "tags" else "d"
    whole = tool(harness, "list", {"what": what, "folder": folder, "limit": 500})["items"]
    rest = tool(harness, "list", {"what": what, "folder": folder, "limit": 500,
                                  "cursor": f"{what}:{LIMIT}"})["items"]
    assert rest == whole[LIMIT:] and len(whole) > LIMIT


def test_a_keyset_cursor_without_a_key_is_refused(harness: Harness) -> None:
    d = Dispatcher({**method_table(harness), **mcp_methods(harness)},
                   map_exception=map_exception)
    for cursor in ("notes:@", "tags:@t1", "recent:@Alpha.md", "folders:@"):
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "vault.list",
                            "params": {"what": cursor.partition(":")[0], "cursor": cursor}})
        out = json.loads(anyio.run(d.dispatch, frame.encode()) or "{}")
        assert out["error"]["code"] == -32602 and out["error"]["data"]["param"] == "cursor"


@pytest.mark.parametrize("length", [60, 120, 240])
def test_a_cursor_naming_a_long_path_pages(harness: Harness, length: int) -> None:
    stems = [f"{c}{'n' * length}" for c in "abc"]
    for stem in stems:
        tool(harness, "write", {"note": f"deep/{stem}", "content": "x\n"})
    first = tool(harness, "list", {"folder": "deep", "limit": 1})
    second = tool(harness, "list", {"folder": "deep", "limit": 2, "cursor": first["next_cursor"]})
    notes = [i["note"] for i in first["items"] + second["items"]]
    assert notes == [f"deep/{stem}.md" for stem in stems]
