"""A few patched stat rows spliced into the stat cache's columns, without a row per note.

The first process after a change outside rmh maps the stat file of the old key
(stat_store.py), syncs the change (its commits patch a small layer of rows over the mapped
columns: stat_cache.py `patch`) and, to leave the file current for the next process, must
write the columns of the new key. Folding the layer by rebuilding the columns from one
Python row per note (stat_cache.py `_fold`) costs what reading the rows from SQLite costs
(~1.2 s at 3x10^5 notes): the cost the file was made to avoid. Here the columns are copied by
ranges instead:

    new columns = for each folder f in ascending order (the old folders and the layer's):
        f untouched by the layer: its old row range, copied as bytes;
        f touched: its old rows not hidden and its layer rows, merged by name.

Rows stay in (folder, name) order (stat_cache.py `_Table.of`: folders ascend as plain
strings, names within a folder too), so the result is the columns `_Table.of` would build
from the same rows, byte for byte once saved (tests/vault/storage/test_stat_splice.py
compares the files). Python work is O(folders + the touched folders' rows + the layer);
the rest is O(n) bytes copied by numpy.

Only the common layout is spliced: content hashes as 32-byte digests (`Digests`) and paths
that encode as strict UTF-8 without a NUL, before and after; anything else returns None and
the caller keeps its layer (the next process reads the rows, as before).
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from .columns import Digests, Strings, digest_of
from .stat_store import StatColumns

_Piece = tuple[int, int] | list[Sequence[Any]]  # an old row range, or layer rows in order


def _strict(path: str) -> bool:
    try:
        path.encode()
    except UnicodeEncodeError:
        return False
    return "\0" not in path


def _pieces(spans: Mapping[str, tuple[int, int]], paths: Strings, hidden: set[str],
            extra: Mapping[str, Sequence[Any]]) -> tuple[list[_Piece], list[str], list[int]]:
    """The new row order as pieces, the new folders (ascending) and their row counts."""
    by_folder: dict[str, list[Sequence[Any]]] = {}
    for row in extra.values():
        by_folder.setdefault(row[1].rpartition("/")[0], []).append(row)
    touched = set(by_folder) | {p.rpartition("/")[0] for p in hidden}
    pieces: list[_Piece] = []
    names: list[str] = []
    counts: list[int] = []

    def old(a: int, b: int) -> None:
        last = pieces[-1] if pieces else None
        if isinstance(last, tuple) and last[1] == a:
            pieces[-1] = (last[0], b)
        elif b > a:
            pieces.append((a, b))

    for folder in sorted(set(spans) | touched):
        lo, hi = spans.get(folder, (0, 0))
        if folder not in touched:
            old(lo, hi)
            names.append(folder)
            counts.append(hi - lo)
            continue
        merged: list[tuple[str, int, Sequence[Any] | None]] = [
            (p.rpartition("/")[2], k, None)
            for k, p in enumerate(paths.run(lo, hi), lo) if p not in hidden]
        merged.extend((r[1].rpartition("/")[2], -1, r) for r in by_folder.get(folder, ()))
        merged.sort(key=lambda m: m[0])  # names are unique in a folder
        for _, k, new in merged:
            last = pieces[-1] if pieces else None
            if new is None:
                old(k, k + 1)
            elif isinstance(last, list):
                last.append(new)
            else:
                pieces.append([new])
        if merged:
            names.append(folder)
            counts.append(len(merged))
    return pieces, names, counts


def splice(ids: npt.NDArray[np.int64], sizes: npt.NDArray[np.int64],
           mtimes: npt.NDArray[np.int64], inodes: npt.NDArray[np.int64],
           ctimes: npt.NDArray[np.int64], paths: Strings,
           hashes: Sequence[str], spans: Mapping[str, tuple[int, int]], hidden: set[str],
           extra: Mapping[str, Sequence[Any]], digests: Mapping[str, bytes]
           ) -> StatColumns | None:
    """The columns of the rows `ids`..`hashes` (in (folder, name) order, `spans`: folder ->
    row range) without the paths `hidden` and with the rows `extra` (path -> (id, path, size,
    mtime_ns, inode, content_hash, ctime_ns)); `digests`: every resulting folder's digest. None when
    the layout is not the common one (module docstring)."""
    if not isinstance(hashes, Digests) or paths.errors != "strict":
        return None
    if not all(_strict(r[1]) and digest_of(r[5]) is not None for r in extra.values()):
        return None
    pieces, names, counts = _pieces(spans, paths, hidden, extra)
    if any(f not in digests for f in names):
        return None
    buf, off = paths.packed()
    offs = np.frombuffer(off, dtype=np.int64)
    raw = hashes.raw
    nums: list[list[npt.NDArray[np.int64]]] = [[], [], [], [], []]
    parts: list[bytes] = []
    new_off: list[npt.NDArray[np.int64]] = [np.zeros(1, dtype=np.int64)]
    digest_parts: list[bytes] = []
    base = 0
    for piece in pieces:
        if isinstance(piece, tuple):
            a, b = piece
            for col, src in zip(nums, (ids, sizes, mtimes, inodes, ctimes), strict=True):
                col.append(src[a:b])
            parts.append(bytes(buf[offs[a]:offs[b]]))
            new_off.append(offs[a + 1:b + 1] - offs[a] + base)
            base += int(offs[b] - offs[a])
            digest_parts.append(raw[32 * a:32 * b])
            continue
        for j, col in zip((0, 2, 3, 4, 6), nums, strict=True):
            col.append(np.array([r[j] for r in piece], dtype=np.int64))
        encoded = [r[1].encode() for r in piece]
        parts.extend(encoded)
        new_off.append(base + np.cumsum([len(e) for e in encoded], dtype=np.int64))
        base += sum(len(e) for e in encoded)
        digest_parts.extend(bytes.fromhex(r[5]) for r in piece)  # checked by digest_of
    cols = [np.concatenate(c) if c else np.zeros(0, dtype=np.int64) for c in nums]
    ends = np.cumsum(np.array(counts, dtype=np.int64))
    span_arr = np.stack([ends - np.array(counts, dtype=np.int64), ends], axis=1) if counts \
        else np.zeros((0, 2), dtype=np.int64)
    offsets = array("q", np.concatenate(new_off).tobytes())
    return StatColumns(cols[0], cols[1], cols[2], cols[3], cols[4],
                       Strings.over(b"".join(parts), offsets),
                       Digests(b"".join(digest_parts)), tuple(names),
                       span_arr.reshape(-1, 2), tuple(digests[f] for f in names))
