"""Compact read-only columns: strings in one buffer, edges and adjacency in integer arrays.

At 10^6 notes a tuple of strings costs 8 bytes a slot plus 49 bytes of object header per
string, and a tuple of (source, target) pairs about 70 bytes a link. These columns read as
the tuples they stand for (same length, items, slices, iteration, equality) and hold the
data packed: `Strings` keeps the UTF-8 of every item in one `bytes` with int64 offsets
(an item is decoded when read), `Edges` keeps two int32 arrays (`src`, `dst`) that array
consumers take as they are (retrieval/signals/graph.py `adjacency`), and `Graph` is the
undirected adjacency by note id in CSR form (same neighbours, same order as
`linkgraph.undirected`). `ReadOnly` is what every such column (here, in overlay.py and in
stat_cache.py) shares: indexing, equality with any sequence, no hash, the repr.
"""

from __future__ import annotations

import mmap
from abc import abstractmethod
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar, overload

import numpy as np
import numpy.typing as npt

T = TypeVar("T")

_BLOCK = 1 << 16  # items turned into Python objects at a time when iterating


class ReadOnly(Sequence[T]):
    """What every read-only column here and in overlay.py / stat_cache.py shares: it reads
    as the tuple it stands for. A subclass gives `__len__` and `_item(i)` for 0 <= i < len
    (and may answer the common case, a non-negative int, before calling this `__getitem__`);
    indexing (negative, slices, bounds), equality with any sequence, no hash and the repr
    come from here."""

    __slots__ = ()

    @abstractmethod
    def _item(self, i: int) -> T:
        """Item `i`, for 0 <= i < len(self)."""

    @overload
    def __getitem__(self, i: int) -> T: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[T, ...]: ...

    def __getitem__(self, i: int | slice) -> T | tuple[T, ...]:
        if isinstance(i, slice):
            return tuple(self[k] for k in range(*i.indices(len(self))))
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        return self._item(i)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({tuple(self)!r})"


class Strings(ReadOnly[str]):
    """A tuple of str packed as UTF-8 with int64 offsets (lone surrogates pass through)."""

    __slots__ = ("_buf", "_errors", "_off")

    def __init__(self, items: Iterable[str] = ()) -> None:
        buf = bytearray()
        off = array("q", [0])
        errors = "strict"
        for s in items:
            try:
                buf += s.encode()
            except UnicodeEncodeError:
                buf += s.encode("utf-8", "surrogatepass")
                errors = "surrogatepass"
            off.append(len(buf))
        self._buf: bytes | mmap.mmap = bytes(buf)
        self._off = off  # an array, not numpy: reading two offsets is the hot path
        self._errors = errors

    @classmethod
    def over(cls, buf: bytes | mmap.mmap, off: array[int], errors: str = "strict") -> Strings:
        """The strings at `buf[off[i]:off[i + 1]]` (a memory-mapped store's buffer: an item
        is read from it when asked; storage/note_store.py), `off` ascending."""
        out = cls.__new__(cls)
        out._buf, out._off, out._errors = buf, off, errors
        return out

    def __len__(self) -> int:
        return len(self._off) - 1

    @property
    def errors(self) -> str:
        """How items decode: "strict", or "surrogatepass" when one holds a lone surrogate."""
        return self._errors

    def packed(self) -> tuple[bytes | mmap.mmap, array[int]]:
        """The buffer and the offsets (item i is `buf[off[i]:off[i + 1]]`), as held."""
        return self._buf, self._off

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[str, ...]: ...

    def __getitem__(self, i: int | slice) -> str | tuple[str, ...]:
        if i.__class__ is int and i >= 0:  # the hot path: no bounds check of our own
            off = self._off  # off[i + 1] raises IndexError past the end
            return self._buf[off[i] : off[i + 1]].decode("utf-8", self._errors)
        return super().__getitem__(i)

    def _item(self, i: int) -> str:
        off = self._off
        return self._buf[off[i] : off[i + 1]].decode("utf-8", self._errors)

    def __iter__(self) -> Iterator[str]:
        for lo in range(0, len(self), _BLOCK):
            yield from self.run(lo, min(lo + _BLOCK, len(self)))

    def run(self, lo: int, hi: int) -> list[str]:
        """Items lo..hi (0 <= lo <= hi <= len) decoded at once (ASCII: one decode, then
        slices of it)."""
        off = self._off
        a = off[lo]
        chunk = self._buf[a : off[hi]]
        if chunk.isascii():
            text = chunk.decode("ascii")
            return [text[off[k] - a : off[k + 1] - a] for k in range(lo, hi)]
        return [chunk[off[k] - a : off[k + 1] - a].decode("utf-8", self._errors)
                for k in range(lo, hi)]



    def containing(self, needles: Iterable[bytes]) -> list[int]:
        """Positions of the items whose UTF-8 may contain one of `needles`, ascending: a
        superset (a match across two items' boundary counts for the first), found by
        searching the buffer, not by decoding items."""
        off, buf, out = self._off, self._buf, set()
        end = off[len(off) - 1]
        for needle in needles:
            at = buf.find(needle, off[0], end)
            while at >= 0:
                p = bisect_right(off, at) - 1
                out.add(p)
                at = buf.find(needle, off[p + 1], end)
        return sorted(out)


class Edges(ReadOnly[tuple[int, int]]):
    """Sorted (source position, target position) pairs as two int32 arrays (read only)."""

    __slots__ = ("dst", "src")

    def __init__(self, src: npt.ArrayLike, dst: npt.ArrayLike) -> None:
        self.src: npt.NDArray[np.int32] = np.ascontiguousarray(src, dtype=np.int32)
        self.dst: npt.NDArray[np.int32] = np.ascontiguousarray(dst, dtype=np.int32)
        if self.src.shape != self.dst.shape:
            raise ValueError("src and dst differ in length")

    @classmethod
    def of(cls, pairs: Iterable[tuple[int, int]]) -> Edges:
        src, dst = array("i"), array("i")
        for a, b in pairs:
            src.append(a)
            dst.append(b)
        return cls(np.frombuffer(src, dtype=np.int32), np.frombuffer(dst, dtype=np.int32))

    def __len__(self) -> int:
        return len(self.src)

    @overload
    def __getitem__(self, i: int) -> tuple[int, int]: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[tuple[int, int], ...]: ...

    def __getitem__(self, i: int | slice) -> tuple[int, int] | tuple[tuple[int, int], ...]:
        if isinstance(i, slice):  # one numpy slice, not an item at a time
            return tuple(zip(self.src[i].tolist(), self.dst[i].tolist(), strict=True))
        return super().__getitem__(i)

    def _item(self, i: int) -> tuple[int, int]:
        return int(self.src[i]), int(self.dst[i])

    def __iter__(self) -> Iterator[tuple[int, int]]:
        src, dst = self.src, self.dst
        for lo in range(0, len(src), _BLOCK):  # blocks: no 10^6-int lists at once
            yield from zip(src[lo : lo + _BLOCK].tolist(), dst[lo : lo + _BLOCK].tolist(),
                           strict=True)

    def sources_of(self, target: int) -> list[int]:
        """Source positions of the pairs to `target`, ascending."""
        return self.src[self.dst == target].tolist()  # type: ignore[no-any-return]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Edges):
            return bool(np.array_equal(self.src, other.src)
                        and np.array_equal(self.dst, other.dst))
        return super().__eq__(other)

    def span(self, p: int) -> tuple[int, int]:
        """The index range of source position `p`'s pairs. The needles are int32 like
        `src`: Python ints would make numpy cast all of `src` to int64 first, ~3 ms a call at
        10^6 notes, paid per re-resolved source on every edit (BENCHMARKS.md)."""
        bounds = np.array((p, p + 1), dtype=np.int32)
        lo, hi = np.searchsorted(self.src, bounds, side="left").tolist()
        return int(lo), int(hi)

    def out(self, p: int) -> list[int]:
        """Target positions of source `p`, ascending."""
        lo, hi = self.span(p)
        return self.dst[lo:hi].tolist()  # type: ignore[no-any-return]


def as_edges(edges: Sequence[tuple[int, int]]) -> Edges:
    """`edges` as an `Edges` (itself when it is one)."""
    return edges if isinstance(edges, Edges) else Edges.of(edges)


class Graph(Mapping[int, list[int]]):
    """Note id -> its neighbours' ids (ascending, no self loops), for every id with one; keys
    ascend. Built from position edges and the ids column: equal to
    `linkgraph.undirected([(ids[a], ids[b]) for a, b in edges])`. CSR by position in plain
    arrays (a read is a bisect of the ids tuple and two array reads: breadth-first search
    runs near the speed of a dict of lists); the ids are the corpus's own tuple, shared."""

    __slots__ = ("_ids", "_len", "_nbr", "_ptr")

    def __init__(self, ids: Sequence[int], edges: Sequence[tuple[int, int]]) -> None:
        e = as_edges(edges)
        self._ids = ids if isinstance(ids, tuple) else tuple(ids)
        n = len(self._ids)
        keep = e.src != e.dst
        a, b = e.src[keep], e.dst[keep]
        x = np.concatenate([a, b]).astype(np.int64)
        y = np.concatenate([b, a]).astype(np.int64)
        # positions ascend with ids: by (id, neighbour id); a sort and a mask, not np.unique
        # (numpy 2 hashes: 6.1 s of the 7.5 s this took at 10^6 notes, BENCHMARKS.md)
        key = np.sort(x * max(n, 1) + y)
        if key.size:
            key = key[np.concatenate(([True], key[1:] != key[:-1]))]
        x, y = key // max(n, 1), key % max(n, 1)
        ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(x, minlength=n), out=ptr[1:])
        self._ptr = array("q", ptr.tobytes())
        self._nbr = array("i", y.astype(np.int32).tobytes())
        self._len = int(np.count_nonzero(ptr[1:] != ptr[:-1]))  # ids with a neighbour

    def _at(self, note_id: object) -> int:
        """The position of `note_id` when it has a neighbour, or -1."""
        if not isinstance(note_id, int):
            return -1
        ids = self._ids
        p = bisect_left(ids, note_id)
        if p == len(ids) or ids[p] != note_id or self._ptr[p] == self._ptr[p + 1]:
            return -1
        return p

    def __getitem__(self, note_id: int) -> list[int]:
        p = self._at(note_id)
        if p < 0:
            raise KeyError(note_id)
        ids = self._ids
        return [ids[j] for j in self._nbr[self._ptr[p] : self._ptr[p + 1]]]

    def get(self, note_id: int, default: Any = None) -> Any:  # the BFS's call: one layer
        ids, ptr = self._ids, self._ptr
        p = bisect_left(ids, note_id) if isinstance(note_id, int) else len(ids)
        if p == len(ids) or ids[p] != note_id:
            return default
        lo, hi = ptr[p], ptr[p + 1]
        return [ids[j] for j in self._nbr[lo:hi]] if lo != hi else default

    def __contains__(self, note_id: object) -> bool:
        return self._at(note_id) >= 0

    def __iter__(self) -> Iterator[int]:
        ptr, ids = self._ptr, self._ids
        return (ids[p] for p in range(len(ids)) if ptr[p] != ptr[p + 1])

    def __len__(self) -> int:
        return self._len

    def __repr__(self) -> str:
        return f"Graph({dict(self)!r})"


class Decoded(ReadOnly[T]):
    """A tuple of values kept as their text (a `Strings`), each decoded by `decode` when it
    is read (a new object each time: callers only read them). What a memory-mapped store's
    JSON columns read as (storage/note_store.py): a search decodes the rows it touches."""

    __slots__ = ("_decode", "_texts")

    def __init__(self, texts: Strings, decode: Callable[[str], T]) -> None:
        self._texts, self._decode = texts, decode

    def __len__(self) -> int:
        return len(self._texts)

    def _item(self, i: int) -> T:
        return self._decode(self._texts[i])

    def containing(self, needles: Iterable[bytes]) -> list[int]:
        """Positions whose text may contain one of `needles` (`Strings.containing`)."""
        return self._texts.containing(needles)

    def __iter__(self) -> Iterator[T]:
        decode = self._decode
        return (decode(s) for s in self._texts)


class Digests(ReadOnly[str]):
    """A tuple of lowercase 64-digit hex strings (sha256 digests) packed as 32 bytes each."""

    __slots__ = ("_raw",)

    def __init__(self, raw: bytes) -> None:
        self._raw = raw

    @property
    def raw(self) -> bytes:
        """The digests' bytes, 32 each."""
        return self._raw

    def __len__(self) -> int:
        return len(self._raw) // 32

    def _item(self, i: int) -> str:
        return self._raw[32 * i : 32 * i + 32].hex()

    def __iter__(self) -> Iterator[str]:
        raw = self._raw
        return (raw[k : k + 32].hex() for k in range(0, len(raw), 32))


def digest_of(s: str) -> bytes | None:
    """The 32 bytes of `s` when it is a lowercase 64-digit hex string (it reads back the
    same from `Digests`), else None."""
    try:
        b = bytes.fromhex(s) if len(s) == 64 else b""
    except ValueError:
        return None
    return b if len(b) == 32 and b.hex() == s else None


def hex_column(items: Iterable[str]) -> Sequence[str]:
    """`items` as `Digests` when every one is a lowercase 64-digit hex string (it reads back
    the same), else as `Strings`."""
    raw = bytearray()
    kept: list[str] = []
    for s in items:
        if not kept:
            b = digest_of(s)
            if b is not None:
                raw += b
                continue
            kept.extend(Digests(bytes(raw)))
        kept.append(s)
    return Strings(kept) if kept else Digests(bytes(raw))


PACKED = (Strings, Digests, Decoded)  # immutable packed columns an overlay may share as its base


def repacked(base: Sequence[Any], rows: Iterable[Any]) -> Sequence[Any]:
    """`rows` packed as `base` is (`Strings`, `Digests`), else a tuple."""
    if isinstance(base, Strings):
        return Strings(rows)
    if isinstance(base, Digests):
        return hex_column(rows)
    return tuple(rows)
