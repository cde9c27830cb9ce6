"""The cards of an Obsidian canvas that name a note, and their rewrite when the note moves.

A `.canvas` file is JSON (JSON Canvas 1.0): `{"nodes": [...], "edges": [...]}`; a node with
`"type": "file"` shows the vault file at its `"file"` member (a vault path with its
extension, `"folder/Note.md"`). Obsidian rewrites those members when it renames the file; a
move (`Vault.move`) does the same through its plan (vault/writes.py).

The rewrite keeps every other byte: only the string of each file card's `"file"` member
naming the moved note is replaced where it is written as `json.dumps` writes it (Obsidian's
own form); the result is checked by parsing both texts (exactly those members changed).
Where the text writes a path another way (escapes of its own), the whole file is written
again as Obsidian writes it (tab-indented JSON). A file that is no canvas (not JSON, no
node list) is never changed."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

CANVAS_SUFFIX = ".canvas"


def is_canvas(path: str) -> bool:
    """Whether vault path `path` names an Obsidian canvas (by its extension, any case)."""
    return path.lower().endswith(CANVAS_SUFFIX)


def _nodes(doc: object) -> list[Any] | None:
    if not isinstance(doc, dict) or not isinstance(doc.get("nodes"), list):
        return None
    return list(doc["nodes"])


def _names(node: object, path: str) -> bool:
    return (isinstance(node, dict) and node.get("type") == "file"
            and node.get("file") == path)


def _moved_doc(doc: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    nodes = [{**n, "file": new} if _names(n, old) else n for n in doc["nodes"]]
    return {**doc, "nodes": nodes}


def _put(quoted: str) -> Callable[[re.Match[str]], str]:
    return lambda m: m.group(1) + quoted


def moved_cards(text: str, old: str, new: str) -> str | None:
    """`text` (a canvas) with each file card showing vault path `old` showing `new`; None when
    no card names `old` or `text` is no canvas (module docstring)."""
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    nodes = _nodes(doc)
    if nodes is None or not any(_names(n, old) for n in nodes):
        return None
    assert isinstance(doc, dict)
    want = _moved_doc(doc, old, new)
    for ascii_only in (False, True):  # Obsidian writes non-ASCII as is; others escape it
        member = re.compile(r'("file"\s*:\s*)' + re.escape(json.dumps(old,
                                                                      ensure_ascii=ascii_only)))
        out = member.sub(_put(json.dumps(new, ensure_ascii=ascii_only)), text)
        try:
            if out != text and json.loads(out) == want:
                return out
        except ValueError:
            continue
    return json.dumps(want, ensure_ascii=False, indent="\t")
