"""The snapshot's note columns persisted beside the index, so a new process reads no note row.

At 10^5 notes a cold process spent ~4.5 s CPU decoding every note row and link row from
SQLite into the corpus (and ~60 s at 10^6, extrapolated). `.rmh/note-columns.bin` holds what
`build_snapshot` makes of those rows, one generation's worth: ids, paths, titles, aliases,
bodies, frontmatter and content hashes as packed columns, the resolved edges (positions) and
the link targets (name-key hash -> source id, with a stable hash: link_targets.py). A loaded
store is memory-mapped (from this process's unnamed copy of the file: another program
truncating or rewriting it is no SIGBUS and no changed bytes, private_copy.py): a column
reads as the tuple it stands for and decodes an item when it is read (columns.py `Strings`,
`Decoded`), so a search decodes only what it touches.

The store is valid for exactly one state of the index, named by its *stamp*:

    stamp = BLAKE2b-256(VERSION, RULES (notes/links.py: what the edges were resolved by),
                        the index's generation, and for every folder of notes the digest
                        sync compares its listing with (storage/folders.py: names, sizes,
                        mtimes, inodes), in folder order)

The generation is bumped in the same SQLite transaction as every change of a note or link
row, so within one index a generation names its rows; the folder digests tie the store to
this vault's files (another copy's files have other inodes and mtimes; an index rebuilt from
nothing has another history). Both are in memory after sync: computing the stamp costs no
row read. The file is written whole to a pid-named temporary and renamed into place (the
rename is the commit: a reader sees a whole store or the old one); a dead writer's
temporary is removed by the next save. A store whose version, stamp, size, layout or
checksum (CRC-32 of every byte after the header) does not fit is ignored and the snapshot
reads the rows and saves again: same columns as a fresh build, never an error of its own.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import zlib
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..notes.links import RULES
from .columns import Decoded, Digests, Strings
from .fileops import drop_dead_temps, open_regular, replace_whole
from .private_copy import open_private
from .row_codec import decode_aliases, decode_frontmatter

VERSION = 1
FILE = "note-columns.bin"
MAGIC = b"RMHNOTES"
_HEAD = 16  # magic and the header's length (little-endian u64)
_ALIGN = 64

I64 = npt.NDArray[np.int64]


def stamp(generation: int, folders: Iterable[tuple[str, bytes]]) -> str:
    """The stamp of an index state (module docstring) from its generation and its folders'
    (name, digest) pairs in folder order."""
    h = hashlib.blake2b(digest_size=32)
    h.update(f"rmh-notes/{VERSION}/{RULES}/{generation}".encode())
    for name, digest in folders:
        h.update(b"\x1e" + name.encode("utf-8", "surrogatepass") + b"\x1d" + digest)
    return h.hexdigest()


@dataclass(frozen=True)
class Columns:
    """What a snapshot keeps of the rows, as the store holds it."""

    ids: Sequence[int]
    paths: Sequence[str]
    titles: Sequence[str]
    aliases: Sequence[tuple[str, ...]]
    bodies: Sequence[str]
    frontmatter: Sequence[Any]
    content_hashes: Sequence[str]
    src: npt.NDArray[np.int32]  # edges by position
    dst: npt.NDArray[np.int32]
    target_hashes: I64  # link_targets.LinkTargets
    target_sources: I64


def _texts(items: Iterable[str]) -> tuple[bytes, I64, bool]:
    """UTF-8 of every item in one buffer, the offsets, and whether a lone surrogate needed
    `surrogatepass`."""
    buf, off, lone = bytearray(), array("q", [0]), False
    for s in items:
        try:
            buf += s.encode()
        except UnicodeEncodeError:
            buf += s.encode("utf-8", "surrogatepass")
            lone = True
        off.append(len(buf))
    return bytes(buf), np.frombuffer(off, dtype=np.int64), lone


def save(folder: str | Path, key: str, generation: int, raw: Columns,
         frontmatter_json: Iterable[str], aliases_json: Iterable[str],
         count_op: Callable[[], None] | None = None,
         current: Callable[[], str] | None = None) -> bool:
    """Persist the columns for `key` (frontmatter and aliases given as the index's JSON text);
    False when the folder cannot be written, or when `current` (the index's stamp now) is no
    longer `key` at the rename (fileops.replace_whole `still`: of processes racing to save
    after the index moved on, the store of the older state never lands last, which made the
    next process build again). `count_op` is called after the temporary file is written and
    after the rename (the store's fault injection, storage/store.py)."""
    folder = Path(folder)
    if not os.access(folder, os.W_OK):  # a read-only vault: not worth packing every note
        return False
    parts: dict[str, npt.NDArray[Any]] = {"ids": np.asarray(raw.ids, dtype=np.int64)}
    lone: list[str] = []
    for name, items in (("paths", raw.paths), ("titles", raw.titles), ("bodies", raw.bodies),
                        ("frontmatter", frontmatter_json), ("aliases", aliases_json)):
        buf, off, surrogates = _texts(items)
        parts[name] = np.frombuffer(buf, dtype=np.uint8)
        parts[name + ".off"] = off
        if surrogates:
            lone.append(name)
    hashes = raw.content_hashes
    if isinstance(hashes, Digests):
        parts["hashes"] = np.frombuffer(hashes.raw, dtype=np.uint8)
    else:
        buf, off, surrogates = _texts(hashes)
        parts["hashes.text"], parts["hashes.off"] = np.frombuffer(buf, dtype=np.uint8), off
        if surrogates:
            lone.append("hashes.text")
    parts.update({"src": np.ascontiguousarray(raw.src, dtype=np.int32),
                  "dst": np.ascontiguousarray(raw.dst, dtype=np.int32),
                  "target_hashes": np.ascontiguousarray(raw.target_hashes, dtype=np.int64),
                  "target_sources": np.ascontiguousarray(raw.target_sources, dtype=np.int64)})
    layout: dict[str, list[Any]] = {}
    at = 0
    for name, arr in parts.items():
        layout[name] = [arr.dtype.str, at, int(arr.size)]
        at += -(-arr.nbytes // _ALIGN) * _ALIGN
    body = bytearray(at)
    for name, arr in parts.items():
        lo = layout[name][1]
        body[lo : lo + arr.nbytes] = arr.tobytes()
    crc = zlib.crc32(body)
    head = json.dumps({"version": VERSION, "key": key, "generation": generation,
                       "notes": len(raw.ids), "layout": layout, "lone": lone, "size": at,
                       "crc": crc}, sort_keys=True).encode()
    head += b" " * (-(len(head) + _HEAD) % _ALIGN)
    drop_dead_temps(folder, f".{FILE}.*.tmp")  # killed writers' temporaries
    return replace_whole(folder / FILE, (MAGIC + len(head).to_bytes(8, "little") + head,
                                         body), count_op,
                         None if current is None else lambda: current() == key)


def load(folder: str | Path, key: str) -> Columns | None:
    """The columns saved for `key` in `folder`, memory-mapped; None when there is no store
    for it or it is damaged in any way this can see (module docstring)."""
    try:
        with open_private(Path(folder) / FILE) as fh:  # SIGBUS-proof: private_copy.py
            mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    try:
        return _columns(mm, key)
    except (KeyError, TypeError, ValueError, IndexError, ArithmeticError, RecursionError):
        return None  # a header forged or damaged: Infinity, nesting past the stack


def saved_state(folder: str | Path) -> tuple[str, int, int] | None:
    """(key, generation, notes) of the store in `folder` from its header alone (no checksum:
    `load` checks the bytes), or None when there is none or its header does not read."""
    try:
        with open_regular(Path(folder) / FILE) as fh:
            first = fh.read(_HEAD)
            size = int.from_bytes(first[8:], "little")
            if (len(first) != _HEAD or first[:8] != MAGIC
                    or size > os.fstat(fh.fileno()).st_size - _HEAD):
                return None
            head = json.loads(fh.read(size))
        if head["version"] != VERSION:
            return None
        return str(head["key"]), int(head["generation"]), int(head["notes"])
    except (OSError, ValueError, KeyError, TypeError, ArithmeticError, RecursionError):
        return None


def _columns(mm: mmap.mmap, key: str) -> Columns | None:
    if mm[:8] != MAGIC:
        return None
    n_head = int.from_bytes(mm[8:_HEAD], "little")
    head = json.loads(mm[_HEAD : _HEAD + n_head])
    base = _HEAD + n_head
    if (head["version"] != VERSION or head["key"] != key or len(mm) != base + head["size"]
            or zlib.crc32(memoryview(mm)[base:]) != head["crc"]):
        return None
    layout: dict[str, list[Any]] = head["layout"]
    n = int(head["notes"])

    def arr(name: str) -> npt.NDArray[Any]:
        dtype, at, count = layout[name]
        return np.frombuffer(mm, dtype=np.dtype(dtype), count=count, offset=base + at)

    def texts(name: str) -> Strings:
        off = arr(name + ".off")
        size = layout[name][2]
        if (off.dtype != np.int64 or off.shape != (n + 1,) or off[0] != 0 or off[-1] != size
                or bool(np.any(off[1:] < off[:-1]))):
            raise ValueError(name)
        start = base + layout[name][1]
        return Strings.over(mm, array("q", (off + start).tobytes()),
                            "surrogatepass" if name in head["lone"] else "strict")

    ids = arr("ids")
    if ids.dtype != np.int64 or ids.shape != (n,) or bool(np.any(ids[1:] <= ids[:-1])):
        return None
    if "hashes" in layout:
        raw = arr("hashes")
        if raw.shape != (32 * n,):
            return None
        hashes: Sequence[str] = Digests(raw.tobytes())
    else:
        hashes = texts("hashes.text")
    src, dst, th, ts = arr("src"), arr("dst"), arr("target_hashes"), arr("target_sources")
    if (src.dtype != np.int32 or dst.shape != src.shape or th.shape != ts.shape
            or th.dtype != np.int64 or ts.dtype != np.int64
            or (src.size and (int(src.min()) < 0 or int(dst.min()) < 0
                              or int(src.max()) >= n or int(dst.max()) >= n))):
        return None
    return Columns(ids=tuple(ids.tolist()), paths=texts("paths"), titles=texts("titles"),
                   aliases=Decoded(texts("aliases"), decode_aliases), bodies=texts("bodies"),
                   frontmatter=Decoded(texts("frontmatter"), decode_frontmatter),
                   content_hashes=hashes, src=src, dst=dst, target_hashes=th,
                   target_sources=ts)


