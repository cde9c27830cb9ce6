"""Reading rmh's own `.npz` and `.npy` files under `.rmh/`, whatever state they are in.

The stores saved beside the index with numpy (the dense rows and their index, the IVF, the
link edges, the stamped per-note values) are derived: when one cannot be read, its reader
computes the value again and the next save replaces the file. numpy's readers do not fail
with one kind of error on a damaged file: besides OSError, ValueError and zip's BadZipFile, a
flipped byte in a zip's version field raises the built-in "unsupported feature" error (numpy's
zip reader, not an unfinished part of rmh), a torn `.npy` header
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
from numpy.lib import format as npformat
from numpy.lib.npyio import NpzFile

from .fileops import open_regular
from .private_copy import open_private

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
    """The `.npy` at `path` memory-mapped read only, or None when it is absent, not a regular
    file or its header does not read (module docstring). The file is opened once
    (`open_regular`: never a FIFO or a device), copied to a file of this process's own
    (private_copy.py: another program truncating the `.npy` is no SIGBUS) and the copy
    mapped from its descriptor: `np.load`
    maps only a path, which it opens again, so a file swapped in between the check and its
    open (a FIFO: a wait for a writer forever; another file: its bytes) was what it read."""
    try:
        with open_private(path) as fh:  # SIGBUS-proof: private_copy.py
            version = npformat.read_magic(fh)
            if version == (1, 0):
                shape, fortran, dtype = npformat.read_array_header_1_0(fh)
            elif version == (2, 0):
                shape, fortran, dtype = npformat.read_array_header_2_0(fh)
            else:  # 3.0 (UTF-8 field names): never written for rmh's plain arrays
                return None
            if dtype.hasobject:  # no pickles
                return None
            return np.memmap(fh, dtype=dtype, mode="r", offset=fh.tell(), shape=shape,
                             order="F" if fortran else "C")  # mmap holds its own descriptor
    except Exception:  # as in read_npz
        return None
