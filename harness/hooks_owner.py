"""Which vault the hooks' index was made for, and what of another's may still be recalled.

`.rmh/hooks.sqlite` (harness/hooks_index.py) keeps the notes' text. Another vault's whole
`.rmh` moved into this vault brought that vault's index, and the prompt hook recalled the
other vault's notes for this vault's prompts until the next refresh (README's old Known
limits; STORE17, session 42). The index now names its vault in a table `owner` (the vault
folder's `root_id`, [device, inode]); a refresh of an index another owns (or none: made
before session 42) empties it first. Until then a reader keeps only rows whose note is in
this vault with the very bytes indexed (`Same`: the file's sha256 is the row's hash): an
index of another vault's notes recalls nothing, one of a copy of this vault (a backup put
back, a vault copied elsewhere: a new inode, the same notes) recalls as before."""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import stat
from pathlib import Path

from .hooks_client import root_id

OWNER_SCHEMA = "CREATE TABLE IF NOT EXISTS owner(dev INTEGER NOT NULL, ino INTEGER NOT NULL);"
MAX_CHECKED_BYTES = 64 << 20  # a bigger file is not read to check a row: the row is dropped


def owner(conn: sqlite3.Connection) -> list[int] | None:
    """The `root_id` the index was made for; None for none (an index before session 42)."""
    with contextlib.suppress(sqlite3.OperationalError):  # no such table
        return next((list(map(int, r)) for r in conn.execute("SELECT dev, ino FROM owner")),
                    None)
    return None


def claim(conn: sqlite3.Connection, root: Path) -> None:
    """Inside a refresh's transaction: an index another vault owns (or none) is emptied and
    named this vault's, so the refresh writes every note of this vault again."""
    mine = root_id(root)
    if owner(conn) != mine:
        for table in ("notes", "fts", "owner"):  # in the refresh's transaction
            conn.execute(f"DELETE FROM {table}")  # (executescript would commit it first)
        conn.execute("INSERT INTO owner VALUES (?, ?)", mine or [-1, -1])


class Same:
    """Whether a row of an index this vault does not own names a note of this vault with the
    very bytes indexed (module docstring); `None` from `check` when the index is its own."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @staticmethod
    def check(conn: sqlite3.Connection, root: Path) -> Same | None:
        return None if owner(conn) == root_id(root) else Same(root)

    def __call__(self, path: str, digest: str) -> bool:
        parts = path.split("/")
        if not path or path.startswith("/") or any(p in ("", ".", "..") for p in parts):
            return False
        try:
            fd = os.open(self.root.joinpath(*parts), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
                         | os.O_NONBLOCK)
        except OSError:
            return False
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_CHECKED_BYTES:
                return False
            h = hashlib.sha256()
            while chunk := os.read(fd, 1 << 20):
                h.update(chunk)
        except OSError:
            return False
        finally:
            os.close(fd)
        return h.hexdigest() == digest
