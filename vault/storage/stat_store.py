"""The index's stat rows persisted beside it, so a new process builds no Python row to sync.

A full sync compares every folder's listing with the digest of the index's stat rows there
(storage/folders.py, stat_cache.py). Loading those rows from SQLite made six Python objects per
note (id, path, size, mtime, inode, content hash): ~3.6 s of a new process's CPU at 10^6 notes
(docs/measurements/session13/NOTES-B4.md). `.rmh/stat-columns.bin` holds the stat cache's
columns as they are in memory (ids, sizes, mtimes, inodes, ctimes as int64; paths as one
UTF-8 buffer with offsets; content hashes as 32-byte digests; per folder its row range and
digest), written
by storage/mapped_arrays.py (CRC-32 over everything after the magic, pid-named temporary,
fsync, rename); a new process maps it and builds the cache over it in O(folders).

The file is valid for one state of the stat rows, named by its *key*, which SQLite keeps
itself: three triggers on `notes` (storage/schema.py: after every INSERT, DELETE, and UPDATE
of a stat column) bump a counter and fold the row into a running sum (table `stat_key`), in
the same transaction as the change. Every path that changes a stat row goes through them: a
sync of an external edit, a stat-only touch (`update_stat`, which bumps no generation), a
write, a move or a delete through rmh, an erasure, and any other program writing the index
(an older rmh included: the triggers live in the database). A file is written under the key
only for rows provably at that key (index.py `persist_stats`): read in the same read
transaction as the key, outside any write, and unchanged since; or changed since only by
this connection's own commits, with no other connection committing meanwhile (`PRAGMA
data_version`, read after the key). So the process that syncs a change over a loaded file
saves the new key's file itself, its few rows spliced into the mapped columns
(stat_splice.py). A later change moves the key and the file is not used.

The counter alone could repeat in another history of the same index (rows rolled back are
rolled back with it, but an index restored from a backup and changed again, or a new index
in place of a deleted one, may reach the same count). Hence: the sum folds each changed
row's id, size, mtime, inode, path length and last name character and four hex digits of its
content hash into a 31-bit running sum (two histories reaching the same count collide with
probability ~2^-31); installing the triggers (a new or an older index) removes the file; and a
loaded file must agree with the index on `max(id)` and on `SAMPLE` rows spread over it
(`agrees`, one indexed query). Anything else (damage, another version, another key) falls
back to the rows, as the note store does (note_store.py).

The triggers are not a numbered migration (storage/migrations.py): they are created when
missing and change no `user_version`, so an older rmh still opens the index (and bumps the
key on its writes).
"""

from __future__ import annotations

import contextlib
import itertools
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from . import mapped_arrays
from .columns import Digests, Strings

VERSION = 2  # 2: ctimes (storage/folders.py: in a note's identity)
FILE = "stat-columns.bin"
MAGIC = b"RMHSTATS"
SAMPLE = 64  # rows checked against the index when a file is loaded (`agrees`)

@dataclass(frozen=True)
class StatColumns:
    """The stat cache's columns (stat_cache.py `_Table`): rows in (folder, name) order, and
    per folder (ascending) its row range [lo, hi) and its digest."""

    ids: npt.NDArray[np.int64]
    sizes: npt.NDArray[np.int64]
    mtimes: npt.NDArray[np.int64]
    inodes: npt.NDArray[np.int64]
    ctimes: npt.NDArray[np.int64]
    paths: Strings
    hashes: Sequence[str]
    folders: tuple[str, ...]
    spans: npt.NDArray[np.int64]  # (folders, 2)
    digests: tuple[bytes, ...]


I64 = npt.NDArray[np.int64]


def _packed(s: Strings) -> tuple[npt.NDArray[np.uint8], I64]:
    buf, off = s.packed()
    lo, hi = off[0], off[len(off) - 1]
    offsets = np.frombuffer(off, dtype=np.int64) - lo
    return np.frombuffer(buf[lo:hi], dtype=np.uint8), offsets


def save(folder: str | Path, name_key: str, c: StatColumns,
         count_op: Callable[[], None] | None = None) -> bool:
    """Persist `c` as the rows of key `name_key`; False when the folder cannot be written."""
    arrays: dict[str, npt.NDArray[Any]] = {
        "ids": c.ids, "sizes": c.sizes, "mtimes": c.mtimes, "inodes": c.inodes,
        "ctimes": c.ctimes}
    arrays["paths"], arrays["paths.off"] = _packed(c.paths)
    errors = {"paths": c.paths.errors}
    if isinstance(c.hashes, Digests):
        arrays["hashes"] = np.frombuffer(c.hashes.raw, dtype=np.uint8)
    else:
        texts = c.hashes if isinstance(c.hashes, Strings) else Strings(c.hashes)
        arrays["hashes.text"], arrays["hashes.off"] = _packed(texts)
        errors["hashes.text"] = texts.errors
    names = Strings(c.folders)
    arrays["folders"], arrays["folders.off"] = _packed(names)
    errors["folders"] = names.errors
    arrays["spans"] = np.asarray(c.spans, dtype=np.int64).reshape(-1, 2)
    arrays["digests"] = np.frombuffer(b"".join(c.digests), dtype=np.uint8).reshape(-1, 16)
    head = {"version": VERSION, "key": name_key, "notes": len(c.ids), "errors": errors}
    return mapped_arrays.write(Path(folder) / FILE, MAGIC, head, arrays, count_op)


def load(folder: str | Path, name_key: str) -> StatColumns | None:
    """The columns saved for `name_key` in `folder`, or None (absent, damaged, another key or
    version, a layout that does not hold together)."""
    got = mapped_arrays.read(Path(folder) / FILE, MAGIC)
    if got is None:
        return None
    head, a = got
    try:
        return _columns(head, a, name_key)
    except (KeyError, TypeError, ValueError, IndexError, UnicodeDecodeError):
        return None


def _strings(a: dict[str, npt.NDArray[Any]], name: str, count: int, errors: str) -> Strings:
    buf, off = a[name], a[name + ".off"]
    if (buf.dtype != np.uint8 or buf.ndim != 1 or off.dtype != np.int64
            or off.shape != (count + 1,) or off[0] != 0 or off[-1] != buf.size
            or bool(np.any(off[1:] < off[:-1]))):
        raise ValueError(name)
    return Strings.over(buf.tobytes(), array("q", off.tobytes()), errors)


def _columns(head: dict[str, Any], a: dict[str, npt.NDArray[Any]],
             name_key: str) -> StatColumns | None:
    if head.get("version") != VERSION or head.get("key") != name_key:
        return None
    n = int(head["notes"])
    errors: dict[str, str] = head["errors"]
    nums = [a[k] for k in ("ids", "sizes", "mtimes", "inodes", "ctimes")]
    if any(x.dtype != np.int64 or x.shape != (n,) for x in nums):
        return None
    paths = _strings(a, "paths", n, errors["paths"])
    if "hashes" in a:
        raw = a["hashes"]
        if raw.dtype != np.uint8 or raw.shape != (32 * n,):
            return None
        hashes: Sequence[str] = Digests(raw.tobytes())
    else:
        hashes = _strings(a, "hashes.text", n, errors["hashes.text"])
    spans, digests = a["spans"], a["digests"]
    f = spans.shape[0] if spans.ndim == 2 else -1
    if (spans.dtype != np.int64 or spans.shape != (f, 2) or digests.shape != (f, 16)
            or digests.dtype != np.uint8):
        return None
    folders = tuple(_strings(a, "folders", f, errors["folders"]))
    lo, hi = spans[:, 0], spans[:, 1]
    if f and (lo[0] != 0 or hi[-1] != n or bool(np.any(lo >= hi))
              or bool(np.any(lo[1:] != hi[:-1]))
              or any(x >= y for x, y in itertools.pairwise(folders))):
        return None
    if not f and n:
        return None
    ids, sizes, mtimes, inodes, ctimes = nums
    return StatColumns(ids, sizes, mtimes, inodes, ctimes, paths=paths, hashes=hashes,
                       folders=folders, spans=np.array(spans),
                       digests=tuple(bytes(d) for d in digests))


def agrees(c: StatColumns, sample: Callable[[Sequence[int]], tuple[int | None,
                                                                     list[tuple[Any, ...]]]]
           ) -> bool:
    """Whether the index (`sample`: schema.py `stat_sample`) holds `c`'s largest id as its
    largest and, at SAMPLE rows spread evenly over `c`, the same (id, path, size, mtime,
    inode, content hash, ctime) (module docstring: a check against another history of the index,
    not the key's proof)."""
    n = len(c.ids)
    at = sorted({k * (n - 1) // max(1, SAMPLE - 1) for k in range(SAMPLE)}) if n else []
    want = {int(c.ids[k]): (int(c.ids[k]), c.paths[k], int(c.sizes[k]), int(c.mtimes[k]),
                            int(c.inodes[k]), c.hashes[k], int(c.ctimes[k])) for k in at}
    top, rows = sample(sorted(want))
    if top != (int(c.ids.max()) if n else None):
        return False
    return {int(r[0]): r for r in rows} == want


def drop(folder: str | Path) -> None:
    """Remove the file and any temporary of it (erasure, a new index)."""
    folder = Path(folder)
    for path in [folder / FILE, *sorted(folder.glob(f".{FILE}.*.tmp"))]:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)

