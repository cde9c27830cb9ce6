"""The one content hash of rmh: sha256 hex of a note's UTF-8 bytes.

It is the `hash` a read returns, the `content_hash` the index stores (and sync matches renamed
files by), what `expected_hash` checks before a write, and what the intent journal records.
A `str` is hashed as its UTF-8 encoding, so a text and the bytes of its file hash the same."""

from __future__ import annotations

import hashlib


def content_hash(data: str | bytes) -> str:
    """sha256 hex of `data` (a text: of its UTF-8 bytes)."""
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()
