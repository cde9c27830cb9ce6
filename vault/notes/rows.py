"""A note and its links as the index stores them: the row types that storage fills and reads
and that the notes floor (records, link resolution) consumes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class LinkRow:
    """One link as written in a note (resolution happens over the whole vault, in links.py).
    Slotted: a snapshot holds one per link (millions at 10^6 notes)."""

    target: str
    heading: str | None
    block: str | None
    alias: str | None
    embed: bool
    kind: str


@dataclass(frozen=True, slots=True)
class NoteRow:
    """One indexed note."""

    id: int
    path: str
    title: str
    size: int
    mtime_ns: int
    inode: int
    ctime_ns: int  # storage/folders.py: in the identity; folders.RACY while it may change
    content_hash: str
    frontmatter: dict[str, Any]
    frontmatter_error: str | None
    aliases: tuple[str, ...]
    tags: tuple[str, ...]
    body: str
