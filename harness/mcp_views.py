"""Compact MCP results: what a model needs from a result, and nothing it pays for in vain.

Every character of a tool result is read by the model twice on the wire (the MCP
specification asks for `structuredContent` and its text mirror), so the MCP surface sends a
projection of the operation's full result (declared in the operation table as `mcp_view`;
JSON-RPC and the REPL keep the full form):
- search: per hit the note's path, its score rounded to SCORE_DIGITS digits, the snippet cut
  at a sentence end within SNIPPET_MAX characters, the title only when it is not the file
  name, `rerank` (rounded the same way) for a hit the reranker placed, whose order is by it
  and not by `score`, and date/speaker when the note has them (a date its path already shows
  is not repeated); no internal id, no echo of the query.
  `explain=true` keeps the receipts and stages (numbers rounded the same way);
- ask: the answer, whether it resolved, why it stopped, and the notes the answer used (those
  it cites or whose content it repeats: harness.ask_used; the full answer set, values and
  trace: `ask()` in `exec`);
- read: the note without its internal id and without empty fields.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

SCORE_DIGITS = 4
SNIPPET_MAX = 160  # characters of a hit's snippet on MCP, "…" included
USED_FRACTION = 0.5
MAX_USED = 5
ELLIPSIS = "…"
_SENTENCE_END = re.compile(r"[.!?](?=\s)")


def rounded(value: Any) -> Any:
    """`value` with every float rounded to SCORE_DIGITS digits (dicts and lists walked)."""
    if isinstance(value, float):
        return round(value, SCORE_DIGITS)
    if isinstance(value, Mapping):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [rounded(v) for v in value]
    return value


def sentence_cut(text: str, limit: int = SNIPPET_MAX) -> str:
    """`text` when it fits in `limit`; else cut after the last sentence that ends within
    it (when that keeps at least a third), else at the last word boundary, marked "…"."""
    if len(text) <= limit:
        return text
    room = limit - len(ELLIPSIS)
    ends = [m.end() for m in _SENTENCE_END.finditer(text, 0, room + 1)]
    if ends and ends[-1] >= limit // 3:
        return text[:ends[-1]] + " " + ELLIPSIS if ends[-1] < room else text[:ends[-1]]
    space = text.rfind(" ", 0, room)
    return text[:space if space > 0 else room].rstrip() + ELLIPSIS


def _stem(note: str) -> str:
    name = PurePosixPath(note).name
    return name[:-3] if name.lower().endswith(".md") else name


def search_view(result: Mapping[str, Any]) -> dict[str, Any]:
    hits = []
    for hit in result.get("hits", []):
        out: dict[str, Any] = {"note": hit["note"], "score": round(float(hit["score"]),
                                                                    SCORE_DIGITS)}
        title = hit.get("title")
        if title and title != _stem(hit["note"]):
            out["title"] = title
        if hit.get("rerank") is not None:  # placed by the reranker: the score of its order
            out["rerank"] = round(float(hit["rerank"]), SCORE_DIGITS)
        out["snippet"] = sentence_cut(str(hit.get("snippet", "")))
        for key in ("date", "speaker"):
            if key in hit and not (key == "date" and str(hit[key]) in hit["note"]):
                out[key] = hit[key]  # a date the note's path already shows is not repeated
        if "receipt" in hit:
            out["receipt"] = rounded(hit["receipt"])
        hits.append(out)
    view: dict[str, Any] = {"hits": hits}
    if "learning" in result:  # the log did not record the search (a session's budget spent)
        view["learning"] = result["learning"]
    for key in ("stages", "basis"):
        if key in result:
            view[key] = rounded(result[key])
    return view


def used_notes(result: Mapping[str, Any]) -> list[str]:
    """The notes the answer used (ask's `used`: cited, or their content used); for a result
    without that field, the answer set's notes within USED_FRACTION of the best value."""
    if isinstance(result.get("used"), list):
        return [str(n) for n in result["used"]]
    found = [f for f in result.get("found", []) if isinstance(f, Mapping)]
    if not found:
        return list(result.get("notes", []))[:MAX_USED]
    best = max(float(f.get("value", 0.0)) for f in found)
    keep = [f["note"] for f in found if float(f.get("value", 0.0)) >= USED_FRACTION * best]
    return keep[:MAX_USED]


def ask_view(result: Mapping[str, Any]) -> dict[str, Any]:
    return {"answer": result.get("answer", ""), "resolved": bool(result.get("resolved")),
            "stop": result.get("stop", ""), "notes": used_notes(result)}


def read_view(result: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k != "id" and v not in (None, [], {})}
