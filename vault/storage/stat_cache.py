"""The index's stat rows and per-folder digests, kept in memory between syncs.

A full sync compares every folder's listing with `folders` (storage/folders.py), and needs
`rows` for the folders that differ. Reading 10^6 rows and hashing them again took longer than
the scan itself, so the cache is loaded once per state of the database written by others
(`PRAGMA data_version`), and this connection's own committed writes patch it: the rows of
the notes a transaction touched are re-read by id, and only their folders' digests are
computed again (`patch`), so the next no-op sync after an edit costs what a no-op sync costs.

The rows are columns (a dict of 10^6 named tuples was most of a sync's memory): paths
sorted by (folder, name) in one packed buffer, ids and stats as int64 arrays, content
hashes as 32-byte digests; a path's row is found by bisecting its folder's rows (sorted by
name). So a folder's notes are one row range, and `folders` maps a folder to (digest, that
range read as its paths).
A commit's rows go to a small layer over the columns (`_extra` and `_hidden`), folded into
new columns by overlay.py's rule (`folds`); the folders' digests are kept across a fold,
only their ranges move.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, NamedTuple

import numpy as np

from ..notes.folding import folds
from .columns import ReadOnly, Strings, hex_column
from .folders import FolderDigest, digest, digest_packed
from .stat_splice import splice
from .stat_store import StatColumns


class StatRow(NamedTuple):
    """What sync compares against the folder to decide whether a file changed (one per
    note, made when a row is read)."""

    id: int
    path: str
    size: int
    mtime_ns: int
    inode: int
    content_hash: str
    ctime_ns: int  # storage/folders.py: in the identity (folders.RACY: read it again)


def _folder(path: str) -> str:
    return path.rpartition("/")[0]


def _order_key(path: str) -> str:
    """A key whose order is that of (folder, name): no indexed path holds a NUL (the store
    refuses control characters), so NUL sorts a folder before its sub-folders' rows."""
    folder, _, name = path.rpartition("/")
    return f"{folder}\0{name}"


class _Table:
    """Stat rows as columns sorted by (folder, name), and a path -> row lookup."""

    def __init__(self, c: StatColumns) -> None:
        self.ids, self.sizes, self.mtimes, self.inodes = c.ids, c.sizes, c.mtimes, c.inodes
        self.ctimes = c.ctimes
        self.paths, self.hashes = c.paths, c.hashes
        self.spans: dict[str, tuple[int, int]] = dict(zip(  # folder -> its row range
            c.folders, map(tuple, c.spans.tolist()), strict=True))
        self._asked: dict[str, int] = {}  # folder -> finds in it so far
        self._named: dict[str, dict[str, int]] = {}  # folder -> path -> row, once asked often

    @classmethod
    def of(cls, rows: Iterable[Sequence[Any]]) -> _Table:
        """The table of stat rows (id, path, size, mtime_ns, inode, content_hash,
        ctime_ns)."""
        paths: list[str] = []
        nums = array("q")
        hashes: list[str] = []
        for r in rows:
            paths.append(r[1])
            nums.extend((r[0], r[2], r[3], r[4], r[6]))
            hashes.append(r[5])
        if any("\0" in p for p in paths):
            order = sorted(range(len(paths)), key=lambda k: paths[k].rpartition("/")[::2])
        else:
            order = sorted(range(len(paths)), key=lambda k: _order_key(paths[k]))
        perm = np.asarray(order, dtype=np.int64)
        cols = np.frombuffer(nums, dtype=np.int64).reshape(-1, 5)[perm]
        ids, sizes, mtimes, inodes, ctimes = (np.ascontiguousarray(cols[:, j])
                                              for j in range(5))
        del cols, nums, perm
        sorted_hashes = hex_column(hashes[k] for k in order)
        del hashes
        ordered = [paths[k] for k in order]
        del order
        # rows are in (folder, name) order, so their folders ascend as plain strings too (a
        # folder sorts before its sub-folders either way): each folder's run is found by
        # bisection instead of a Python step per row
        folders = [p.rpartition("/")[0] for p in ordered]
        names: list[str] = []
        spans: list[tuple[int, int]] = []
        lo = 0
        while lo < len(folders):
            hi = bisect_right(folders, folders[lo], lo)
            names.append(folders[lo])
            spans.append((lo, hi))
            lo = hi
        return cls(StatColumns(ids, sizes, mtimes, inodes, ctimes, Strings(ordered),
                               sorted_hashes,
                               tuple(names), np.array(spans, dtype=np.int64).reshape(-1, 2),
                               ()))

    def __len__(self) -> int:
        return len(self.paths)

    def find(self, path: str) -> int:
        """The row of `path`, or -1: a bisection of its folder's rows, which are sorted by
        name (no path -> row table: building one cost a process's first write 1.3 s of CPU
        at 10^6 notes, BENCHMARKS.md, session 18), until the folder has been asked about
        more than 64 + its rows / 64 times: then its own table, built once (a sync of one
        changed note in a folder of 10^5 asked each of its notes twice, 17 Python key calls a
        bisection: 6 s of CPU; docs/measurements/session27/NOTES-SHAPES.md)."""
        folder, _, name = path.rpartition("/")
        named = self._named.get(folder)
        if named is not None:
            return named.get(path, -1)
        lo, hi = self.spans.get(folder, (0, 0))
        paths = self.paths
        asked = self._asked[folder] = self._asked.get(folder, 0) + 1
        if asked > 64 + (hi - lo) // 64:
            self._named[folder] = {p: k for k, p in enumerate(paths.run(lo, hi), lo)}
            return self._named[folder].get(path, -1)
        k = lo + bisect_left(range(lo, hi), name, key=lambda j: paths[j].rpartition("/")[2])
        return k if k < hi and paths[k] == path else -1

    def row(self, k: int) -> StatRow:
        return StatRow(int(self.ids[k]), self.paths[k], int(self.sizes[k]),
                       int(self.mtimes[k]), int(self.inodes[k]), self.hashes[k],
                       int(self.ctimes[k]))

    def folders(self, digests: Mapping[str, bytes] | None = None) -> dict[str, FolderDigest]:
        """folder -> (digest, its rows' paths), the digests computed here unless given."""
        out: dict[str, FolderDigest] = {}
        for folder, (lo, hi) in self.spans.items():
            if digests is not None:
                d = digests[folder]
            else:
                d = digest_packed([p.rpartition("/")[2] for p in self.paths.run(lo, hi)],
                                  self.sizes[lo:hi].tobytes() + self.mtimes[lo:hi].tobytes()
                                  + self.inodes[lo:hi].tobytes()
                                  + self.ctimes[lo:hi].tobytes())
            out[folder] = (d, _Span(self.paths, lo, hi))
        return out

    def entries(self, folder: str, hidden: AbstractSet[str]) -> list[_Entry]:
        """(name, path, size, mtime_ns, inode, ctime_ns) of the folder's rows not in
        `hidden`."""
        lo, hi = self.spans.get(folder, (0, 0))
        paths = self.paths
        return [(p.rpartition("/")[2], p, size, mtime, inode, ctime)
                for p, size, mtime, inode, ctime in zip(
                    paths.run(lo, hi), self.sizes[lo:hi].tolist(),
                    self.mtimes[lo:hi].tolist(), self.inodes[lo:hi].tolist(),
                    self.ctimes[lo:hi].tolist(), strict=True)
                if p not in hidden]


_Entry = tuple[str, str, int, int, int, int]


class _Span(ReadOnly[str]):
    """Rows lo..hi of a packed path column, read as a tuple of paths."""

    __slots__ = ("_hi", "_lo", "_paths")

    def __init__(self, paths: Strings, lo: int, hi: int) -> None:
        self._paths, self._lo, self._hi = paths, lo, hi

    def __len__(self) -> int:
        return self._hi - self._lo

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths.run(self._lo, self._hi))

    def _item(self, i: int) -> str:
        return self._paths[self._lo + i]


class _Rows(Mapping[str, StatRow]):
    """path -> StatRow of a cache: its columns under its layer of patched rows."""

    __slots__ = ("_cache",)

    def __init__(self, cache: StatCache) -> None:
        self._cache = cache

    def __getitem__(self, path: str) -> StatRow:
        c = self._cache
        row = c._extra.get(path)
        if row is not None:
            return row
        if path in c._hidden:
            raise KeyError(path)
        k = c._table.find(path) if isinstance(path, str) else -1
        if k < 0:
            raise KeyError(path)
        return c._table.row(k)

    def __contains__(self, path: object) -> bool:
        c = self._cache
        if path in c._extra:
            return True
        if not isinstance(path, str) or path in c._hidden:
            return False
        return c._table.find(path) >= 0

    def same_stats(self, folder: str, names: Sequence[str], stats: Sequence[Sequence[int]]
                   ) -> set[str]:
        """The paths of `folder` named in `names` whose row here has exactly the stats
        (sizes, mtimes, inodes, ctimes: columns aligned with `names`) of the listing: what
        sync would find unchanged one row at a time (`_same_stat`), by one dict of the
        folder's names and four array comparisons. Rows patched in or out since the columns
        were built are left out (the caller asks them one at a time), as is everything when a
        stat does not fit an int64."""
        c = self._cache
        lo, hi = c._table.spans.get(folder, (0, 0))
        if hi == lo or not names:
            return set()
        t = c._table
        prefix = f"{folder}/" if folder else ""
        at = {p[len(prefix):]: k for k, p in enumerate(t.paths.run(lo, hi), lo)}
        rows = np.fromiter((at.get(n, -1) for n in names), dtype=np.int64, count=len(names))
        try:
            got = [np.asarray(col, dtype=np.int64) for col in stats]
        except OverflowError:
            return set()
        found = rows >= 0
        k = np.where(found, rows, lo)
        same = found & (t.sizes[k] == got[0]) & (t.mtimes[k] == got[1])
        same &= (t.inodes[k] == got[2]) & (t.ctimes[k] == got[3])
        out = {prefix + names[j] for j in np.flatnonzero(same).tolist()}
        return out - c._hidden - c._extra.keys() if c._hidden or c._extra else out

    def __iter__(self) -> Iterator[str]:
        c = self._cache
        hidden = c._hidden
        yield from (p for p in c._table.paths if p not in hidden)
        yield from list(c._extra)

    def __len__(self) -> int:
        c = self._cache
        return len(c._table) - len(c._hidden) + len(c._extra)


def same_stats(rows: Mapping[str, StatRow], folder: str, names: Sequence[str],
               stats: Sequence[Sequence[int]]) -> set[str]:
    """`_Rows.same_stats` of a cache's rows; nothing for another mapping (each path is then
    compared one at a time)."""
    return rows.same_stats(folder, names, stats) if isinstance(rows, _Rows) else set()


class StatCache:
    """`rows` (path -> StatRow) and `folders` (folder -> digest and paths) of one state."""

    def __init__(self, version: int, rows: Iterable[Sequence[Any]] = (), *,
                 key: str | None = None, saved: StatColumns | None = None) -> None:
        """The cache of `rows`, or of columns `saved` under `key` (storage/stat_store.py;
        their folder digests are taken as saved). `key`: the stat rows' key when `rows` were
        read in the same read transaction, outside any write (then `columns` may be
        persisted under it)."""
        self.version = version
        self.key = key
        self.from_file = saved is not None  # the file holds these columns (or did: no save)
        self.patched = False  # a commit of this connection changed it since it was read
        self._table = _Table(saved) if saved is not None else _Table.of(rows)
        self._extra: dict[str, StatRow] = {}  # rows patched in since the columns were built
        self._hidden: set[str] = set()  # column rows removed or replaced by `_extra`
        self._by_folder: dict[str, set[str]] = {}  # folder -> its paths in `_extra`
        self.rows: Mapping[str, StatRow] = _Rows(self)
        self.folders: dict[str, FolderDigest] = self._table.folders(
            None if saved is None else dict(zip(saved.folders, saved.digests, strict=True)))

    def settle(self) -> bool:
        """Fold the patched layer into new columns: by rows when it is at least as large as
        them (a build: the fold costs no more than the layer's rows did), else by splicing
        it into copies of the columns (storage/stat_splice.py: O(n) bytes copied, Python work
        only for the touched folders); True when no layer is left."""
        if not (self._extra or self._hidden):
            return True
        if len(self._extra) + len(self._hidden) >= len(self._table):
            self._fold()
            return True
        t = self._table
        cols = splice(t.ids, t.sizes, t.mtimes, t.inodes, t.ctimes, t.paths, t.hashes, t.spans,
                      self._hidden, self._extra,
                      {f: d for f, (d, _) in self.folders.items()})
        if cols is None:
            return False
        self._table = _Table(cols)
        self._extra, self._hidden, self._by_folder = {}, set(), {}
        self.folders = self._table.folders(dict(zip(cols.folders, cols.digests, strict=True)))
        return True

    def columns(self) -> StatColumns | None:
        """The columns (to persist), or None while patched rows lie in a layer over them."""
        if self._extra or self._hidden:
            return None
        t = self._table
        names = tuple(t.spans)
        return StatColumns(t.ids, t.sizes, t.mtimes, t.inodes, t.ctimes, t.paths, t.hashes,
                           names,
                           np.array([t.spans[f] for f in names], dtype=np.int64).reshape(-1, 2),
                           tuple(self.folders[f][0] for f in names))

    def patch(self, gone: Iterable[str], current: Iterable[Sequence[Any]]) -> None:
        """Paths no longer (or no longer at that path) in the index, and the current stat
        rows of every note a committed transaction touched; the touched folders' digests
        are computed again from their rows (columns by range, and the patched layer)."""
        rows, table, extra = self.rows, self._table, self._extra
        self.patched = True
        self.from_file = False  # the file no longer holds these rows (stat_store.py)
        touched: set[str] = set()
        for path in gone:
            if path in rows:
                if extra.pop(path, None) is not None:
                    self._by_folder[_folder(path)].discard(path)
                if table.find(path) >= 0:
                    self._hidden.add(path)
                touched.add(_folder(path))
        for r in current:
            row = StatRow(*r)
            extra[row.path] = row
            if table.find(row.path) >= 0:
                self._hidden.add(row.path)
            touched.add(_folder(row.path))
            self._by_folder.setdefault(_folder(row.path), set()).add(row.path)
        for folder in sorted(touched):
            self.folders.pop(folder, None)
            notes = table.entries(folder, self._hidden)
            notes.extend((p.rpartition("/")[2], p, extra[p].size, extra[p].mtime_ns,
                          extra[p].inode, extra[p].ctime_ns)
                         for p in self._by_folder.get(folder, ()))
            if notes:
                notes.sort()  # names are unique in a folder
                self.folders[folder] = (digest([n[0] for n in notes], [n[2] for n in notes],
                                               [n[3] for n in notes], [n[4] for n in notes],
                                               [n[5] for n in notes]),
                                        tuple(n[1] for n in notes))
        if folds(len(extra) + len(self._hidden), len(table)):
            self._fold()

    def _fold(self) -> None:
        """The patched rows folded into new columns (digests kept, ranges moved)."""
        table, hidden = self._table, self._hidden
        merged = [table.row(k) for k, p in enumerate(table.paths) if p not in hidden]
        merged.extend(self._extra.values())
        self._table = _Table.of(merged)
        self._extra, self._hidden, self._by_folder = {}, set(), {}
        self.folders = self._table.folders({f: d for f, (d, _) in self.folders.items()})
