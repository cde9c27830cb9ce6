"""Named numpy arrays in one file, read back memory-mapped and checked.

A store that a new process loads whole (the lexical indexes: ~280 MB at 3x10^5 notes) costs
a copy of every byte when read with `np.load` from an `.npz` (and the zip reader's CRC in
Python chunks). Here the arrays lie 64-byte aligned after a header, and `read` maps the file
(a private, copy-on-write mapping of this process's unnamed copy of it, so another program
truncating the file is no SIGBUS: private_copy.py) and returns arrays over the mapping: the
pages a search touches are the pages read, besides one CRC-32 pass over the payload (~0.08 s
per 280 MB) and the copy (in the kernel; ~0.03 s CPU per 100 MB).

Layout: 8 bytes of the caller's magic, the header's length and a CRC-32 of every byte after
them (u64s, little-endian), the header (JSON, sorted keys, space-padded so the payload starts
64-aligned: the caller's `head`, the `layout` name -> [dtype, offset, shape], the payload's
`size`), then the payload. The bytes are a function of the magic, the head and the
arrays only (no time, no hash order). A write goes to a pid-named temporary, is fsynced and
renamed into place (a reader sees a whole file or the previous one); temporaries of dead
writers are removed by the next write. `read` returns None for anything it cannot trust:
no file, other magic, a CRC or size that does not match, a layout outside the payload.
"""

from __future__ import annotations

import json
import math
import mmap
import zlib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .fileops import drop_dead_temps, replace_whole
from .private_copy import open_private

_HEAD = 24  # magic (8 bytes), the header's length, the CRC
_ALIGN = 64


def write(path: str | Path, magic: bytes, head: Mapping[str, Any],
          arrays: Mapping[str, npt.NDArray[Any]],
          count_op: Callable[[], None] | None = None) -> bool:
    """Persist `arrays` (in the given order) with `head` at `path`; False when the folder
    cannot be written. `count_op` is called after the temporary is written and after the
    rename (the store's fault injection, storage/store.py)."""
    if len(magic) != 8:
        raise ValueError("magic must be 8 bytes")
    parts = {name: np.asarray(a, order="C") for name, a in arrays.items()}
    layout: dict[str, list[Any]] = {}
    at = 0
    for name, a in parts.items():
        if a.dtype.hasobject:
            raise TypeError(f"{name}: object arrays cannot be mapped")
        layout[name] = [a.dtype.str, at, list(a.shape)]
        at += a.nbytes + (-a.nbytes % _ALIGN)
    text = json.dumps({"head": dict(head), "layout": layout, "size": at},
                      sort_keys=True).encode()
    text += b" " * (-(len(text) + _HEAD) % _ALIGN)
    crc = zlib.crc32(text)
    for a in parts.values():
        crc = zlib.crc32(bytes(-a.nbytes % _ALIGN), zlib.crc32(_bytes(a), crc))
    path = Path(path)
    drop_dead_temps(path.parent, f".{path.name}.*.tmp")  # killed writers' temporaries

    def chunks() -> Iterator[bytes | memoryview]:
        yield magic + len(text).to_bytes(8, "little") + crc.to_bytes(8, "little") + text
        for a in parts.values():
            yield _bytes(a)
            yield bytes(-a.nbytes % _ALIGN)

    return replace_whole(path, chunks(), count_op)


def read(path: str | Path, magic: bytes
         ) -> tuple[dict[str, Any], dict[str, npt.NDArray[Any]]] | None:
    """The head and the arrays of the file at `path` (arrays over a private mapping of it),
    or None when it is absent or fails any check (module docstring)."""
    try:
        with open_private(path) as fh:  # SIGBUS-proof: private_copy.py
            mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_COPY)
    except (OSError, ValueError):
        return None
    try:
        return _arrays(mm, magic)
    except (KeyError, TypeError, ValueError, IndexError, UnicodeDecodeError):
        return None


def _arrays(mm: mmap.mmap, magic: bytes
            ) -> tuple[dict[str, Any], dict[str, npt.NDArray[Any]]] | None:
    if len(mm) < _HEAD or mm[:8] != magic:
        return None
    n_head = int.from_bytes(mm[8:16], "little")
    base = _HEAD + n_head
    if base > len(mm) or zlib.crc32(memoryview(mm)[_HEAD:]) != int.from_bytes(mm[16:24],
                                                                            "little"):
        return None
    meta = json.loads(mm[_HEAD:base])
    size = int(meta["size"])
    if len(mm) != base + size:
        return None
    out: dict[str, npt.NDArray[Any]] = {}
    for name, (dtype_str, at, shape) in meta["layout"].items():
        dtype = np.dtype(dtype_str)
        shape = tuple(int(s) for s in shape)
        count = math.prod(shape)
        if dtype.hasobject or at < 0 or at + count * dtype.itemsize > size:
            return None
        if count == 0:
            out[name] = np.zeros(shape, dtype=dtype)
        else:
            out[name] = np.frombuffer(mm, dtype=dtype, count=count,
                                      offset=base + int(at)).reshape(shape)
    return dict(meta["head"]), out


def _bytes(a: npt.NDArray[Any]) -> memoryview:
    return a.reshape(-1).view(np.uint8).data if a.size else memoryview(b"")


