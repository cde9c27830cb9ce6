"""JSON Schemas of what each operation returns (the MCP `outputSchema`, declared in the table).

MCP asks that a tool's `outputSchema` describe an object, and rmh's `structuredContent` is the
result object itself (its compact MCP view where the operation declares one: harness.mcp_views),
or {"items": [...]} for a list result (harness.errors.tool_result), so a
list result's schema is `items_of(...)`. The official MCP client validates every successful
result against these schemas; the tests drive every tool through it. Schemas name the fields
an agent relies on and allow extra ones (new fields are not a breaking change).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Schema = dict[str, Any]

STR: Schema = {"type": "string"}
INT: Schema = {"type": "integer"}
NUM: Schema = {"type": "number"}
BOOL: Schema = {"type": "boolean"}
OBJ: Schema = {"type": "object"}
OPT_STR: Schema = {"type": ["string", "null"]}


def obj(properties: Mapping[str, Schema], *optional: str) -> Schema:
    """An object with `properties`, all required except `optional`; extra fields allowed."""
    return {"type": "object", "properties": dict(properties),
            "required": [name for name in properties if name not in optional]}


def array(item: Schema) -> Schema:
    return {"type": "array", "items": item}


def items_of(item: Schema) -> Schema:
    """The structured form of a list result: {"items": [...]}."""
    return obj({"items": array(item)})


HIT = obj({"note": STR, "score": NUM, "snippet": STR, "title": STR, "date": STR,
           "speaker": STR, "receipt": OBJ}, "title", "date", "speaker", "receipt")
SEARCH = obj({"hits": array(HIT), "stages": OBJ}, "stages")
LINK = obj({"target": STR, "resolved": OPT_STR, "embed": BOOL, "heading": OPT_STR, "kind": STR,
            "attachment": OPT_STR, "block": OPT_STR}, "block")
NOTE = obj({"note": STR, "title": STR, "hash": STR, "text": STR, "frontmatter": OBJ,
            "frontmatter_error": STR, "tags": array(STR), "aliases": array(STR),
            "links": array(OBJ)}, "frontmatter", "frontmatter_error", "tags", "aliases", "links")
LISTING = obj({"what": STR, "items": array(OBJ), "total": INT, "next_cursor": OPT_STR})
WRITTEN = obj({"note": STR, "id": INT, "title": STR, "hash": STR})
MOVED = obj({"note": STR, "old": STR, "rewritten": array(STR),
             "not_rewritten": array(obj({"note": STR, "reason": STR})),
             "replaced": array(STR)}, "replaced")
DELETED = obj({"note": STR, "trash": STR})
CONTEXT = obj({"query": STR, "budget_words": INT, "words": INT, "text": STR,
               "lines": array(OBJ)})
ASK = obj({"answer": STR, "resolved": BOOL, "stop": STR, "notes": array(STR)})
EXEC = obj({"ok": BOOL, "stdout": STR, "stderr": STR, "value": OPT_STR,
            "error": {"type": ["object", "null"]}, "duration_s": NUM, "truncated": BOOL,
            "state_lost": BOOL, "tier": STR, "calls": OBJ})
TRUST = obj({"state": STR, "by": STR, "at": STR, "reason": STR, "current": BOOL,
             "superseded_by": array(STR)}, "reason", "superseded_by")
CORRECTED = obj({"action": STR, "note": STR, "trust": TRUST, "written": array(STR),
                 "current": STR})
WHY = obj({"note": STR, "id": INT, "title": STR, "kind": STR, "sources": array(OBJ),
           "derived": array(STR), "linked_from": array(STR), "used_for": OBJ, "trust": TRUST},
          "trust")
