"""The conjunctive channel's norm sums of a caught-up state, saved so that the next process
catching up to the same state reads them instead of moving them again.

A new process whose index moved on since the saved base loads the base's stores and brings
them up to now through the corpus delta (derived.py `from_base`, storage/catch_up.py). Its
cost follows the change except in one place: the conjunctive channel adds the change of l_u
to S1 and S2 of every note holding a unit whose n_u moved (signals/conjunctive.py `_moved`),
O(those units' postings). A common unit is in many notes, so after 50 added notes of
bench/gen_scale.py the moved units hold 69 % of the index's entries at 10^5 and at 10^6
notes, ~4.5 s of every later process at 10^6 (docs/measurements/session38): paid again by
each new process until a new base is saved, and catch_up.py's rule counts bytes of text, not
this. After the update S1 and S2 are a function of the notes' texts in position order (the
fixed-point sums equal a fresh build's, conjunctive.py), so they are saved by the first
process and read by the later ones, whose catch-up is then O(the change) again:

    .rmh/conjunctive-sums.bin: head {version, key, notes}; arrays s1, s2 (int64, per note)

in storage/mapped_arrays.py's layout (a temporary, fsynced, renamed into place: a reader sees
the old file or the new one, never a torn one; `count_op` is the store's fault seam), with

    key = BLAKE2b-256(VERSION, the base's lexical digest (its texts, the tokenizer's and
                      the stemmer's versions: lexical_store.py), the base's and the new
                      note counts, the base positions removed, each changed position and
                      the length and bytes of the text the channel reads there)

One file, the last writer's. It is written when the update moved at least as many entries
as the state has notes (`worth_saving`: the file holds two sums a note, read back in one
pass; a smaller move costs a later process about what reading the file would). A file of
another key or size, damaged or unreadable, is not used: the process moves the sums itself.
Never an error of its own.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..storage import mapped_arrays
from ..storage.corpus import Corpus, Since
from .signals.conjunctive import ConjunctiveIndex, note_text
from .signals.registry import CONJUNCTIVE, BuildEnv

VERSION = 1
FILE = "conjunctive-sums.bin"
MAGIC = b"RMHCONJS"


def key(digest: str, old: Corpus, corpus: Corpus, since: Since) -> str:
    """The state `corpus` as reached from the base `old` (lexical digest `digest`) through
    `since` (module docstring)."""
    h = hashlib.blake2b(digest_size=32)
    h.update(f"rmh-conj-sums/{VERSION}/{digest}/{len(old)}/{len(corpus)}/".encode())
    h.update(np.asarray(since.removed, dtype="<i8").tobytes())
    for p in sorted(since.changed):
        text = note_text(corpus, p).encode("utf-8", "surrogatepass")
        h.update(f"\x1e{p}/{len(text)}/".encode())
        h.update(text)
    return h.hexdigest()


def moved_entries(before: ConjunctiveIndex, after: ConjunctiveIndex) -> int:
    """The entries of the columns whose n_u differs between the two indexes (the added
    columns included): about what `_moved` read to go from one to the other (a unit whose
    n_u fell with a removal and rose again with an addition is not counted)."""
    n = before.df.size
    moved = np.flatnonzero(after.df[:n] != before.df)
    cols = np.concatenate([moved, np.arange(n, after.df.size, dtype=np.int64)])
    return int(after.postings.column_sizes(cols).sum())


def worth_saving(entries: int, notes: int) -> bool:
    """Whether a later process would move more than it reads back (module docstring)."""
    return entries >= notes > 0


def load(folder: str | Path, want: str, notes: int) -> tuple[np.ndarray, np.ndarray] | None:
    """S1 and S2 saved for `want` over `notes` notes, else None."""
    got = mapped_arrays.read(Path(folder) / FILE, MAGIC)
    if got is None:
        return None
    head, arrays = got
    if head.get("version") != VERSION or head.get("key") != want or head.get(
            "notes") != notes:
        return None
    s1, s2 = arrays.get("s1"), arrays.get("s2")
    if s1 is None or s2 is None or any(a.dtype != np.int64 or a.shape != (notes,)
                                       for a in (s1, s2)):
        return None
    return s1, s2


def save(folder: str | Path, want: str, conj: ConjunctiveIndex,
         count_op: Callable[[], None] | None = None) -> bool:
    """Persist `conj`'s S1 and S2 under `want`; False when the folder cannot be written."""
    return mapped_arrays.write(Path(folder) / FILE, MAGIC, {
        "version": VERSION, "key": want, "notes": int(conj.n_docs)},
        {"s1": conj.s1, "s2": conj.s2}, count_op)


@dataclass(frozen=True)
class Sums:
    """Where a catch-up reads and saves its sums: the vault's `.rmh/` (`folder`), the base's
    lexical digest, the store's fault seam."""

    folder: str
    digest: str
    count_op: Callable[[], None] | None = None

    def update(self, index: ConjunctiveIndex, old: Corpus, corpus: Corpus,
               since: Since) -> ConjunctiveIndex:
        """CONJUNCTIVE.update of `index` (of `old`) to `corpus`, its S1 and S2 read from the
        file when it holds this state's, else moved and saved when `worth_saving`."""
        want = key(self.digest, old, corpus, since)
        got = load(self.folder, want, len(corpus))
        env = BuildEnv()
        if got is not None:
            out = CONJUNCTIVE.update(index, old, corpus, since, env, move=False)
            return replace(out, s1=got[0], s2=got[1])
        out = CONJUNCTIVE.update(index, old, corpus, since, env)
        if worth_saving(moved_entries(index, out), out.n_docs):
            save(self.folder, want, out, self.count_op)
        return out
