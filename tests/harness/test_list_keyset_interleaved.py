"""Every listing of the `list` tool pages by keyset (API7): generated interleavings of writes,
rewrites and deletes between the pages of "notes", "folders", "tags" and "recent" list every
item whose key stayed the same throughout exactly once (the offset cursors tags and recent
kept after MCP6 skipped one when an item before the boundary went, and repeated one when one
came). An item whose own key changed (a tag's count, a rewritten note's time) may move."""

from __future__ import annotations

import json
import random
from typing import Any

import anyio
import pytest

from harness.errors import map_exception
from harness.mcp import mcp_methods
from harness.methods import Harness, method_table
from rpc import Dispatcher

from .mcp_tool import tool

TAGS = tuple(f"t{i:02d}" for i in range(16))


def _name(what: str, item: dict[str, Any]) -> str:
    return str(item["tag"] if what == "tags" else item["folder"] if what == "folders"
               else item["note"])


def _key(what: str, item: dict[str, Any]) -> tuple[Any, ...]:
    """What orders `item` (a recent note's time is the test's own record, see below)."""
    return (_name(what, item), item.get("notes"))


def _content(rng: random.Random) -> str:
    tags = rng.sample(TAGS, rng.randint(0, 3))
    return "text " + " ".join(f"#{t}" for t in tags) + f" {rng.random()}\n"


def _change(harness: Harness, rng: random.Random, live: list[str], touched: set[str],
            serial: list[int]) -> None:
    verb = rng.choice(("write", "write", "rewrite", "delete"))
    if verb == "delete" and len(live) > 3:
        note = live.pop(rng.randrange(len(live)))
        tool(harness, "delete", {"note": note})
    elif verb == "rewrite" and live:
        note = rng.choice(live)
        tool(harness, "write", {"note": note, "content": _content(rng), "overwrite": True})
    else:
        serial[0] += 1
        note = f"f{rng.randrange(8)}/n{rng.randrange(100):02d}x{serial[0]}"
        tool(harness, "write", {"note": note, "content": _content(rng)})
        live.append(note)
    touched.add(note if note.endswith(".md") else f"{note}.md")


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("what", ["notes", "folders", "tags", "recent"])
def test_items_unchanged_throughout_are_listed_once_whatever_changes_between_pages(
        harness: Harness, what: str, seed: int) -> None:
    rng = random.Random(f"{what}-{seed}")
    folder = "f1" if what == "notes" else ""
    live: list[str] = []
    touched: set[str] = set()
    serial = [0]
    for i in range(24):
        note = f"f{i % 3}/n{i:02d}" if what == "notes" else f"f{i % 8}/n{i:02d}"
        tool(harness, "write", {"note": note, "content": _content(rng)})
        live.append(note)
    limit = rng.randint(1, 2)
    args = {"what": what, "folder": folder, "limit": limit}
    snapshots: list[dict[str, tuple[Any, ...]]] = []
    seen: list[str] = []
    page: dict[str, Any] = {"next_cursor": None}
    first = True
    while first or page["next_cursor"] is not None:
        for _ in range(rng.choice((0, 1, 1, 2, 3))) if not first else ():
            _change(harness, rng, live, touched, serial)
        whole = tool(harness, "list", {**args, "limit": 500})["items"]
        snapshots.append({_name(what, it): _key(what, it) for it in whole})
        cursor = {} if first else {"cursor": page["next_cursor"]}
        page = tool(harness, "list", {**args, **cursor})
        seen += [_name(what, it) for it in page["items"]]
        first = False
    # lasting: in every snapshot with the same key (and, for recent, never written meanwhile)
    lasting = {name for name in snapshots[0]
               if all(s.get(name) == snapshots[0][name] for s in snapshots)
               and not (what == "recent" and name in touched)}
    assert len(snapshots) > 2
    repeated = sorted(n for n in lasting if seen.count(n) > 1)
    missed = sorted(n for n in lasting if n not in seen)
    assert not repeated and not missed, (repeated, missed)


def _call(harness: Harness, args: dict[str, Any]) -> dict[str, Any]:
    d = Dispatcher({**method_table(harness), **mcp_methods(harness)},
                   map_exception=map_exception)
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "vault.list", "params": args})
    return dict(json.loads(anyio.run(d.dispatch, frame.encode()) or "{}"))


def test_each_listing_s_cursor_names_its_last_item_by_key(harness: Harness) -> None:
    for i in range(5):
        tool(harness, "write", {"note": f"d/N{i}", "content": f"#t{i} #all x\n"})
    tool(harness, "write", {"note": "e/M", "content": "x\n"})
    for what, folder, shape in (("notes", "d", "notes:@d/N0.md"), ("folders", "", "folders:@d"),
                                ("tags", "", "tags:@"), ("recent", "", "recent:@")):
        out = _call(harness, {"what": what, "folder": folder, "limit": 1})["result"]
        assert out["next_cursor"].startswith(shape), out
        rest = _call(harness, {"what": what, "folder": folder, "limit": 500,
                               "cursor": out["next_cursor"]})["result"]
        whole = _call(harness, {"what": what, "folder": folder, "limit": 500})["result"]
        assert out["items"] + rest["items"] == whole["items"]
