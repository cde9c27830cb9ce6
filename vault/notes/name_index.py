"""Compact string-key tables for the resolver: key -> positions, checked against the strings.

At 10^6 notes the resolver's dicts (casefolded path, title and alias -> ids, path <-> id) cost
~600 MiB, mostly their own copies of the key strings. A `KeyIndex` keeps no strings: it is an
open-addressing table of 64-bit words, each the high half of the key's hash and a position,
and a lookup returns every position filed under a hash whose high half matches. That is a
superset: the caller checks each candidate against the real string (read from the corpus
columns it shares), so a collision costs one comparison, never a wrong answer. The table is
probed in Python over an `array` (no per-lookup numpy overhead): a lookup costs about what a
dict lookup does, at 8-16 bytes an entry instead of a dict entry plus its key string.

A later generation adds entries (`plus`) without touching the table an earlier snapshot still
reads: they go to a small `extra` dict keyed by the full hash, which the owner folds into a
rebuilt table by storage/overlay.py's rule (`folds`: amortised O(added)). A removal of notes
(`minus`) does not touch the table either: the table's positions stay those it was built
over, and `gone` lists those removed since (ascending, in the table's positions); a lookup
drops a gone position p and moves a kept one down to p - |{g in gone : g < p}|
(vault/shift.py `forward`), while the `extra` entries are kept in the positions of now.

`key_hash` is Python's str hash: stable within a process, which is all an in-memory table
needs. It decides only where an entry is filed, never an answer or an order (callers sort
what they find), so results do not depend on it (tests force collisions by replacing it).
A table kept beside the index for the next process (`Stored`: storage/snapshot.py keeps the
tables of the saved note columns) is filed under `stable_hash`, the first 8 bytes of the
key's BLAKE2b, the same in every process; each table answers with the hash it was built with.
"""

from __future__ import annotations

import hashlib
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import NamedTuple, TypeVar

import numpy as np

from ..shift import composed, forward_list

K = TypeVar("K")
V = TypeVar("V")

EMPTY = -1  # no entry (high half -1 with position 2^32 - 1, which no note has)
_LOW = 0xFFFFFFFF


key_hash: Callable[[str], int] = hash  # what a key is filed under (module doc)


def stable_hash(key: str) -> int:
    """A key's 64-bit hash, the same in every process (what a stored table is filed under)."""
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8", "surrogatepass"),
                                          digest_size=8).digest(), "little", signed=True)


class Stored(NamedTuple):
    """Where a table is kept for the next process: `load()` gives the saved (table, entries)
    or None, `save(table, entries)` keeps a built one (both filed under `stable_hash`)."""

    load: Callable[[], tuple[array[int], int] | None]
    save: Callable[[array[int], int], None]


class KeyIndex:
    """hash(key) -> positions, a superset (module doc); read only."""

    __slots__ = ("_extra", "_gone", "_hash", "_mask", "_n", "_table")

    def __init__(self, table: array[int], n: int, extra: dict[int, tuple[int, ...]],
                 hasher: Callable[[str], int] | None = None,
                 gone: tuple[int, ...] = ()) -> None:
        self._table, self._mask, self._n, self._extra = table, len(table) - 1, n, extra
        self._hash = key_hash if hasher is None else hasher
        self._gone = gone

    @classmethod
    def build(cls, entries: Iterable[tuple[str, int]],
              hasher: Callable[[str], int] | None = None) -> KeyIndex:
        """A table of (key, position) entries (a position may be filed under several keys),
        filed under `hasher` (default `key_hash`)."""
        h = key_hash if hasher is None else hasher
        hashes, positions = array("q"), array("q")
        for key, pos in entries:
            hashes.append(h(key))
            positions.append(pos)
        n = len(hashes)
        size = 8
        while size < n * 2:  # load <= 1/2: a lookup probes ~2 slots
            size *= 2
        return cls(_placed(hashes, positions, size), n, {}, h)


    def __len__(self) -> int:
        """Entries in the table and in `extra`."""
        return self._n + self.extra

    @property
    def extra(self) -> int:
        return sum(len(v) for v in self._extra.values())

    @property
    def dropped(self) -> int:
        """Positions of the table removed since it was built (`minus`)."""
        return len(self._gone)

    def positions(self, key: str) -> list[int]:
        """Every position filed under a hash like `key`'s (unsorted; may repeat)."""
        h = self._hash(key)
        table, mask = self._table, self._mask
        lo = (h >> 32) << 32  # the words of this high half: lo + position
        hi, slot, out = lo + _LOW, h & mask, []
        while (word := table[slot]) != -1:  # EMPTY (a literal: the hottest loop of a build)
            if lo <= word < hi:
                out.append(word - lo)
            slot = (slot + 1) & mask
        if self._gone and out:
            out = forward_list(out, self._gone)
        if self._extra:
            out.extend(self._extra.get(h, ()))
        return out

    def plus(self, entries: Iterable[tuple[str, int]]) -> KeyIndex:
        """These entries added (the table is shared with this one, `extra` copied)."""
        extra: dict[int, tuple[int, ...]] = {}
        for key, pos in entries:
            h = self._hash(key)
            extra[h] = (*extra.get(h, self._extra.get(h, ())), pos)
        if not extra:
            return self
        return KeyIndex(self._table, self._n, {**self._extra, **extra}, self._hash, self._gone)

    def minus(self, removed: Sequence[int]) -> KeyIndex:
        """The positions at `removed` (ascending, positions of now) gone, every later one
        moved down (module doc); the table is shared, `extra` remapped (O(extra))."""
        if not removed:
            return self
        extra = _extra_minus(self._extra, removed)
        return KeyIndex(self._table, self._n, extra, self._hash, composed(self._gone, removed))

    def nbytes(self) -> int:
        """Bytes of the table (what it costs beyond the columns it indexes)."""
        return self._table.itemsize * len(self._table)


class LazyKeyIndex(KeyIndex):
    """A `KeyIndex` of `entries()`, built when it is first read: a cold process that loads
    its corpus from the persisted note columns (storage/note_store.py) and only searches
    never builds the resolver's tables (O(notes) each). Entries added before then (`plus`:
    a process catching up from a saved state, storage/catch_up.py) are kept aside and added
    when it is built, as `plus` on the built table would have. With `stored`, the table is
    loaded from where an earlier process kept it, or built under `stable_hash` and kept."""

    __slots__ = ("_added", "_entries", "_stored")

    def __init__(self, entries: Callable[[], Iterable[tuple[str, int]]],
                 added: tuple[tuple[str, int], ...] = (), stored: Stored | None = None,
                 gone: tuple[int, ...] = ()) -> None:
        self._entries: Callable[[], Iterable[tuple[str, int]]] | None = entries
        self._added, self._stored = added, stored
        self._gone = gone  # of the entries' positions; `added` are in the positions of now

    def _build(self) -> None:
        if self._entries is not None:
            stored, got = self._stored, None
            if stored is not None and (saved := stored.load()) is not None:
                got = KeyIndex(saved[0], saved[1], {}, stable_hash)
            elif stored is not None:
                got = KeyIndex.build(self._entries(), stable_hash)
                stored.save(got._table, got._n)
            got = got or KeyIndex.build(self._entries())
            built = KeyIndex(got._table, got._n, {}, got._hash, self._gone).plus(self._added)
            self._table, self._mask, self._n = built._table, built._mask, built._n
            self._extra, self._hash, self._gone = built._extra, built._hash, built._gone
            self._entries, self._added, self._stored = None, (), None

    def __len__(self) -> int:
        self._build()
        return super().__len__()

    @property
    def extra(self) -> int:
        if self._entries is not None:
            return len(self._added)
        return super().extra

    def positions(self, key: str) -> list[int]:
        self._build()
        return super().positions(key)

    def plus(self, entries: Iterable[tuple[str, int]]) -> KeyIndex:
        if self._entries is not None:
            added = tuple(entries)
            return (LazyKeyIndex(self._entries, self._added + added, self._stored, self._gone)
                    if added else self)
        return super().plus(entries)

    def minus(self, removed: Sequence[int]) -> KeyIndex:
        if self._entries is not None and removed:
            moved = forward_list((p for _, p in self._added), removed, keep_gone=True)
            added = tuple((k, q) for (k, _), q in zip(self._added, moved, strict=True)
                          if q >= 0)
            return LazyKeyIndex(self._entries, added, self._stored,
                                composed(self._gone, removed))
        return super().minus(removed)

    def nbytes(self) -> int:
        self._build()
        return super().nbytes()


def _extra_minus(extra: dict[int, tuple[int, ...]],
                 removed: Sequence[int]) -> dict[int, tuple[int, ...]]:
    """`extra` (positions of now) with the `removed` positions dropped and the rest moved."""
    out: dict[int, tuple[int, ...]] = {}
    for h, ps in extra.items():
        if kept := tuple(forward_list(ps, removed)):
            out[h] = kept
    return out


def _placed(hashes: array[int], positions: array[int], size: int) -> array[int]:
    """The linear-probing table of these entries, placed in rounds (numpy): in round k every
    entry still out tries its home slot + k, the first of several wanting one slot gets it.
    Each slot an entry passed was taken when it did, so a probe from home finds it."""
    table = np.full(size, EMPTY, dtype=np.int64)
    if len(hashes):
        h = np.frombuffer(hashes, dtype=np.int64)
        words = (h & ~_LOW) | np.frombuffer(positions, dtype=np.int64)  # high half, position
        home, out, k = h & (size - 1), np.arange(len(h)), 0
        while out.size:
            slots = (home[out] + k) & (size - 1)
            free = table[slots] == EMPTY
            taken, first = np.unique(slots[free], return_index=True)
            table[taken] = words[out[free][first]]
            keep = np.ones(out.size, dtype=bool)
            keep[np.flatnonzero(free)[first]] = False
            out, k = out[keep], k + 1
    placed = array("q")
    placed.frombytes(table.tobytes())
    return placed


class Lookup(Mapping[K, V]):
    """A read-only mapping given by a lookup (None: absent) and a way to list its keys. Keys
    may repeat in the listing (the first counts); iterating or sizing costs a pass over all
    of them, for tests and tools: the resolver itself only looks up."""

    __slots__ = ("_get", "_keys")

    def __init__(self, get: Callable[[K], V | None], keys: Callable[[], Iterable[K]]) -> None:
        self._get, self._keys = get, keys

    def __getitem__(self, key: K) -> V:
        value = self._get(key)
        if value is None:
            raise KeyError(key)
        return value

    def __iter__(self) -> Iterator[K]:
        return iter(dict.fromkeys(self._keys()))

    def __len__(self) -> int:
        return sum(1 for _ in self)


class IdPaths(Mapping[int, str]):
    """Note id -> path over the ascending `ids` column and its `paths` column (no table)."""

    __slots__ = ("_ids", "_paths")

    def __init__(self, ids: Sequence[int], paths: Sequence[str]) -> None:
        self._ids, self._paths = ids, paths

    def __getitem__(self, note_id: int) -> str:
        ids = self._ids
        i = bisect_left(ids, note_id)
        if i == len(ids) or ids[i] != note_id:
            raise KeyError(note_id)
        return self._paths[i]

    def __contains__(self, note_id: object) -> bool:
        return isinstance(note_id, int) and self.get(note_id) is not None

    def __iter__(self) -> Iterator[int]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)
