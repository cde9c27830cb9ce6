"""The resolved link edges of a snapshot persisted beside the index, so a new process does not
resolve every wiki link of the vault again (half of a cold search's CPU at 5,000 linked notes).

A snapshot's edges (snapshot.py) are a function of the resolver's inputs, every note's id,
path and aliases in position order, and of every raw link row with its source id. The store is
valid for exactly those inputs, named by

    digest = BLAKE2b-256(VERSION, RULES (notes/links.py), for each note: id, path, aliases;
                         for each link in (source id, text) order: source id and its fields)

which the snapshot computes while it reads the links it reads anyway (for the link targets),
instead of resolving them. `.rmh/link-edges.npz` holds the digest and the edges as two int64
arrays of source and target ids; it is written to a temporary name and renamed into place, so
a reader sees a whole store or none. `load` returns the arrays only when the digest matches and
they are whole: they are the ids a resolving pass gives, so the corpus equals a fresh build's
(tests/vault/storage/test_edge_store.py). Any other store is ignored; the snapshot resolves and
saves. It holds note ids only, no text.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from numpy.lib.npyio import NpzFile

from ..notes.links import RULES
from ..notes.rows import LinkRow
from .fileops import create_temp, drop_temps
from .saved_arrays import read_npz

VERSION = 1
FILE = "link-edges.npz"

I64 = npt.NDArray[np.int64]


class Digest:
    """The store's name (module docstring), fed the notes first, then every link in order."""

    def __init__(self, ids: Sequence[int], paths: Sequence[str],
                 aliases: Sequence[Sequence[str]]) -> None:
        self._h = hashlib.blake2b(digest_size=32)
        self._h.update(f"rmh-edges/{VERSION}/{RULES}/{len(ids)}".encode())
        for i, p, a in zip(ids, paths, aliases, strict=True):
            names = "\x1f".join(a)
            self._h.update(f"\x1e{i}\x1d{p}\x1d{names}".encode("utf-8", "surrogatepass"))

    def link(self, src: int, ln: LinkRow) -> None:
        self._h.update(f"\x1c{src}\x1d{ln.kind}\x1d{int(ln.embed)}\x1d{ln.target}\x1d"
                       f"{ln.heading}\x1d{ln.block}\x1d{ln.alias}".encode("utf-8",
                                                                        "surrogatepass"))

    def hexdigest(self) -> str:
        return self._h.hexdigest()


def load(folder: str | Path, digest: str) -> tuple[I64, I64] | None:
    """(source ids, target ids) from the store in `folder` when saved for `digest`."""
    def saved(z: NpzFile) -> tuple[npt.NDArray[Any], npt.NDArray[Any]] | None:
        if int(z["version"]) != VERSION or str(z["digest"]) != digest:
            return None
        return z["src"], z["dst"]

    got = read_npz(Path(folder) / FILE, saved)
    if got is None:
        return None
    src, dst = got
    if (src.dtype != np.int64 or dst.dtype != np.int64 or src.ndim != 1
            or src.shape != dst.shape):
        return None
    return src, dst


def save(folder: str | Path, digest: str, src: I64, dst: I64) -> bool:
    """Persist the edges; False when the folder cannot be written."""
    folder = Path(folder)
    tmp = folder / f".{FILE}.{os.getpid()}.tmp"
    try:
        with create_temp(tmp) as fh:
            np.savez(fh, version=np.int64(VERSION), digest=np.str_(digest),
                     src=np.ascontiguousarray(src, dtype=np.int64),
                     dst=np.ascontiguousarray(dst, dtype=np.int64))
        os.replace(tmp, folder / FILE)
    except OSError:
        drop_temps(tmp)
        return False
    return True
