"""Browsing a vault: folders, the notes of a folder, tags, recently changed notes; paged.

`browse(vault, what, folder, tag, limit, cursor)` is the `list` operation (every surface:
JSON-RPC `vault.list`, the MCP tool `list`, the REPL's `list_notes`, `rmh list`). It runs
on the vault thread after the vault's own sync, reads the index only, and returns
{"what", "items", "total", "next_cursor"}:
- "notes": the notes directly in `folder` ("" = the vault root; `tag` keeps those with the
  tag or a tag nested under it, "#a" finding "#a/b", in every folder under `folder`), each
  {"note": path}; by path;
- "folders": the sub-folders directly in `folder`, each {"folder", "notes"} (notes in it and
  below); by path;
- "tags": every tag, each {"tag", "notes"}; most used first, then by name. Tags are one tag
  whatever their case (Obsidian's help, "Tags": "#tag and #TAG will be treated as
  identical") or Unicode form (`#café` composed or decomposed; vault `tag_key`, by which a
  note dedupes its own tags): `notes` counts the notes holding any spelling, `tag` is the
  spelling most of them use (a tie: the first note's, by path);
- "recent": every note under `folder`, each {"note", "modified"} (ISO 8601 UTC of the file's
  modification time), newest first, then by path.
The sorted paths and the tags are cached per connection (`Listings`) until the index's
generation or size changes, so paging costs one sort per change, not one per page.
Paging: at most `limit` items; `next_cursor` (None on the last page) is passed back as
`cursor` to get the next page. A cursor of "notes" or "folders" (listed by path) names the
last path given ("notes:@PATH"): the next page is what sorts after it, so a note written or
deleted between two pages moves no other item across the boundary (MCP6: with an offset,
deleting a note of the first page left one that existed throughout never listed, and a write
listed one twice; resources/list had the same fix, MCPRPC session 28). "tags" and "recent"
(ordered by counts and times, which a change reorders) keep an offset ("what:offset"), read
for notes and folders too (cursors given before); pages of an unchanged vault never skip or
repeat an item (orders are total: path tie-breaks). A cursor of another listing or a
malformed one is a BadArgument.
"""

from __future__ import annotations

import bisect
from collections import Counter
from datetime import UTC, datetime
from typing import Any

from vault import PathRefused, Vault, path_refusal, tag_key

from .errors import BadArgument

KINDS = ("notes", "folders", "tags", "recent")


def offset_digits(text: str) -> bool:
    """Whether `text` is an offset a cursor of ours can hold: 1-18 ASCII digits. (`isdigit`
    alone also takes "²" and "٣", which `int` refuses or reads, and any length, which `int`
    refuses past 4,300 digits: both were -32603, MCPRPC session 28.)"""
    return 0 < len(text) <= 18 and text.isascii() and text.isdigit()


# The item field a keyset cursor names, by listing (the listings sorted by that field alone).
KEYED = {"notes": "note", "folders": "folder"}


def _start(what: str, items: list[dict[str, Any]], cursor: str | None) -> int:
    """Where the page `cursor` names starts in `items`: after the key of a keyset cursor
    ("what:@KEY"), at the offset of an offset one ("what:OFFSET")."""
    if cursor is None or cursor == "":
        return 0
    kind, _, rest = cursor.partition(":")
    if kind == what and what in KEYED and len(rest) > 1 and rest.startswith("@"):
        return bisect.bisect_right([item[KEYED[what]] for item in items], rest[1:])
    if kind != what or not offset_digits(rest):
        raise BadArgument("cursor", f"not a cursor of a '{what}' listing: {cursor[:40]!r}")
    return int(rest)


def _folder(path: str) -> str:
    return path.rpartition("/")[0]


def _under(path: str, folder: str) -> bool:
    return not folder or path.startswith(folder + "/")


def _page(what: str, items: list[dict[str, Any]], limit: int,
          cursor: str | None) -> dict[str, Any]:
    start = _start(what, items, cursor)
    end = start + limit
    nxt = None
    if end < len(items):
        nxt = f"{what}:@{items[end - 1][KEYED[what]]}" if what in KEYED else f"{what}:{end}"
    return {"what": what, "items": items[start:end], "total": len(items), "next_cursor": nxt}


def _iso(mtime_ns: int) -> str:
    stamp = datetime.fromtimestamp(mtime_ns / 1e9, tz=UTC)
    return stamp.isoformat(timespec="seconds").replace("+00:00", "Z")


class Listings:
    """The sorted paths and every note's tags, kept while the vault's generation and size
    stay the same (one sort and one pass over the index per change, not per page)."""

    def __init__(self) -> None:
        self._key: tuple[int, int] | None = None
        self._paths: list[str] = []
        self._tags: list[tuple[str, tuple[str, ...]]] | None = None

    def _fresh(self, vault: Vault) -> None:
        corpus = vault.corpus()
        key = (corpus.generation, len(corpus))
        if key != self._key:
            self._key, self._paths, self._tags = key, sorted(corpus.paths), None

    def paths(self, vault: Vault) -> list[str]:
        self._fresh(vault)
        return self._paths

    def tagged(self, vault: Vault) -> list[tuple[str, tuple[str, ...]]]:
        """(path, tags) of every note, by path."""
        self._fresh(vault)
        if self._tags is None:
            self._tags = sorted((row.path, tuple(row.tags)) for row in vault.note_rows())
        return self._tags


def _tag_counts(tagged: list[tuple[str, tuple[str, ...]]]) -> list[dict[str, Any]]:
    """{"tag", "notes"} of each tag (`tag_key`) of `tagged` (by path): the spelling most
    notes use (a tie: the one met first), most used first, then by name."""
    notes: Counter[str] = Counter()
    spellings: dict[str, dict[str, tuple[int, int]]] = {}  # key -> spelling -> (-n, first)
    for i, (_, tags) in enumerate(tagged):
        mine = {tag_key(t): t for t in reversed(tags)}  # a note's first spelling of each
        for key, tag in mine.items():
            notes[key] += 1
            n, first = spellings.setdefault(key, {}).get(tag, (0, i))
            spellings[key][tag] = (n - 1, first)
    shown = {k: min(s, key=lambda t: (*s[t], t)) for k, s in spellings.items()}
    return [{"tag": shown[k], "notes": n}
            for k, n in sorted(notes.items(), key=lambda kv: (-kv[1], shown[kv[0]], kv[0]))]


def _nested(tag: str, wanted: str) -> bool:
    """`tag` is `wanted` or nested under it ("a/b/c" under "a" and "a/b"), as Obsidian's tag
    search reads a tag."""
    return tag == wanted or tag.startswith(f"{wanted}/")


def browse(vault: Vault, what: str, folder: str = "", tag: str | None = None,
           limit: int = 50, cursor: str | None = None,
           listings: Listings | None = None) -> dict[str, Any]:
    """One page of a listing (see the module docstring); `listings` caches across calls."""
    cache = listings if listings is not None else Listings()
    given, folder = folder, folder.strip("/")
    paths = cache.paths(vault)
    items: list[dict[str, Any]]
    if folder and not any(_under(p, folder) for p in paths):
        # "/people" lists people/; a name no vault folder may be ("../..", "/etc") is refused
        # as a path, as by every function taking a note (vault LiveIndex.not_found)
        # and so is a folder reached through a symlink (out of the vault, into it, a loop:
        # the scan follows none), as a read through it is
        if (why := path_refusal(given) or vault.folder_refusal(folder)) is not None:
            raise PathRefused(given, why)
        raise BadArgument("folder", f"no notes under {folder!r}")
    if what == "notes" and tag is None:
        items = [{"note": p} for p in paths if _folder(p) == folder]
    elif what == "notes":
        wanted = tag_key(str(tag).lstrip("#")).rstrip("/")
        items = [{"note": p} for p, tags in cache.tagged(vault)
                 if _under(p, folder) and any(_nested(tag_key(t), wanted) for t in tags)]
    elif what == "folders":
        counts: Counter[str] = Counter()
        depth = len(folder.split("/")) if folder else 0
        for p in paths:
            parts = p.split("/")[:-1]
            if _under(p, folder) and len(parts) > depth:
                counts["/".join(parts[:depth + 1])] += 1
        items = [{"folder": f, "notes": n} for f, n in sorted(counts.items())]
    elif what == "tags":
        items = _tag_counts([(p, t) for p, t in cache.tagged(vault) if _under(p, folder)])
    else:
        stats = vault.index_stats()
        rows = sorted(((stats[p].mtime_ns, p) for p in paths if p in stats and _under(p, folder)),
                      key=lambda r: (-r[0], r[1]))
        items = [{"note": p, "modified": _iso(m)} for m, p in rows]
    return _page(what, items, limit, cursor)
