"""Reading rmh's own `.npz` and `.npy` files under `.rmh/`, whatever state they are in.

The stores saved beside the index with numpy (the dense rows and their index, the IVF, the
link edges, the stamped per-note values) are derived: when one cannot be read, its reader
computes the value again and the next save replaces the file. numpy's readers do not fail
with one kind of error on a damaged file: besides OSError, ValueError and zip's BadZipFile, a
flipped byte in a zip's version field raises NotImplementedError, a torn `.npy` header
`tokenize.TokenError`, a damaged deflate stream `zlib.error`, a header naming a huge shape
MemoryError. Each was one more name in each reader's `except`, and each missed one was a
traceback on every command of the vault. So the readers go through these two functions,
which answer None for any failure to read the file.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
from numpy.lib.npyio import NpzFile

from .fileops import open_regular

T = TypeVar("T")


def read_npz(path: str | Path, use: Callable[[NpzFile], T]) -> T | None:
    """`use(z)` over the `.npz` at `path` opened with `np.load` (no pickles), or None when
    the file is absent or reading it (in `use` too: its members are read lazily) fails in
    any way. `use` should only read members and check them."""
    try:
        with open_regular(path) as fh, np.load(fh, allow_pickle=False) as z:
            return use(z)
    except Exception:  # any failure of a derived file's reader: the value is computed again
        return None


def map_npy(path: str | Path) -> npt.NDArray[Any] | None:
    """The `.npy` at `path` memory-mapped read only, or None when it is absent or its header
    does not read (module docstring)."""
    try:
        open_regular(path).close()  # np.load maps only a path, opened plainly: a FIFO waits
        got = np.load(path, mmap_mode="r", allow_pickle=False)
    except Exception:  # as in read_npz
        return None
    return got if isinstance(got, np.ndarray) else None
