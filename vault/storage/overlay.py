"""Read-only sequences and mappings that share an earlier generation's storage.

At 10^6 notes, copying one corpus column costs a reference-count update on every element (a
cache miss each: about 0.1 s a column), so an edit that copied every column cost most of a
second. A `Column` is an earlier tuple (shared, never copied), the rows changed since
(position -> value) and the rows added since; an `Overlay` is an earlier mapping, the keys
changed since and the keys removed since. Both read as the plain tuple or dict they stand
for (same length, items, order and equality), cost O(changed) to derive from the last one,
and fold everything into a plain tuple or dict once the changes reach `COMPACT_SHARE` of the
base (amortised: one copy per that many changed rows).

A `Column` may also drop rows of its base (a removal: vault/shift.py), without copying it:
`Dropped` reads its row q at base position `back(q) = q + |{k : R[k] - k <= q}|` (one bisect
over the removed positions), and the dropped rows count as changes towards the fold.
"""

from __future__ import annotations

import itertools
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, TypeVar, overload

from ..notes.folding import folds
from ..shift import Shift
from .columns import PACKED, ReadOnly, repacked

T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")


class Column(ReadOnly[T]):
    """`base` with the rows at `patch` replaced and `tail` appended (read only)."""

    __slots__ = ("_base", "_n", "_patch", "_tail")

    def __init__(self, base: Sequence[T], patch: dict[int, T], tail: tuple[T, ...]) -> None:
        self._base, self._patch, self._tail, self._n = base, patch, tail, len(base)

    @staticmethod
    def of(prev: Sequence[T], changes: Mapping[int, T], added: Sequence[T],
           removed: Shift | None = None) -> Sequence[T]:
        """`prev` (a tuple, a packed column of storage/columns.py, or a Column) with the rows
        at `removed` (a removal from len(prev) rows) dropped, then the rows at `changes`
        (positions after the drop) replaced and `added` appended: the same object when
        nothing changed, a plain tuple (or a column packed as the base was) once the changes
        and drops fold in."""
        if not changes and not added and not removed:
            return prev
        if isinstance(prev, Column):
            base, gone, patch, tail = prev._base, prev.dropped, prev._patch, list(prev._tail)
        else:
            base = prev if isinstance(prev, (tuple, *PACKED)) else tuple(prev)
            gone, patch, tail = Shift.none(len(base)), {}, []
        if removed:
            if removed.n != len(prev):
                raise ValueError(f"a removal from {removed.n} rows, not {len(prev)}")
            kept = gone.kept
            inner = Shift(tuple(r for r in removed.removed if r < kept), kept)
            gone = gone.then(inner)
            keys = list(patch)
            patch = {q: patch[p] for p, q in zip(keys, inner.forward(keys).tolist(),
                                                 strict=True) if q >= 0}
            out = {r - kept for r in removed.removed if r >= kept}
            tail = [v for k, v in enumerate(tail) if k not in out]
        else:
            patch = dict(patch)
        n = gone.kept
        for i, value in changes.items():
            if i < n:
                patch[i] = value
            else:
                tail[i - n] = value
        tail.extend(added)
        if folds(len(patch) + len(tail) + len(gone.removed), len(base)):
            rows = list(kept_rows(base, gone.removed))
            for i, value in patch.items():
                rows[i] = value
            rows.extend(tail)
            return repacked(base, rows)
        if gone:
            return Dropped(base, gone, patch, tuple(tail))
        return Column(base, patch, tuple(tail))

    def layers(self) -> tuple[Sequence[T], Mapping[int, T], tuple[T, ...]]:
        """(the shared base, the rows changed since by position, the rows added since): row
        q < `dropped.kept` is `patch[q]` or the base's row `dropped.back_one(q)`, row
        `dropped.kept + k` is `tail[k]`."""
        return self._base, self._patch, self._tail

    @property
    def dropped(self) -> Shift:
        """The base rows dropped (none here: `Dropped` drops some)."""
        return Shift.none(self._n)

    def __len__(self) -> int:
        return self._n + len(self._tail)

    @overload
    def __getitem__(self, i: int) -> T: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[T, ...]: ...

    def __getitem__(self, i: int | slice) -> T | tuple[T, ...]:
        if i.__class__ is int and 0 <= i < self._n:  # the hot path: a base row
            patch = self._patch
            return patch[i] if i in patch else self._base[i]
        return super().__getitem__(i)

    def _item(self, i: int) -> T:
        if i < self._n:
            patch = self._patch
            return patch[i] if i in patch else self._base[i]
        return self._tail[i - self._n]

    def __iter__(self) -> Iterator[T]:
        if not self._patch:
            return itertools.chain(self._base, self._tail)
        patch = self._patch
        return itertools.chain((patch.get(i, v) for i, v in enumerate(self._base)),
                               self._tail)


class Dropped(Column[T]):
    """`base` with the rows at `gone.removed` dropped, then the rows at `patch` (positions
    after the drop) replaced and `tail` appended (read only; `Column.of` makes it)."""

    __slots__ = ("_d", "_gone")

    def __init__(self, base: Sequence[T], gone: Shift, patch: dict[int, T],
                 tail: tuple[T, ...]) -> None:
        super().__init__(base, patch, tail)
        self._gone, self._n = gone, gone.kept
        # R[k] - k: the kept rows before the k-th dropped one (vault/shift.py `back`)
        self._d = tuple(r - k for k, r in enumerate(gone.removed))

    @property
    def dropped(self) -> Shift:
        return self._gone

    @overload
    def __getitem__(self, i: int) -> T: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[T, ...]: ...

    def __getitem__(self, i: int | slice) -> T | tuple[T, ...]:
        if i.__class__ is int and 0 <= i < self._n:
            patch = self._patch
            return patch[i] if i in patch else self._base[i + bisect_right(self._d, i)]
        return ReadOnly.__getitem__(self, i)

    def _item(self, i: int) -> T:
        if i < self._n:
            patch = self._patch
            return patch[i] if i in patch else self._base[i + bisect_right(self._d, i)]
        return self._tail[i - self._n]

    def __iter__(self) -> Iterator[T]:
        rows: Iterable[T] = kept_rows(self._base, self._gone.removed)
        if self._patch:
            patch = self._patch
            rows = (patch.get(i, v) for i, v in enumerate(rows))
        return itertools.chain(rows, self._tail)


def kept_rows(rows: Iterable[T], removed: Sequence[int]) -> Iterator[T]:
    """`rows` less those at the ascending positions `removed`, in order (one pass; a tuple
    by its slices, about twice as fast)."""
    if isinstance(rows, tuple):
        ends = [*removed, len(rows)]
        return itertools.chain.from_iterable(
            rows[a + 1 : b] for a, b in zip([-1, *removed], ends, strict=True))
    return _skipping(rows, removed)


def _skipping(rows: Iterable[T], removed: Sequence[int]) -> Iterator[T]:
    it, at = iter(rows), 0
    for r in removed:
        yield from itertools.islice(it, r - at)
        next(it, None)
        at = r + 1
    yield from it


class _Layered(Mapping[K, V]):
    """A base mapping that is never written, under changed keys and removed keys: the lookup
    `Overlay` and `Patch` share."""

    __slots__ = ()
    _base: Mapping[K, V]
    _changes: dict[K, V]
    _removed: AbstractSet[K]

    def __getitem__(self, key: K) -> V:
        if key in self._changes:
            return self._changes[key]
        if key in self._removed:
            raise KeyError(key)
        return self._base[key]

    def __contains__(self, key: object) -> bool:
        return key in self._changes or (key not in self._removed and key in self._base)


class Overlay(_Layered[K, V]):
    """`base` with the keys in `changes` set (new keys after the base's, in their order) and
    the keys in `removed` gone (read only)."""

    __slots__ = ("_base", "_changes", "_len", "_removed")

    def __init__(self, base: Mapping[K, V], changes: dict[K, V], removed: frozenset[K]) -> None:
        self._base, self._changes, self._removed = base, changes, removed
        self._len = (len(base) - sum(1 for k in removed if k in base)
                     + sum(1 for k in changes if k not in base))

    def __iter__(self) -> Iterator[K]:
        removed, changes = self._removed, self._changes
        yield from (k for k in self._base if k not in removed)
        yield from (k for k in changes if k not in self._base)

    def __len__(self) -> int:
        return self._len

    def __repr__(self) -> str:
        return f"Overlay({dict(self)!r})"


class Patch(_Layered[K, V]):
    """A mapping being edited over a base that is never written: what `Overlay` records."""

    def __init__(self, base: Mapping[K, V]) -> None:
        if isinstance(base, Overlay):
            self._base: Mapping[K, V] = base._base
            self._changes: dict[K, V] = dict(base._changes)
            self._removed: set[K] = set(base._removed)
        else:
            self._base, self._changes = base, {}
            self._removed = set()
        self._touched = False

    def __iter__(self) -> Iterator[K]:
        return iter(self.frozen())

    def __len__(self) -> int:
        return len(self.frozen())

    def __setitem__(self, key: K, value: V) -> None:
        self._changes[key] = value
        self._removed.discard(key)
        self._touched = True

    def pop(self, key: K, default: Any = None) -> Any:
        value = self.get(key, default)
        self._changes.pop(key, None)
        if key in self._base:
            self._removed.add(key)
        self._touched = True
        return value

    def frozen(self, original: Mapping[K, V] | None = None) -> Mapping[K, V]:
        """The edited mapping: `original` itself when nothing was set or popped, a plain dict
        once the changes fold in, else an `Overlay` over the shared base."""
        if not self._touched and original is not None:
            return original
        base, changes, removed = self._base, self._changes, frozenset(self._removed)
        if folds(len(changes) + len(removed), len(base)):
            merged = {k: changes.get(k, v) for k, v in base.items() if k not in removed}
            merged.update((k, v) for k, v in changes.items() if k not in base)
            return merged
        return Overlay(base, changes, removed)

