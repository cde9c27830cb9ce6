"""Notes as MCP resources: `rmh://note/PATH`, listed in pages, read as markdown.

- `resources/list`: every note (by path), PAGE at a time; `nextCursor` ("p:" and the last path
  listed) gives the notes after that path, so a note written or deleted between two pages
  moves no other note across the boundary (MCPRPC, session 28: with an offset cursor, deleting
  one note of the first page left a note that existed throughout never listed, and a write
  listed one twice). An offset cursor ("n:OFFSET", given before) is still read. A "p:"
  cursor naming no path a note may have ("p:../x", "p:/etc") is -32602; a path the vault
  does not hold (the page's last note, since deleted) is a position like any other.
  Each resource: uri, name (the path), title, mimeType text/markdown.
- `resources/templates/list`: one template, `rmh://note/{path}`, so a client can read any
  note by its vault path.
- `resources/read {uri}`: the note's markdown. The path part is percent-decoded ("/" may be
  written as is or as %2F); a title or alias works too, as with the `read` tool. Reading a
  resource is the client's doing, not the model's choice, so it records nothing for learning.
  An unknown note or a URI of another form is -32002 (MCP's "resource not found") with the
  uri in `data`; an ambiguous title is the usual domain error.
"""

from __future__ import annotations

import bisect
from typing import Any
from urllib.parse import quote, unquote

import anyio

from rpc import AsyncMethod, RpcError, invalid_params
from vault import NoteNotFound, path_refusal

from .methods import Harness
from .vault_list import offset_digits

SCHEME = "rmh://note/"
PAGE = 100
MIME = "text/markdown"
RESOURCE_NOT_FOUND = -32002
TEMPLATE = {"uriTemplate": SCHEME + "{path}", "name": "note", "title": "A note by its path",
            "description": "A note of the vault as markdown; path is the vault path, e.g. "
            "People/Alice.md (a title works too).", "mimeType": MIME}


def note_uri(path: str) -> str:
    return SCHEME + quote(path, safe="/")


def _title(path: str) -> str:
    name = path.rpartition("/")[2]
    return name[:-3] if name.lower().endswith(".md") else name


def _start(cursor: Any, paths: list[str]) -> int:
    """Where the page a cursor of ours names starts in the sorted `paths`: after the path of a
    "p:" cursor, at the offset of an "n:" one (ASCII digits only: MCPRPC, session 28, any
    Unicode digit passed `isdigit`, so "n:²" and a 5,000-digit offset were -32603)."""
    if cursor is None:
        return 0
    if isinstance(cursor, str) and cursor.startswith("p:") and len(cursor) > 2:
        if path_refusal(cursor[2:]) is not None:  # no note may have it: no position (API7)
            raise invalid_params("cursor", "not a cursor this server gave (it names no path "
                                           "a note may have)")
        return bisect.bisect_right(paths, cursor[2:])
    if isinstance(cursor, str) and cursor.startswith("n:") and offset_digits(cursor[2:]):
        return int(cursor[2:])
    raise invalid_params("cursor", "not a cursor this server gave")


def one_page(cursor: Any) -> None:
    """A list that fits one page gives no cursor, so any cursor sent is not ours: -32602 (MCP
    "Pagination": invalid cursors SHOULD be -32602; tools/list, prompts/list and
    resources/templates/list answered their one page to any cursor, `5` too)."""
    if cursor is not None:
        raise invalid_params("cursor", "not a cursor this server gave (this list is one page)")


def resource_methods(h: Harness) -> dict[str, AsyncMethod]:
    """resources/list, resources/templates/list and resources/read over the vault."""

    async def resources_list(cursor: Any = None, _meta: Any = None) -> dict[str, Any]:
        paths = await anyio.to_thread.run_sync(h.ops.note_paths)
        start = _start(cursor, paths)
        page = paths[start:start + PAGE]
        out: dict[str, Any] = {"resources": [
            {"uri": note_uri(p), "name": p, "title": _title(p), "mimeType": MIME}
            for p in page]}
        if start + PAGE < len(paths):
            out["nextCursor"] = f"p:{page[-1]}"
        return out

    async def templates_list(cursor: Any = None, _meta: Any = None) -> dict[str, Any]:
        one_page(cursor)
        return {"resourceTemplates": [dict(TEMPLATE)]}

    async def resources_read(uri: Any, _meta: Any = None) -> dict[str, Any]:
        if not isinstance(uri, str):
            raise invalid_params("uri", "must be a string")
        if not uri.startswith(SCHEME) or len(uri) > 2_000:
            raise RpcError(RESOURCE_NOT_FOUND, "Resource not found", {"uri": uri[:200]})
        note = unquote(uri[len(SCHEME):])
        try:
            record = await h.thread.acall(lambda: h.ops.read(note, learn=False))
        except NoteNotFound as exc:
            raise RpcError(RESOURCE_NOT_FOUND, "Resource not found", {"uri": uri}) from exc
        return {"contents": [{"uri": note_uri(record["note"]), "mimeType": MIME,
                              "text": record["text"]}]}

    return {"resources/list": resources_list, "resources/templates/list": templates_list,
            "resources/read": resources_read}
