"""Texts held zlib-compressed in blocks while they wait to be read in order.

A dense build at 10^6 notes makes ~3 million chunk texts before it embeds them a block at a
time; as Python strings they take ~800 MB (the characters plus ~57 bytes an object), which
is most of what the build holds beyond its own arrays. `PackedTexts` keeps every `block`
texts as one UTF-8 string compressed with zlib (level 1, ~4x on prose) and the character
offsets of its texts, and gives back exactly the strings it was given: a slice decompresses
the blocks it touches (the last one is kept, so reading blocks in order decodes each once).
Deterministic and pure: nothing leaves the process.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Sequence
from typing import overload

import numpy as np
import numpy.typing as npt

PACK_BLOCK = 16384  # texts per compressed block
LEVEL = 1  # zlib level: the fastest (the texts are transient)


class PackedTexts(Sequence[str]):
    """A read-only sequence of texts filled by `extend` (module docstring)."""

    def __init__(self, block: int = PACK_BLOCK) -> None:
        self._block = block
        self._packed: list[tuple[bytes, npt.NDArray[np.int64]]] = []
        self._pending: list[str] = []
        self._cache: tuple[int, str, list[int]] | None = None

    def extend(self, texts: Iterable[str]) -> None:
        for t in texts:
            self._pending.append(t)
            if len(self._pending) == self._block:
                self._pack()

    def _pack(self) -> None:
        ends = np.cumsum([len(t) for t in self._pending], dtype=np.int64)
        offsets = np.concatenate((np.zeros(1, np.int64), ends))
        joined = "".join(self._pending).encode("utf-8", "surrogatepass")
        self._packed.append((zlib.compress(joined, LEVEL), offsets))
        self._pending = []

    def __len__(self) -> int:
        return len(self._packed) * self._block + len(self._pending)

    def _texts_of(self, b: int) -> tuple[str, list[int]]:
        if self._cache is None or self._cache[0] != b:
            data, offsets = self._packed[b]
            text = zlib.decompress(data).decode("utf-8", "surrogatepass")
            self._cache = (b, text, offsets.tolist())
        return self._cache[1], self._cache[2]

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step != 1:
                return [self._one(j) for j in range(start, stop, step)]
            out: list[str] = []
            j = start
            while j < stop:  # a block's texts cut from its one string
                b, r = divmod(j, self._block)
                if b == len(self._packed):
                    out.extend(self._pending[r : r + stop - j])
                    break
                text, offsets = self._texts_of(b)
                hi = min(self._block, r + stop - j)
                out.extend(text[offsets[k] : offsets[k + 1]] for k in range(r, hi))
                j += hi - r
            return out
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        return self._one(i % len(self))

    def _one(self, i: int) -> str:
        b, r = divmod(i, self._block)
        if b == len(self._packed):
            return self._pending[r]
        text, offsets = self._texts_of(b)
        return text[offsets[r] : offsets[r + 1]]

