"""BM25's term -> id map in three arrays and a string instead of a dict.

At 10^6 notes the generated vault has ~10^6 distinct terms (one or more per note's title); as
a dict of str to int that is ~100 bytes a term (the key object, the int object, the slot),
and an edit that brings a new term copied it whole. `Vocabulary` keeps the terms of a build
sorted (by code point, as `sorted` orders str) and joined by spaces in one string (a token
never holds whitespace: text.tokenize), the offset of each and its id: ~20 bytes a term. A
lookup bisects the first term of every block of STRIDE sorted terms (a short list), then the
one block, split out of the string (a few microseconds). Terms added by later edits go to a small
`extra` dict, so an edit copies that, never the base.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

SEP = " "  # between terms in `text`; tokens never contain it
STRIDE = 16  # sorted terms per block: a lookup bisects the blocks' first terms, then a block


@dataclass(frozen=True, eq=False)
class Vocabulary(Mapping[str, int]):
    """Term -> id (module docstring); equal to a dict with the same items."""

    text: str  # the base terms, sorted, each followed by SEP
    offsets: npt.NDArray[np.int64]  # (V + 1,): where the i-th sorted term starts
    ids: npt.NDArray[np.int32]  # id of the i-th sorted term
    extra: Mapping[str, int] = field(default_factory=dict)  # terms added since the base
    # every STRIDE-th term: computed from the base when not given; an edit's copy shares it
    # (recomputing it is O(terms): ~0.3 s an edit at 10^6 notes)
    heads: tuple[str, ...] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.heads is None:
            object.__setattr__(self, "heads",
                               tuple(self._block(b)[0] for b in range(self._blocks)))

    @property
    def _blocks(self) -> int:
        return -(-len(self.ids) // STRIDE)

    def _block(self, b: int) -> list[str]:
        lo, hi = b * STRIDE, min(len(self.ids), (b + 1) * STRIDE)
        return self.text[int(self.offsets[lo]) : int(self.offsets[hi]) - 1].split(SEP)

    @classmethod
    def of(cls, terms: Mapping[str, int]) -> Vocabulary:
        """The vocabulary of a dict's items (every term non-empty, without whitespace)."""
        ordered = sorted(terms)
        offsets = np.zeros(len(ordered) + 1, dtype=np.int64)
        np.cumsum(np.fromiter((len(t) + 1 for t in ordered), np.int64, len(ordered)),
                  out=offsets[1:])
        ids = np.fromiter((terms[t] for t in ordered), np.int32, len(ordered))
        return cls("".join(t + SEP for t in ordered), offsets, ids)

    def with_terms(self, fresh: Sequence[str]) -> Vocabulary:
        """This vocabulary and `fresh` (terms not in it), given ids len(self), len(self)+1..."""
        if not fresh:
            return self
        extra = dict(self.extra)
        for t in fresh:
            extra[t] = len(self.ids) + len(extra)
        return replace(self, extra=extra, heads=self.heads)

    def _find(self, term: str) -> int | None:
        added = self.extra.get(term)  # a term is in `extra` or in the base, never both
        if added is not None:
            return added
        b = bisect_right(self.heads or (), term) - 1
        if b >= 0:
            block = self._block(b)
            j = bisect_left(block, term)
            if j < len(block) and block[j] == term:
                return int(self.ids[b * STRIDE + j])
        return None

    def __getitem__(self, term: str) -> int:
        found = self._find(term)
        if found is None:
            raise KeyError(term)
        return found

    def __contains__(self, term: object) -> bool:
        return isinstance(term, str) and self._find(term) is not None

    def __len__(self) -> int:
        return len(self.ids) + len(self.extra)

    def __iter__(self) -> Iterator[str]:
        for b in range(self._blocks):
            yield from self._block(b)
        yield from self.extra
