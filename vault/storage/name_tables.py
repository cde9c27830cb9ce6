"""The resolver's name tables over the saved note columns, kept beside them for later processes.

A process that resolves a name over a snapshot loaded from `.rmh/note-columns.bin` (a link of
a note it re-reads while catching up, storage/catch_up.py; `rmh read TITLE`) builds each of
the resolver's three tables from every note first (notes/name_index.py: ~0.1 s a table at
10^5 notes, ~1 s at 10^6). The first process to need one builds it under
`name_index.stable_hash` and saves it as `.rmh/name-table-NAME.bin` (storage/mapped_arrays.py:
written whole to a temporary and renamed, CRC-checked) with the stamp of the columns and
their number of notes; a later process whose columns have that stamp loads it instead. A
table of another stamp, size or version, a damaged one, or one holding a position outside
the notes is not used: the table is built again (and saved again), never an error of its own.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..notes.name_index import EMPTY, Stored
from . import mapped_arrays

VERSION = 2  # 2: keys are notes/links.py `fold`ed (NFC and NFD one name)
PREFIX = "name-table-"
MAGIC = b"RMHNAMES"
_LOW = 0xFFFFFFFF


def stored(folder: Path, stamp: str, notes: int) -> Callable[[str], Stored]:
    """Where each named table of the columns saved under `stamp` (with `notes` notes) is
    kept (module docstring)."""

    def of(name: str) -> Stored:
        path = folder / f"{PREFIX}{name}.bin"

        def load() -> tuple[array[int], int] | None:
            got = mapped_arrays.read(path, MAGIC)
            if got is None:
                return None
            head, arrays = got
            table, entries = arrays.get("table"), head.get("entries")
            if (head.get("version") != VERSION or head.get("stamp") != stamp
                    or head.get("notes") != notes or table is None or table.ndim != 1
                    or table.dtype != np.int64 or not isinstance(entries, int)):
                return None
            size = table.shape[0]
            words = table[table != EMPTY]
            if (size < 8 or size & (size - 1) or entries != words.size
                    or (words.size and int((words & _LOW).max()) >= notes)):
                return None
            out = array("q")
            out.frombytes(table.tobytes())
            return out, entries

        def save(table: array[int], entries: int) -> None:
            mapped_arrays.write(path, MAGIC, {"version": VERSION, "stamp": stamp,
                                              "notes": notes, "entries": entries},
                                {"table": np.frombuffer(table, dtype=np.int64)})

        return Stored(load, save)

    return of
