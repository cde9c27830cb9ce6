"""The index's stat rows and per-folder digests, kept in memory between syncs.

A full sync compares every folder's listing with `folders` (storage/folders.py), and needs
`rows` for the folders that differ. Reading 10^6 rows and hashing them again took longer than
the scan itself, so the cache is loaded once per state of the database written by others
(`PRAGMA data_version`), and this connection's own committed writes patch it: the rows of
the notes a transaction touched are re-read by id, and only their folders' digests are
computed again (`patch`), so the next no-op sync after an edit costs what a no-op sync costs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from .folders import expected_digests


class StatRow(NamedTuple):
    """What sync compares against the folder to decide whether a file changed (a named
    tuple: the index holds one per note)."""

    id: int
    path: str
    size: int
    mtime_ns: int
    inode: int
    content_hash: str


def _folder(path: str) -> str:
    return path.rpartition("/")[0]


class StatCache:
    """`rows` (path -> StatRow) and `folders` (folder -> digest and paths) of one state."""

    def __init__(self, version: int, rows: Iterable[Sequence[Any]]) -> None:
        self.version = version
        self.rows = {r[1]: StatRow(*r) for r in rows}
        self.folders = expected_digests((r.path, r.size, r.mtime_ns, r.inode)
                                        for r in self.rows.values())

    def patch(self, gone: Iterable[str], current: Iterable[Sequence[Any]]) -> None:
        """Paths no longer (or no longer at that path) in the index, and the current stat
        rows of every note a committed transaction touched."""
        rows = self.rows
        touched: dict[str, set[str]] = {}  # folder -> its paths that came (or stayed)
        for path in gone:
            if rows.pop(path, None) is not None:
                touched.setdefault(_folder(path), set())
        for r in current:
            row = StatRow(*r)
            rows[row.path] = row
            touched.setdefault(_folder(row.path), set()).add(row.path)
        for folder, paths in sorted(touched.items()):
            paths.update(p for p in self.folders.pop(folder, (b"", ()))[1] if p in rows)
            self.folders.update(expected_digests(
                (rows[p].path, rows[p].size, rows[p].mtime_ns, rows[p].inode) for p in paths))
