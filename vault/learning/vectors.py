"""Per-note vectors aligned with a corpus's ids: what ranking reads of the learned state.

`NoteVectors.per_note(notes, ids, value, dtype)` gives value(note state) for every id of
`ids`, in that order, and 0 (False) for an id with no learned state. The facade passes one
corpus's `ids` tuple to every search of a generation, so its array form (and whether it
ascends) is cached for the same object; with few learned notes against many ids the lookup
walks the learned notes (O(learned) searchsorted), not every id.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from .asked import recent
from .state import NoteState
from .usage import Asked


class NoteVectors:
    """The id-array cache and the per-note lookup (module docstring)."""

    def __init__(self) -> None:
        self._ids: tuple[Sequence[int], npt.NDArray[np.int64], bool] | None = None

    def id_array(self, ids: Sequence[int]) -> tuple[npt.NDArray[np.int64], bool]:
        """`ids` as an array and whether it ascends; cached for the same object."""
        if self._ids is None or self._ids[0] is not ids:
            keys = np.asarray(ids, dtype=np.int64).ravel()
            self._ids = (ids, keys, bool(np.all(keys[1:] > keys[:-1])))
        return self._ids[1], self._ids[2]

    def per_note(
        self, notes: Mapping[int, NoteState], ids: Sequence[int],
        value: Callable[[NoteState], float], dtype: type[Any],
    ) -> npt.NDArray[Any]:
        """value(note state) per id; 0 (False) for an id with no learned state."""
        out = np.zeros(len(ids), dtype=dtype)
        for k, ns in self._learned_at(notes, ids):
            out[k] = value(ns)
        return out

    def per_id(
        self, notes: Mapping[int, NoteState], ids: Sequence[int],
        value: Callable[[int, NoteState], float], dtype: type[Any],
    ) -> npt.NDArray[Any]:
        """value(note id, its state) per id (`per_note` of a value that reads the id too: the
        gate of a note whose own text holds the query's new words, topic.py v19)."""
        out = np.zeros(len(ids), dtype=dtype)
        for k, ns in self._learned_at(notes, ids):
            out[k] = value(ids[k], ns)
        return out

    def _learned_at(self, notes: Mapping[int, NoteState],
                    ids: Sequence[int]) -> list[tuple[int, NoteState]]:
        """(position in `ids`, learned state) of every id with learned state, by position."""
        keys, ascending = self.id_array(ids)
        if ascending and len(notes) * 4 < len(ids):  # sparse: O(learned notes), not O(notes)
            learned = np.fromiter(notes, dtype=np.int64, count=len(notes))
            at = np.minimum(np.searchsorted(keys, learned), max(len(keys) - 1, 0))
            return [(k, notes[note]) for note, k in zip(learned.tolist(), at.tolist(),
                                                        strict=True)
                    if len(keys) and keys[k] == note]
        got = map(notes.get, ids)
        return [(k, ns) for k, ns in enumerate(got) if ns is not None]

    def asked(self, notes: Mapping[int, NoteState], ids: Sequence[int]) -> Asked:
        """(position in `ids`, q, kept queries newest first) for every note of `ids` with a
        positive learned score and kept queries (asked.py), by position."""
        with_queries = sorted(n for n, ns in notes.items() if ns.q > 0.0 and ns.use_queries)
        if not with_queries:
            return ()
        keys, ascending = self.id_array(ids)
        if ascending:
            at = np.searchsorted(keys, np.asarray(with_queries, dtype=np.int64)).tolist()
            pos = {n: k for n, k in zip(with_queries, at, strict=True)
                   if k < len(keys) and keys[k] == n}
        else:
            wanted = set(with_queries)
            pos = {int(n): k for k, n in enumerate(ids) if n in wanted}
        return tuple(sorted((k, notes[n].q, recent(notes[n].use_queries))
                            for n, k in pos.items()))
