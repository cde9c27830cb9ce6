"""Notes as slice text for sub-calls: one note (title, source, date, body) or several in a cap.

Used by the ask loop (harness/ask.py) and rlm_call's slices (harness/rlm_tools.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

DATE_KEYS = ("date", "created", "updated")
_FRONTMATTER = re.compile(r"\A---\r?\n.*?\r?\n---\r?\n?", re.DOTALL)


def render_note(record: Mapping[str, Any], *, max_chars: int | None = None) -> str:
    """A note as slice text: title heading, source and date lines, then the body.

    `record` is a read() result ({"note","title","text","frontmatter"}) or any dict with
    "text" or "body"; frontmatter is dropped from the text (its date and source are shown).
    """
    fm = record.get("frontmatter") or {}
    fm = fm if isinstance(fm, Mapping) else {}
    title = str(record.get("title") or record.get("note") or "untitled")
    lines = [f"## {title}"]
    source = str(record.get("note") or "")
    if fm.get("source"):
        source = f"{source} ({fm['source']})" if source else str(fm["source"])
    if source:
        lines.append(f"source: {source}")
    date = next((str(fm[k]) for k in DATE_KEYS if fm.get(k)), str(record.get("date") or ""))
    if date:
        lines.append(f"date: {date}")
    body = str(record.get("body") or record.get("text") or "")
    body = _FRONTMATTER.sub("", body, count=1).strip()
    if max_chars is not None and len(body) > max_chars:
        body = body[: max(0, max_chars)].rstrip() + " …[truncated]"
    return "\n".join(lines) + "\n\n" + body


def render_notes(records: Sequence[Mapping[str, Any]], max_chars: int) -> str:
    """Several notes in order, separated by blank lines, within `max_chars` in total.

    Every note gets an equal share of the budget; a note shorter than its share passes the
    rest on to the notes after it.
    """
    parts: list[str] = []
    left = max_chars
    for i, record in enumerate(records):
        share = left // (len(records) - i) - 2
        head = render_note({**record, "text": "", "body": ""})
        part = render_note(record, max_chars=max(0, share - len(head) - 16))
        parts.append(part)
        left -= len(part) + 2
    return "\n\n".join(parts)[:max_chars]
