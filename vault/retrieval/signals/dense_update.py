"""How a dense index (signals/dense.py) follows its corpus without a rebuild: the overlay
over its base, and compaction, which folds the overlay into a new base.

A `DenseIndex` keeps a base, the chunk rows of the notes of the corpus it was built or last
compacted for ("base notes", in that corpus's order; exact float32 rows or an IVF), and an
`Overlay` saying how the current corpus differs from it:

- `removal`: the removal since the base, one `Shift` over the base notes
  (vault/shift.py), composed with `Shift.then` at each later removal. Base note i is now
  at position removal.forward(i) (-1: removed); positions 0 .. removal.kept - 1 are the kept
  base notes in order, and positions from removal.kept on are notes added since, whose rows
  are all in the delta (storage/corpus.py `CorpusDelta`: added notes come last);
- `stale`: (base notes,) the base notes whose base rows are never scored: removed or changed;
- `delta`: the rows of the changed and added notes, by current position (float32; on the
  IVF layout each with the existing list it joins);
- `cut`: per current note, whether its chunks were cut at `max_units`.

A corpus change (storage/corpus.py `Since`: a removal S of the positions the index last saw,
then new content at `changed`, positions of the new corpus) moves the overlay in two steps:

    removing(S):   G = the removed positions p < removal.kept (base notes; the others were
                   added since), stale'[removal.back(G)] = True, removal' =
                   removal.then(Shift(G, removal.kept)), cut' = cut[S.keep], and the delta
                   rows of removed notes dropped, the others' notes mapped by S.forward;
    replacing(P):  the delta rows of the notes at P replaced by their new rows, and
                   stale'[removal.back(p)] = True for the base notes p < removal.kept in P.

Neither reads or copies a base row: a change costs the changed notes' rows plus
O(base notes + notes + delta rows) numpy (the stale and cut copies; one searchsorted per delta
row and per removed position). A query maps a base note's score to its current position
(`removal.keep` on the exact layout; on the IVF, `live_at`, made at the first query after a
removal: one int32 per base note).

Compaction writes the live base rows (base note i's rows under note removal.forward(i)) and
the delta rows, stably sorted by note, as the new base with an empty overlay: on the exact
layout the rows of every note in chunk order, the matrix a fresh build makes, bit for bit;
on the IVF layout the same int8 codes and scales a fresh build quantises, and the lists
trained again on them are a fresh build's (ivf.py `canonical_order`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt

from ...int_arrays import member
from ...plural import counted
from ...shift import Shift
from .ivf import (
    F32,
    I32,
    I64,
    Codes,
    IvfParams,
    IvfStore,
    MemoryCodes,
    quantize,
    room,
    row_file,
)

Bools = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Rows:
    """Chunk vectors of some notes: note `notes[j]` owns rows `starts[j]:starts[j+1]`;
    `lists[r]` is row r's coarse list on the approximate layout (empty on the exact one)."""

    matrix: F32
    notes: I64
    starts: I64
    lists: I32

    @classmethod
    def of(cls, matrix: F32, row_note: I64, lists: I32) -> Rows:
        """From rows sorted by note (`row_note` ascending)."""
        first = np.flatnonzero(np.diff(row_note, prepend=-1)) if row_note.size else row_note
        return cls(matrix, row_note[first].astype(np.int64), first.astype(np.int64), lists)

    def row_notes(self) -> I64:
        counts = np.diff(np.append(self.starts, self.matrix.shape[0]))
        return np.repeat(self.notes, counts)

    @cached_property
    def by_list(self) -> tuple[I64, I32, I32]:
        """(order, lists, notes): the rows stably sorted by their list (`order`), with each
        one's list and note in that order. Made once per `Rows`, at its first query on the
        approximate layout: a query then finds its probed lists' rows by binary search
        instead of rebuilding every row's note and testing every row's list (0.13 + 0.06 s
        of 0.5 s for 300 queries at 27 % of 20,000 notes' rows changed: NOTES-DENSE42.md)."""
        order = np.argsort(self.lists, kind="stable").astype(np.int64)
        return order, self.lists[order], self.row_notes()[order].astype(np.int32)

    def in_lists(self, probed: I32) -> tuple[I64, I32]:
        """(rows, notes) of the rows whose list is in `probed` (distinct lists), grouped by
        list in `probed`'s order, each list's rows ascending."""
        order, lists, notes = self.by_list
        lo = np.searchsorted(lists, probed, side="left")
        hi = np.searchsorted(lists, probed, side="right")
        size = hi - lo
        total = int(size.sum())
        if not total:
            return np.zeros(0, np.int64), np.zeros(0, np.int32)
        at = np.repeat(lo - (np.cumsum(size) - size), size) + np.arange(total)
        return order[at], notes[at]


def no_rows(dim: int) -> Rows:
    return Rows(np.zeros((0, dim), np.float32), np.zeros(0, np.int64), np.zeros(0, np.int64),
                np.zeros(0, np.int32))


def starts_of(counts: I64) -> I64:
    """The first row of each note, from the rows per note."""
    return np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)[: counts.shape[0]]


@dataclass(frozen=True)
class Overlay:
    """How the current corpus differs from an index's base (module docstring)."""

    removal: Shift  # over the base notes
    stale: Bools  # (base notes,)
    delta: Rows
    cut: Bools  # (notes,)

    @classmethod
    def empty(cls, cut: Bools, dim: int) -> Overlay:
        """No change since a base of `len(cut)` notes."""
        n = int(cut.shape[0])
        return cls(Shift.none(n), np.zeros(n, np.bool_), no_rows(dim), cut)

    @property
    def nbytes(self) -> int:
        d = self.delta
        made = self.__dict__.get("live_at")  # once a query made it
        held = 0 if made is None else int(made.nbytes)
        held += sum(int(a.nbytes) for a in d.__dict__.get("by_list", ()))
        return held + sum(a.nbytes for a in (self.stale, self.cut, d.matrix, d.notes, d.starts,
                                              d.lists))

    @cached_property
    def live_at(self) -> I32:
        """(base notes,) each base note's current position, -1 where its base rows are
        stale (removed or changed): a query maps the rows it scanned with one gather (a
        `removal.forward` of them, a searchsorted each, was 0.75 ms a query at 10^5 notes
        with 1,000 removed, this 0.04 ms). Made once per overlay, at its first query."""
        now = np.cumsum(self.removal.keep, dtype=np.int64) - 1
        return np.where(self.stale, -1, now).astype(np.int32)

    def now(self, base_notes: npt.NDArray[np.integer]) -> I64:
        """The current position of each base note (-1: removed)."""
        return self.removal.forward(base_notes)

    def removing(self, shift: Shift) -> Overlay:
        """This overlay after the removal `shift` of the current positions."""
        if shift.n != self.cut.shape[0]:
            raise ValueError(f"a removal from {counted(shift.n, 'note')}, not the index's "
                             f"{self.cut.shape[0]}")
        if not shift:
            return self
        kept = self.removal.kept
        gone = tuple(p for p in shift.removed if p < kept)  # base notes; the rest were added
        stale = self.stale.copy()
        stale[self.removal.back(np.asarray(gone, dtype=np.int64))] = True
        removal = self.removal.then(Shift(gone, kept))
        now = shift.forward(self.delta.row_notes())
        live = now >= 0
        lists = self.delta.lists[live] if self.delta.lists.shape[0] else self.delta.lists
        return Overlay(removal, stale, Rows.of(self.delta.matrix[live], now[live], lists),
                       self.cut[shift.keep])

    def replacing(self, fresh: I64, counts: I64, cut: Bools, vecs: F32, lists: I32 | None,
                  n: int) -> Overlay:
        """This overlay with new rows `vecs` for the notes at `fresh` (ascending current
        positions, `counts` rows each, cut or not; `lists`: each row's list on the IVF
        layout) in a corpus of `n` notes (added notes included in `fresh`)."""
        old = self.delta.row_notes()
        keep = ~member(old, fresh)
        row_note = np.concatenate((old[keep], np.repeat(fresh, counts)))
        order = np.argsort(row_note, kind="stable")
        rows = np.concatenate((self.delta.matrix[keep], vecs))[order]
        got = self.delta.lists  # empty on the exact layout
        if lists is not None:
            got = np.concatenate((got[keep], lists))[order]
        stale = self.stale.copy()
        stale[self.removal.back(fresh[fresh < self.removal.kept])] = True
        out_cut = np.concatenate((self.cut, np.zeros(n - self.cut.shape[0], np.bool_)))
        out_cut[fresh] = cut
        return Overlay(self.removal, stale, Rows.of(rows, row_note[order], got), out_cut)

    def stale_rows(self, counts: I64) -> int:
        """Base rows not scored, given the base rows per base note."""
        return int(counts[self.stale].sum()) if self.stale.any() else 0


def compacted_exact(matrix: F32, counts: I64, ov: Overlay, approx_above: int,
                    params: IvfParams, scratch: str | None, paths: Sequence[str] | None = None
                    ) -> tuple[F32, I64, IvfStore | None]:
    """(matrix, rows per note, IVF or None) of the new base from an exact base (`counts`
    rows per base note); the IVF when the rows exceed `approx_above` > 0."""
    n, dim = ov.cut.shape[0], matrix.shape[1]
    live = np.repeat(~ov.stale, counts)
    base_note = np.repeat(ov.now(np.arange(ov.stale.shape[0], dtype=np.int64)), counts)
    row_note = np.concatenate((base_note[live], ov.delta.row_notes()))
    order = np.argsort(row_note, kind="stable")
    merged = np.concatenate((matrix[live], ov.delta.matrix))[order]
    out_counts = np.bincount(row_note, minlength=n).astype(np.int64)
    if 0 < approx_above < merged.shape[0]:
        ivf = ivf_of(merged, row_note[order].astype(np.int32), params, scratch, paths)
        return np.zeros((0, dim), np.float32), out_counts, ivf
    return merged, out_counts, None


def compacted_ivf(ivf: IvfStore, ov: Overlay, params: IvfParams, scratch: str | None,
                  block: int, paths: Sequence[str] | None = None
                  ) -> tuple[F32, I64, IvfStore | None]:
    """The same from an IVF base: its live codes and the quantised delta, lists trained
    again (`block` rows copied at a time); an empty exact base when no row is left."""
    n, dim = ov.cut.shape[0], ivf.codes.shape[1]
    live = ~ov.stale[ivf.note]
    note = np.concatenate((ov.now(ivf.note[live]), ov.delta.row_notes())).astype(np.int32)
    if note.shape[0] == 0:  # every note removed: nothing to train lists on
        return np.zeros((0, dim), np.float32), np.zeros(n, np.int64), None
    dcodes, dscale = quantize(ov.delta.matrix)
    codes = _live_codes(ivf.codes, live, dcodes, scratch, block)
    scale = np.concatenate((ivf.scale[live], dscale))
    out = IvfStore.train(codes, scale, note, paths, params)
    return np.zeros((0, dim), np.float32), np.bincount(note, minlength=n).astype(np.int64), out


def _live_codes(base: Codes, live: Bools, extra: npt.NDArray[np.int8], scratch: str | None,
                block: int) -> Codes:
    """The `live` rows of `base` followed by `extra`, `block` rows at a time."""
    out = room(int(live.sum()) + extra.shape[0], base.shape[1], scratch)
    at = 0
    for s in range(0, base.shape[0], block):
        rows = base.span(s, s + block)[live[s : s + block]]
        out.put(at, rows)
        at += rows.shape[0]
    out.put(at, extra)
    return out


def ivf_of(matrix: F32, note: I32, params: IvfParams, scratch: str | None,
           paths: Sequence[str] | None = None) -> IvfStore:
    """An IVF trained on float rows `matrix` (codes in a `scratch` file when one can be made)."""
    quantized, scale = quantize(matrix)
    codes: Codes = MemoryCodes(quantized)
    spill = row_file(matrix.shape[0], matrix.shape[1], scratch)
    if spill is not None:  # the codes go to the file; the array is dropped (no second copy)
        spill.put(0, quantized)
        codes = spill
        del quantized
    return IvfStore.train(codes, scale, note, paths, params)
