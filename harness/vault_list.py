"""Browsing a vault: folders, the notes of a folder, tags, recently changed notes; paged.

`browse(vault, what, folder, tag, limit, cursor)` is the `list` operation (every surface:
JSON-RPC `vault.list`, the MCP tool `list`, the REPL's `list_notes`, `rmh list`). It runs
on the vault thread after the vault's own sync, reads the index only, and returns
{"what", "items", "total", "next_cursor"}:
- "notes": the notes directly in `folder` ("" = the vault root; `tag` keeps those with the
  tag or a tag nested under it, "#a" finding "#a/b", in every folder under `folder`), each
  {"note": path}; by path; without `tag`, "folders" too: how many sub-folders `folder` has
  (their notes are not listed; `rmh list` said nothing of them, NEWUSER9);
- "folders": the sub-folders directly in `folder`, each {"folder", "notes"} (notes in it and
  below); by path;
- "tags": every tag, each {"tag", "notes"}; most used first, then by name. Tags are one tag
  whatever their case (Obsidian's help, "Tags": "#tag and #TAG will be treated as
  identical") or Unicode form (`#café` composed or decomposed; vault `tag_key`, by which a
  note dedupes its own tags): `notes` counts the notes holding any spelling, `tag` is the
  spelling most of them use (a tie: the first note's, by path);
- "recent": every note under `folder`, each {"note", "modified"} (ISO 8601 UTC of the file's
  modification time), newest first, then by path. The index keeps a time as a signed 64-bit
  count of ns (1677-2262, `wrap64` past that); `real_mtime_ns` reads it back in the 584 years
  from 1901-12-13 (32-bit time_t's floor): every time ext4 (to 2446) or XFS (to 2486) can
  store, a year-2400 note listed newest, not as 1861. A time before 1970 is a negative key
  and its cursor a negative number (VAULT10, session 36: both refused or misplaced before).
The sorted paths and the tags are cached per connection (`Listings`) until the index's
generation or size changes, so paging costs one sort per change, not one per page.
Paging: at most `limit` items; `next_cursor` (None on the last page) is passed back as
`cursor` to get the next page. A cursor names the last item given by its place in the order
(a keyset: "notes:@PATH", "folders:@PATH", "tags:@COUNT:TAG", "recent:@MTIME_NS:PATH"): the
next page is what sorts after it, so a note written or deleted between two pages moves no
other item across the boundary (MCP6: with an offset, deleting a note of the first page left
one that existed throughout never listed, and a write listed one twice; resources/list had
the same fix, MCPRPC session 28; API7 the same for tags and recent). An item whose own key
changed between pages (a tag's count, a note's modification time) is where its new key puts
it. Offset cursors ("what:OFFSET", given before) are still read. A cursor of another
listing, a malformed one, or one naming what this listing can never hold (a note outside
`folder`, a path no note may have) is a BadArgument (-32602; MCP "Pagination": invalid
cursors SHOULD be refused); a well-formed key the vault does not hold (the last note of the
page, since deleted) is a position like any other.
"""

from __future__ import annotations

import bisect
import re
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


MAX_CURSOR = 1_040  # a keyed cursor's most characters (the `cursor` parameter's bound)
_NS = re.compile(r"-?[0-9]{1,20}")  # a modification time in ns: 19 digits today, "-" before 1970
_FLOOR_NS = -(1 << 31) * 1_000_000_000  # 1901-12-13T20:45:52Z: no time reads earlier


def real_mtime_ns(stored: int) -> int:
    """A modification time as the index stores it (mod 2^64, signed) back in the window
    [1901-12-13, 2486-07): a stored value below the window's floor is one that wrapped."""
    return stored + (1 << 64) if stored < _FLOOR_NS else stored
Key = tuple[Any, ...]


def _folder(path: str) -> str:
    return path.rpartition("/")[0]


def _under(path: str, folder: str) -> bool:
    return not folder or path.startswith(folder + "/")


def _refuse(what: str, cursor: str, why: str = "") -> BadArgument:
    return BadArgument("cursor", f"not a cursor of this '{what}' listing"
                                 f"{': ' + why if why else ''}: {cursor[:60]!r}")


def _cursor_key(what: str, rest: str, cursor: str, place: tuple[str, bool]) -> Key:
    """The sort key a keyset cursor's text `rest` (after "what:@") names; `place` = (folder,
    whether the listing reaches below it: a tag's notes, recent)."""
    folder, deep = place
    if what == "tags":
        count, sep, tag = rest.partition(":")
        if not (sep and tag and offset_digits(count) and int(count) > 0):
            raise _refuse(what, cursor, "a tags cursor is tags:@COUNT:TAG")
        return (-int(count), tag, tag_key(tag))
    if what == "recent":
        stamp, sep, path = rest.partition(":")
        if not (sep and _NS.fullmatch(stamp)):
            raise _refuse(what, cursor, "a recent cursor is recent:@MTIME_NS:PATH")
        key: Key = (-int(stamp), path)
        rest = path
    else:
        key = (rest,)
    inside = _under(rest, folder) if deep else _folder(rest) == folder
    if not inside or not rest or path_refusal(rest) is not None:
        where = f"folder {folder!r}" if folder else "the vault root"
        raise _refuse(what, cursor, f"it names {rest[:40]!r}, which no page of {where} holds")
    return key


def _start(what: str, keys: list[Key], cursor: str | None, place: tuple[str, bool]) -> int:
    """Where the page `cursor` names starts in `keys` (sorted): after the key of a keyset
    cursor ("what:@KEY"), at the offset of an offset one ("what:OFFSET")."""
    if cursor is None or cursor == "":
        return 0
    kind, _, rest = cursor.partition(":")
    if kind == what and rest.startswith("@"):
        return bisect.bisect_right(keys, _cursor_key(what, rest[1:], cursor, place))
    if kind != what or not offset_digits(rest):
        raise _refuse(what, cursor)
    return int(rest)


def _named(what: str, key: Key) -> str:
    """The keyset cursor of the item whose sort key is `key`."""
    if what == "tags":
        return f"tags:@{-key[0]}:{key[1]}"
    if what == "recent":
        return f"recent:@{-key[0]}:{key[1]}"
    return f"{what}:@{key[0]}"


def _page(what: str, items: list[dict[str, Any]], keys: list[Key], limit: int,
          cursor: str | None, place: tuple[str, bool]) -> dict[str, Any]:
    start = _start(what, keys, cursor, place)
    end = start + limit
    nxt = None
    if end < len(items):
        nxt = _named(what, keys[end - 1])
        if len(nxt) > MAX_CURSOR:  # a tag longer than any path: its offset still pages
            nxt = f"{what}:{end}"
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


def _tag_counts(tagged: list[tuple[str, tuple[str, ...]]]) -> list[Key]:
    """(-notes, spelling, tag_key) of each tag (`tag_key`) of `tagged` (by path), sorted: the
    spelling most notes use (a tie: the one met first), most used first, then by name."""
    notes: Counter[str] = Counter()
    spellings: dict[str, dict[str, tuple[int, int]]] = {}  # key -> spelling -> (-n, first)
    for i, (_, tags) in enumerate(tagged):
        mine = {tag_key(t): t for t in reversed(tags)}  # a note's first spelling of each
        for key, tag in mine.items():
            notes[key] += 1
            n, first = spellings.setdefault(key, {}).get(tag, (0, i))
            spellings[key][tag] = (n - 1, first)
    shown = {k: min(s, key=lambda t: (*s[t], t)) for k, s in spellings.items()}
    return sorted((-n, shown[k], k) for k, n in notes.items())


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
    items: list[dict[str, Any]] = []
    if folder and not any(_under(p, folder) for p in paths):
        # "/people" lists people/; a name no vault folder may be ("../..", "/etc") is refused
        # as a path, as by every function taking a note (vault LiveIndex.not_found)
        # and so is a folder reached through a symlink (out of the vault, into it, a loop:
        # the scan follows none), as a read through it is
        if (why := path_refusal(given) or vault.folder_refusal(folder)) is not None:
            raise PathRefused(given, why)
        raise BadArgument("folder", f"no notes under {folder!r}")
    keys: list[Key]
    if what == "notes" and tag is None:
        keys = [(p,) for p in paths if _folder(p) == folder]
    elif what == "notes":
        wanted = tag_key(str(tag).lstrip("#")).rstrip("/")
        keys = [(p,) for p, tags in cache.tagged(vault)
                if _under(p, folder) and any(_nested(tag_key(t), wanted) for t in tags)]
    elif what == "folders":
        counts: Counter[str] = Counter()
        depth = len(folder.split("/")) if folder else 0
        for p in paths:
            parts = p.split("/")[:-1]
            if _under(p, folder) and len(parts) > depth:
                counts["/".join(parts[:depth + 1])] += 1
        keys = [(f,) for f in sorted(counts)]
        items = [{"folder": f, "notes": counts[f]} for (f,) in keys]
    elif what == "tags":
        keys = _tag_counts([(p, t) for p, t in cache.tagged(vault) if _under(p, folder)])
        items = [{"tag": t, "notes": -n} for n, t, _ in keys]
    else:
        stats = vault.index_stats()
        keys = sorted((-real_mtime_ns(stats[p].mtime_ns), p) for p in paths
                      if p in stats and _under(p, folder))
        items = [{"note": p, "modified": _iso(-m)} for m, p in keys]
    if what == "notes":
        items = [{"note": p} for (p,) in keys]
    place = (folder, what == "recent" or (what == "notes" and tag is not None))
    page = _page(what, items, keys, limit, cursor, place)
    if what == "notes" and tag is None:  # the notes its sub-folders hold are not listed
        depth = len(folder.split("/")) if folder else 0
        page["folders"] = len({tuple(p.split("/")[:depth + 1]) for p in paths
                               if _under(p, folder) and p.count("/") > depth})
    return page
