"""Per-note values of a corpus remembered beside the index under the corpus's stamp.

A cold process that loaded its corpus from the persisted note columns (storage/note_store.py)
would otherwise decode every note again only to name the retrieval stores: the lexical
store's digest (lexical_store.py `corpus_digest`) and the dense stores' note keys
(dense_store.py `note_keys`) read every title, alias, content hash and frontmatter. Those are
functions of the corpus's columns, and `corpus.stamp` names exactly those columns (a state of
the index; None for a corpus not taken whole from one: an incremental snapshot, a test's
corpus). So the value computed for a stamp is saved as `.rmh/stamped-NAME.npz` (the stamp,
the number of notes and the value; a temporary then a rename; NAME carries the version of
what computes it) and a later corpus with the same stamp reads it back instead of computing
it. Anything else (no stamp, no folder, another stamp or size, a torn or damaged file: zip's
CRC is checked on read) computes the value, and saves it when there is a stamp; never an
error of its own.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from numpy.lib.npyio import NpzFile

from ..storage.corpus import Corpus
from ..storage.fileops import create_temp, drop_temps
from ..storage.saved_arrays import read_npz

VERSION = 2
PREFIX = "stamped-"


def remembered(folder: str | Path | None, corpus: Corpus, name: str,
               compute: Callable[[], npt.NDArray[Any]]) -> npt.NDArray[Any]:
    """`compute()` for `corpus`, or the value saved for its stamp (module docstring)."""
    return remembered_arrays(folder, corpus, name, ("value",),
                             lambda: {"value": compute()})["value"]


def remembered_arrays(folder: str | Path | None, corpus: Corpus, name: str,
                      keys: tuple[str, ...], compute: Callable[[], dict[str, npt.NDArray[Any]]]
                      ) -> dict[str, npt.NDArray[Any]]:
    """`remembered` for a value made of the named arrays `keys` (a saved value with other
    arrays is not used)."""
    stamp = corpus.stamp
    if folder is None or stamp is None:
        return compute()
    path = Path(folder) / f"{PREFIX}{name}.npz"
    def saved(z: NpzFile) -> dict[str, npt.NDArray[Any]] | None:
        if (int(z["version"]) != VERSION or str(z["stamp"]) != stamp
                or int(z["notes"]) != len(corpus)):
            return None
        got = {k[2:]: z[k] for k in z.files if k.startswith("v.")}
        return got if sorted(got) == sorted(keys) else None

    got = read_npz(path, saved)
    if got is not None:
        return got
    value = compute()
    arrays: dict[str, Any] = {"version": np.int64(VERSION), "stamp": np.str_(stamp),
                              "notes": np.int64(len(corpus))}
    arrays.update({f"v.{k}": v for k, v in value.items()})
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with create_temp(tmp) as fh:
            np.savez(fh, **arrays)
        os.replace(tmp, path)
    except OSError:
        drop_temps(tmp)
    return value
