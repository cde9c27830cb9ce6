"""The list operation over a real vault in-process: a connection's cached listings follow
every change (a write, an edit, an outside edit, a delete), and paging is total."""

from __future__ import annotations

import json
import random
import unicodedata
from typing import Any

import anyio
import pytest

from harness.errors import map_exception
from harness.mcp import mcp_methods
from harness.methods import Harness, method_table
from rpc import Dispatcher
from vault.notes.link_keys import fold


def rpc(h: Harness, method: str, params: Any) -> Any:
    d = Dispatcher({**method_table(h), **mcp_methods(h)}, map_exception=map_exception)
    frame = json.dumps({"jsonrpc": "2.0", "method": method, "params": params, "id": 1})
    out = anyio.run(d.dispatch, frame.encode())
    assert out is not None
    return json.loads(out)


def tags(h: Harness) -> list[dict[str, Any]]:
    return list(rpc(h, "vault.list", {"what": "tags"})["result"]["items"])


def test_cached_listings_follow_every_change(harness: Harness) -> None:
    assert tags(harness) == []
    rpc(harness, "vault.write", {"note": "Gamma", "content": "New. #fresh\n"})
    assert tags(harness) == [{"tag": "fresh", "notes": 1}]
    rpc(harness, "vault.edit", {"note": "Beta", "kind": "append", "text": "#fresh #beta\n"})
    assert tags(harness) == [{"tag": "fresh", "notes": 2}, {"tag": "beta", "notes": 1}]
    (harness.vault.root / "Alpha.md").write_text("Edited outside. #outside\n", "utf-8")
    harness.vault.live.sync()
    assert {"tag": "outside", "notes": 1} in tags(harness)
    rpc(harness, "vault.delete", {"note": "Gamma"})
    assert tags(harness) == [{"tag": "beta", "notes": 1}, {"tag": "fresh", "notes": 1},
                             {"tag": "outside", "notes": 1}]
    notes = rpc(harness, "vault.list", {})["result"]
    assert [i["note"] for i in notes["items"]] == ["Alpha.md", "Beta.md"]


def test_pages_cover_the_listing_exactly_once(harness: Harness) -> None:
    for i in range(23):
        rpc(harness, "vault.write", {"note": f"d/N{i:02d}", "content": f"n{i}\n"})
    seen: list[str] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"what": "recent", "limit": 4}
        if cursor is not None:
            params["cursor"] = cursor
        page = rpc(harness, "vault.list", params)["result"]
        assert page["total"] == 25
        seen += [i["note"] for i in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == len(set(seen)) == 25
    bad = rpc(harness, "vault.list", {"what": "notes", "cursor": "notes:x"})["error"]
    assert bad["code"] == -32602 and bad["data"]["param"] == "cursor"
    missing = rpc(harness, "vault.list", {"folder": "nowhere"})["error"]
    assert missing["data"]["param"] == "folder"


def test_a_tag_finds_the_tags_nested_under_it(harness: Harness) -> None:
    """As Obsidian's tag search: "#a" finds "#a/b/c" and "#a"; never "#ab" or "#b/a"."""
    for name, tag in (("N1", "#proj/api/v2"), ("N2", "#proj"), ("N3", "#project"),
                      ("N4", "#other/proj"), ("N5", "#Proj/Web")):
        rpc(harness, "vault.write", {"note": name, "content": f"x {tag}\n"})

    def tagged(tag: str) -> list[str]:
        page = rpc(harness, "vault.list", {"what": "notes", "tag": tag})["result"]
        return [i["note"] for i in page["items"]]

    assert tagged("proj") == ["N1.md", "N2.md", "N5.md"]
    assert tagged("#proj/") == ["N1.md", "N2.md", "N5.md"]
    assert tagged("proj/api") == ["N1.md"]
    assert tagged("project") == ["N3.md"] and tagged("proj/api/v") == []


@pytest.mark.parametrize("seed", range(3))
def test_tags_differing_in_case_or_unicode_form_are_one_tag(harness: Harness, seed: int) -> None:
    """Obsidian's help ("Tags"): "#tag and #TAG will be treated as identical"; and `#café`
    typed composed or decomposed reads the same. The listing counts each tag once per note
    under the spelling most notes use, and `tag` finds every spelling."""
    rng = random.Random(seed)
    # "πρωτεΐνη".upper() spells ΐ as Ϊ and a combining acute (there is no capital ΐ): one
    # name to links' `fold` (Unicode 15, section 3.13), by which note.py dedupes a note's tags
    words = ["Proj", "caf\u00e9", "\u00dcber/alles", "todo",
             "\u03c0\u03c1\u03c9\u03c4\u03b5\u0390\u03bd\u03b7"]
    holders: dict[str, set[str]] = {w: set() for w in words}
    spelt: dict[str, dict[str, int]] = {w: {} for w in words}
    for i in range(12):
        chosen = rng.sample(words, rng.randrange(1, 3))
        spellings = []
        for w in chosen:
            s = rng.choice([w, w.upper(), w.lower(), unicodedata.normalize("NFD", w)])
            spellings.append(s)
            holders[w].add(f"N{i:02d}.md")
            spelt[w][s] = spelt[w].get(s, 0) + 1
        rpc(harness, "vault.write",
            {"note": f"N{i:02d}", "content": " ".join(f"#{s}" for s in spellings) + "\n"})
    listed = {fold(i["tag"]): i for i in tags(harness)}
    assert sorted(listed) == sorted(fold(w) for w in words if holders[w])
    for w in words:
        if not holders[w]:
            continue
        item = listed[fold(w)]
        assert item["notes"] == len(holders[w])
        assert spelt[w][item["tag"]] == max(spelt[w].values())
        for query in {w, w.upper(), unicodedata.normalize("NFD", w.lower())}:
            page = rpc(harness, "vault.list", {"what": "notes", "tag": query})["result"]
            assert {i["note"] for i in page["items"]} == holders[w]
