"""The guard in front of every write: no silent overwrite, no lost concurrent edit.

A note is replaced only when the caller says so (`overwrite`), and, when the caller names the
hash of the text it read (`expected_hash`, the sha256 hex of the file's bytes that a read
returns as `hash`), only while the file still holds exactly those bytes. An edit made in
Obsidian between an agent's read and its write therefore fails the write (EditConflict,
carrying the current hash) instead of being overwritten. This early check is repeated by the
store itself under the vault's write lock, with the file's identity checked once more right
before the rename (storage/store.py `write_text(expected_hash=...)`): another rmh process
cannot slip in between; an editor that takes no lock only in the last `stat`-to-`rename` gap.
"""

from __future__ import annotations

from ..errors import EditConflict, NoteExists, NoteNotFound
from ..notes.hashing import content_hash
from .store import Store


def current_hash(store: Store, path: str) -> str | None:
    """sha256 hex of the file's bytes now; None when there is no file."""
    try:
        return content_hash(store.read_bytes(path))
    except NoteNotFound:
        return None


def check_write(store: Store, path: str, *, exists: bool, overwrite: bool,
                expected_hash: str | None) -> None:
    """Refuse the write of `path`: EditConflict when `expected_hash` is given and the file's
    bytes differ (or it is gone); NoteExists when the note exists and neither `overwrite` nor
    `expected_hash` was given (naming the hash read is consent to replace those bytes)."""
    if expected_hash is not None:
        now = current_hash(store, path)
        if now != expected_hash:
            raise EditConflict(path, expected_hash, now)
        return
    if exists and not overwrite:
        raise NoteExists(path)


def check_read(path: str, text: str, expected_hash: str | None) -> str:
    """The hash of `text` as just read from `path` (the store keeps the bytes exactly, so it
    is the file's hash); EditConflict when `expected_hash` is given and differs."""
    current = content_hash(text)
    if expected_hash is not None and expected_hash != current:
        raise EditConflict(path, expected_hash, current)
    return current
