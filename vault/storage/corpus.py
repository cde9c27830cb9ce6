"""The read-only snapshot of the index that every retrieval signal reads.

A `Corpus` is built by the facade from the SQLite index whenever the index generation changes.
Position `i` in every column describes the same note; `ids` ascend, so every order derived
from positions is a total order by note id. A column is a tuple, or after an in-place edit a
`storage.overlay.Column` sharing the previous generation's tuple (reads the same: index,
slice, iterate, compare; storage/increment.py), so an edit does not copy 10^6 rows. Edges
are a `storage.columns.Edges` (two int32 arrays read as the sorted tuple of pairs) when
built from the index.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..shift import Shift
from .columns import Graph


@dataclass(frozen=True)
class Since:
    """What changed between the corpus a consumer holds (`length` rows) and a later one:
    `shift` drops the consumer's removed rows (its positions to the later corpus's:
    vault/shift.py); then the rows at `changed` (ascending positions of the later corpus)
    have new content, the added rows (from `shift.kept` on) included; `relinked` (ascending,
    later positions, added rows included) are the rows whose outgoing links may differ.
    A consumer catches up by removing, then replacing: the old content of a changed row
    p < shift.kept is the consumer's row `shift.back_one(p)`."""

    shift: Shift
    changed: list[int]
    relinked: list[int]

    @property
    def removed(self) -> tuple[int, ...]:
        """The consumer's positions that are gone (ascending)."""
        return self.shift.removed


@dataclass(frozen=True)
class CorpusDelta:
    """How a corpus differs from the one of an earlier generation, when only in place.

    The notes at `removed` (ascending positions < base_len of generation `base_generation`)
    are gone; the others keep their order, each moving down by the removed rows before it
    (vault/shift.py), so positions below `kept` are the same notes (same ids) as the base's
    kept rows. The notes at `changed` (ascending positions < kept) have new content;
    positions from `kept` on are notes added since (their ids are above every earlier id).
    `relinked` (ascending) are the positions whose outgoing resolved links may differ (the
    changed notes, and notes whose links now resolve elsewhere because a name came or went);
    new notes are always relinked. `earlier` is the delta of the base corpus, so a consumer
    that last saw any generation in the chain can catch up (`changes_since`).
    A renamed note is a changed one (same position, new path and title).
    Derived structures (retrieval/pipeline.py) update themselves from a delta instead of
    rebuilding, so an edit costs what the changed notes cost, not what the vault costs."""

    base_generation: int
    base_len: int
    changed: tuple[int, ...]
    relinked: tuple[int, ...] = ()
    earlier: CorpusDelta | None = None
    removed: tuple[int, ...] = ()

    @property
    def kept(self) -> int:
        """Rows of the base corpus left in this one (they come first, in order)."""
        return self.base_len - len(self.removed)

    def changes_since(self, generation: int, length: int, total: int) -> Since | None:
        """What changed between the corpus of `generation` (with `length` notes) and this
        delta's corpus (with `total` notes); None when that generation is not in the chain."""
        kept = self.kept
        shift = Shift(self.removed, self.base_len)
        changed, relinked = set(self.changed), set(self.relinked)
        changed.update(range(kept, total))
        relinked.update(range(kept, total))
        if (self.base_generation, self.base_len) != (generation, length):
            if self.earlier is None:
                return None
            older = self.earlier.changes_since(generation, length, self.base_len)
            if older is None:
                return None
            changed.update(shift.forward_kept(older.changed))
            relinked.update(shift.forward_kept(older.relinked))
            # a removed row the consumer never saw (added since) is simply not there
            seen = [p for p in self.removed if p < older.shift.kept]
            shift = older.shift.then(Shift(tuple(seen), older.shift.kept))
        return Since(shift, sorted(changed), sorted(relinked))


MAX_CHAIN = 32  # deltas kept in a chain (older consumers rebuild)


def chain_depth(delta: CorpusDelta | None) -> int:
    """Links in a delta chain."""
    depth = 0
    while delta is not None:
        depth, delta = depth + 1, delta.earlier
    return depth


@dataclass(frozen=True)
class BaseRef:
    """A saved state of the index (storage/note_store.py): the stamp its note columns were
    saved under, its generation and its number of notes."""

    stamp: str
    generation: int
    notes: int


@dataclass(frozen=True)
class Corpus:
    """All notes of one index generation, aligned by position."""

    generation: int
    ids: Sequence[int]
    paths: Sequence[str]
    titles: Sequence[str]
    aliases: Sequence[tuple[str, ...]]
    bodies: Sequence[str]
    frontmatter: Sequence[Mapping[str, Any]]
    content_hashes: Sequence[str]
    edges: Sequence[tuple[int, int]]  # sorted (source position, target position) pairs
    archived: tuple[bool, ...]
    delta: CorpusDelta | None = None  # set by an incremental snapshot (storage/snapshot.py)
    # The state of the index these columns are exactly (storage/note_store.py `stamp`; the
    # archived flags aside), when the corpus was taken whole from one; else None.
    stamp: str | None = None
    # The persisted state this corpus was advanced from, while its delta chain reaches back
    # to it (storage/catch_up.py): a new process's engine prepares on that state's stores.
    base: BaseRef | None = field(default=None, compare=False)

    def __len__(self) -> int:
        return len(self.ids)

    @cached_property
    def graph(self) -> Mapping[int, list[int]]:
        """The undirected link graph by note id (what `neighbors` and activation walk), as
        CSR arrays built from the edge arrays (storage/columns.py `Graph`): the mapping
        `linkgraph.undirected` gives, at a quarter of the memory of a dict of lists."""
        return Graph(self.ids, self.edges)

    def position(self, note_id: int) -> int:
        """Position of a note id; KeyError when the id is not in this corpus."""
        i = bisect_left(self.ids, note_id)
        if i == len(self.ids) or self.ids[i] != note_id:
            raise KeyError(note_id)
        return i


def empty_corpus(generation: int = 0) -> Corpus:
    """A corpus with no notes (a fresh vault)."""
    return Corpus(generation, (), (), (), (), (), (), (), (), ())
