"""The cards of an Obsidian canvas that name a note, and their rewrite when the note moves.

A `.canvas` file is JSON (JSON Canvas 1.0): `{"nodes": [...], "edges": [...]}`; a node with
`"type": "file"` shows the vault file at its `"file"` member (a vault path with its
extension, `"folder/Note.md"`). Obsidian rewrites those members when it renames the file; a
move (`Vault.move`) does the same through its plan (vault/writes.py). A node with `"type":
"text"` holds markdown in its `"text"` member: its links to the moved note are rewritten as a
note's are (`relink`: notes/relinks.py, resolved from the canvas's own path), which Obsidian
does not do (its link index skips canvas text cards: their links would dangle). A file card's
`"subpath"` (`#Heading`, `#^block`) names a part of the file, unchanged by a move; JSON Canvas
has no other member naming a note (edge and group labels are plain text).

The rewrite keeps every other byte: only the string of each file card's `"file"` member
naming the moved note, and of each text card's `"text"` member whose links change, is replaced
where it is written as `json.dumps` writes it (Obsidian's own form); the result is checked by
parsing both texts (exactly those members changed).
Where the text writes a path another way (escapes of its own), the whole file is written
again as Obsidian writes it (tab-indented JSON). A file that is no canvas (not JSON, no
node list) is never changed."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

CANVAS_SUFFIX = ".canvas"
Relink = Callable[[str], str | None]  # a text card's markdown -> it with links rewritten


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


def _card_text(node: object) -> str | None:
    if isinstance(node, dict) and node.get("type") == "text" and isinstance(node.get("text"), str):
        return str(node["text"])
    return None


def _moved_doc(doc: dict[str, Any], old: str, new: str,
               texts: dict[str, str]) -> dict[str, Any]:
    def moved(n: Any) -> Any:
        if _names(n, old):
            return {**n, "file": new}
        card = _card_text(n)
        return {**n, "text": texts[card]} if card in texts else n

    return {**doc, "nodes": [moved(n) for n in doc["nodes"]]}


def _relinked(nodes: list[Any], relink: Relink | None) -> dict[str, str]:
    """Each text card's text whose links `relink` changes -> its new text."""
    texts: dict[str, str] = {}
    for n in nodes:
        card = _card_text(n)
        if relink is None or card is None or card in texts:
            continue
        if (out := relink(card)) is not None and out != card:
            texts[card] = out
    return texts


def _put(quoted: str) -> Callable[[re.Match[str]], str]:
    return lambda m: m.group(1) + quoted


def moved_cards(text: str, old: str, new: str, relink: Relink | None = None) -> str | None:
    """`text` (a canvas) with each file card showing vault path `old` showing `new`, and each
    text card's markdown as `relink` rewrites it (None: unchanged); None when no card changes
    or `text` is no canvas (module docstring)."""
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    nodes = _nodes(doc)
    if nodes is None:
        return None
    texts = _relinked(nodes, relink)
    if not texts and not any(_names(n, old) for n in nodes):
        return None
    assert isinstance(doc, dict)
    want = _moved_doc(doc, old, new, texts)
    members = [("file", old, new), *(("text", a, b) for a, b in sorted(texts.items()))]
    for ascii_only in (False, True):  # Obsidian writes non-ASCII as is; others escape it
        out = text
        for key, was, now in members:
            member = re.compile(f'("{key}"' + r'\s*:\s*)'
                                + re.escape(json.dumps(was, ensure_ascii=ascii_only)))
            out = member.sub(_put(json.dumps(now, ensure_ascii=ascii_only)), out)
        try:
            if out != text and json.loads(out) == want:
                return out
        except ValueError:
            continue
    return json.dumps(want, ensure_ascii=False, indent="\t")
