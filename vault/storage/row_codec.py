"""How a note row and its links are written to the index's columns and read back (the index,
storage/index.py, runs the SQL). Strings that repeat across notes (frontmatter keys and short
values, link targets and kinds) are interned as they are read."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

from ..notes.rows import LinkRow, NoteRow

# The columns `encode_note` fills, in its order; `id` is assigned by SQLite.
NOTE_FIELDS = tuple(
    "path title size mtime_ns inode ctime_ns content_hash frontmatter frontmatter_error aliases"
    " tags body".split()
)
NOTE_COLS = "id, " + ", ".join(NOTE_FIELDS)
STAT_COLS = "id, path, size, mtime_ns, inode, content_hash, ctime_ns"
_SHORT = 64  # strings up to this length that repeat across notes are shared (interned)


def _shared(value: Any) -> Any:
    return sys.intern(value) if type(value) is str and len(value) <= _SHORT else value


def _frontmatter(text: str) -> dict[str, Any]:
    """Decoded frontmatter with its keys and short top-level string values interned: at 10^6
    notes the same keys ("speaker", "date") and values (a speaker's name) repeat a million
    times, and one copy each saves about a tenth of a snapshot."""
    if text == "{}":
        return {}
    return {sys.intern(k): _shared(v) for k, v in json.loads(text).items()}


def decode_frontmatter(text: str) -> dict[str, Any]:
    """A note's frontmatter from its stored JSON text, as `decode_note` makes it."""
    return _frontmatter(text)


def decode_aliases(text: str) -> tuple[str, ...]:
    """A note's aliases from their stored JSON text, as `decode_note` makes them."""
    return () if text == "[]" else tuple(json.loads(text))


def decode_link(target: str, heading: str | None, block: str | None, alias: str | None,
                embed: int, kind: str) -> LinkRow:
    """A stored link; its target and kind interned (hubs are linked thousands of times)."""
    return LinkRow(_shared(target), heading, block, alias, bool(embed), sys.intern(kind))


def decode_note(r: Sequence[Any]) -> NoteRow:
    return NoteRow(
        id=r[0],
        path=r[1],
        title=r[2],
        size=r[3],
        mtime_ns=r[4],
        inode=r[5],
        ctime_ns=r[6],
        content_hash=r[7],
        frontmatter=_frontmatter(r[8]),
        frontmatter_error=r[9],
        aliases=tuple(json.loads(r[10])),
        tags=tuple(json.loads(r[11])),
        body=r[12],
    )


def encode_note(row: NoteRow) -> tuple[Any, ...]:
    return (
        row.path,
        row.title,
        row.size,
        row.mtime_ns,
        row.inode,
        row.ctime_ns,
        row.content_hash,
        json.dumps(row.frontmatter, ensure_ascii=False),
        row.frontmatter_error,
        json.dumps(list(row.aliases), ensure_ascii=False),
        json.dumps(list(row.tags), ensure_ascii=False),
        row.body,
    )
