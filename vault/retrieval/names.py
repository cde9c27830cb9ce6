"""Notes named in a query: titles and aliases found as token runs among the query's tokens.

A note is named when the token sequence of its title or one of its aliases (1 to
`MAX_NAME_TOKENS` tokens, tokenized as every lexical signal is) occurs contiguously in the
query's tokens. Used by the PageRank seeds (signals/graph.py) and the named stage (stages.py).

Kept compact (a million notes have a million names): a name is the string of its tokens joined
by spaces (a token never holds one, so the join is one-to-one) and its notes a plain int when
there is one, a sorted tuple otherwise; about half the bytes of a tuple of tokens to a tuple.

A removal rewrites none of it: the positions stay in the coordinates of the corpus the index
was built for, extended by the notes added since (vault/shift.py `then_grown`), and
`shift` maps them to current positions when they are read (a removed note's entries map to
nothing); so a removal costs O(removed), and every lookup equals a fresh build's.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator, Mapping, Sequence, ValuesView
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from ..notes.text import tokenize
from ..shift import Shift
from ..storage.columns import Strings
from ..storage.corpus import Corpus
from . import stamped

MAX_NAME_TOKENS = 8

Positions = int | tuple[int, ...]  # one note's position, or several, ascending


def _as_tuple(p: Positions) -> tuple[int, ...]:
    return (p,) if isinstance(p, int) else p


def _packed(ids: set[int]) -> Positions:
    ordered = tuple(sorted(ids))
    return ordered[0] if len(ordered) == 1 else ordered


@dataclass(frozen=True)
class NameIndex:
    """Titles and aliases (tokens joined by spaces) -> positions of the notes they name."""

    names: Mapping[str, Positions]  # positions in the built corpus's coordinates, extended
    shift: Shift | None = None  # ... to current positions (None: the same; module docstring)

    @classmethod
    def build(cls, corpus: Corpus) -> NameIndex:
        acc: dict[str, Positions | list[int]] = {}
        for i in range(len(corpus)):
            for name in sorted(_names(corpus, i)):
                had = acc.get(name)
                if had is None:
                    acc[name] = i
                elif isinstance(had, int):
                    acc[name] = [had, i]  # i ascends
                elif isinstance(had, list):
                    had.append(i)
        for name, ids in acc.items():  # lists to tuples in place (no second dict)
            if isinstance(ids, list):
                acc[name] = tuple(ids)
        return cls(cast(dict[str, Positions], acc))

    @classmethod
    def stored(cls, corpus: Corpus, folder: str | None) -> NameIndex:
        """`build(corpus)`, kept beside the index under the corpus's stamp (stamped.py) as
        the sorted names packed in one buffer and their positions in CSR arrays, and read
        back as a `PackedNames` (a lookup is a bisect): a cold process does not tokenize
        every title and alias again."""
        if folder is None or corpus.stamp is None:
            return cls.build(corpus)

        def packed() -> dict[str, npt.NDArray[Any]]:
            built = cls.build(corpus).names
            keys = sorted(built)
            buf, off = _utf8(keys)
            counts = [1 if isinstance(built[k], int) else len(_as_tuple(built[k])) for k in keys]
            pos = [p for k in keys for p in _as_tuple(built[k])]
            return {"names": np.frombuffer(buf, dtype=np.uint8),
                    "offsets": np.asarray(off, dtype=np.int64),
                    "ptr": np.concatenate(([0], np.cumsum(counts, dtype=np.int64))),
                    "positions": np.asarray(pos, dtype=np.int64)}

        z = stamped.remembered_arrays(folder, corpus, f"names-{VERSION}",
                                      ("names", "offsets", "ptr", "positions"), packed)
        n = z["offsets"].shape[0] - 1
        if (n < 0 or z["ptr"].shape != (n + 1,) or int(z["offsets"][-1]) != z["names"].size
                or int(z["ptr"][-1]) != z["positions"].size):
            return cls.build(corpus)
        keys = Strings.over(z["names"].tobytes(), array("q", z["offsets"].tobytes()),
                            "surrogatepass")
        return cls(PackedNames(keys, array("q", z["ptr"].tobytes()),
                               array("q", z["positions"].tobytes())))

    def _now(self, stored: Sequence[int]) -> list[int]:
        """The current positions of stored ones (ascending in, ascending out), removed
        notes dropped."""
        return list(stored) if not self.shift else self.shift.forward_kept(stored)

    def positions(self, name: str) -> tuple[int, ...]:
        """The notes named `name` (tokens joined by spaces), ascending."""
        found = self.names.get(name)
        return () if found is None else tuple(self._now(_as_tuple(found)))

    def updated(self, old: Corpus, new: Corpus, positions: Sequence[int],
                shift: Shift | None = None) -> NameIndex:
        """The index for `new`: `old`'s notes without those `shift` removes (none when it is
        None), then `positions` (of `new`) changed or added. The old note of a changed
        position p < shift.kept is `old`'s `shift.back(p)` (storage/corpus.py `Since`)."""
        out = self
        if shift is not None and shift.removed:
            out = NameIndex(self.names, shift if self.shift is None
                            else self.shift.then_grown(shift))
        kept = len(old) if shift is None else shift.kept
        ps = np.asarray(positions, dtype=np.int64)
        was = ps if shift is None else shift.back(ps)
        stored = ps if out.shift is None else out.shift.back(ps)
        gone: dict[str, set[int]] = {}
        came: dict[str, set[int]] = {}
        for p, w, at in zip(ps.tolist(), was.tolist(), stored.tolist(), strict=True):
            before = _names(old, w) if p < kept else set()
            after = _names(new, p)
            for toks in before - after:
                gone.setdefault(toks, set()).add(at)
            for toks in after - before:
                came.setdefault(toks, set()).add(at)
        if not gone and not came:
            return out
        base, changes = (out.names.base, dict(out.names.changes)) if isinstance(
            out.names, OverlaidNames) else (out.names, {})
        for toks in sorted(set(gone) | set(came)):
            held = changes[toks] if toks in changes else base.get(toks)
            ids = ((set() if held is None else set(_as_tuple(held))) - gone.get(toks, set())
                   ) | came.get(toks, set())
            changes[toks] = _packed(ids) if ids else None
        return NameIndex(OverlaidNames(base, changes), out.shift)

    def named_in(self, query: str) -> list[int]:
        """Positions of notes whose title or alias occurs as a token run in the query."""
        return self.named_in_tokens(tokenize(query))

    def named_whole(self, toks: Sequence[str]) -> list[int]:
        """Positions of the notes whose title or an alias is the whole query, token for token
        (`Properties` names `Properties.md`, not `Properties view.md`)."""
        return list(self.positions(" ".join(toks))) if 0 < len(toks) <= MAX_NAME_TOKENS else []

    def named_in_tokens(self, toks: Sequence[str],
                        keep: Callable[[list[int]], list[int]] | None = None) -> list[int]:
        """`named_in` for an already tokenized query; `keep`, given, filters the notes of each
        name the query holds (current positions; e.g. notes/generated_names.py `yielded`)."""
        found: set[int] = set()
        for i in range(len(toks)):
            for j in range(i + 1, min(len(toks), i + MAX_NAME_TOKENS) + 1):
                hit = self.names.get(" ".join(toks[i:j]))
                if hit is not None:
                    found.update(_as_tuple(hit) if keep is None
                                 else keep(self._now(sorted(_as_tuple(hit)))))
        return sorted(found) if keep is not None else self._now(sorted(found))


class OverlaidNames(Mapping[str, Positions]):
    """`base`'s names with a few changed (`NameIndex.updated`): `changes` maps a name to its
    positions now, or to None when no note has it any more. An update copies the changes,
    never the base (a million names read back from their store: copying them cost every
    process after an added or renamed note O(names) lookups)."""

    def __init__(self, base: Mapping[str, Positions],
                 changes: dict[str, Positions | None]) -> None:
        self.base, self.changes = base, changes

    def __getitem__(self, name: str) -> Positions:
        if name in self.changes:
            got = self.changes[name]
            if got is None:
                raise KeyError(name)
            return got
        return self.base[name]

    def __iter__(self) -> Iterator[str]:
        yield from (k for k in self.base if k not in self.changes)
        yield from (k for k in sorted(self.changes) if self.changes[k] is not None)

    def __len__(self) -> int:  # the base's count, corrected by the changes (no walk of it)
        return len(self.base) + sum((got is not None) - (name in self.base)
                                    for name, got in self.changes.items())


class PackedNames(Mapping[str, Positions]):
    """The names of a `NameIndex` as sorted packed strings and CSR positions (`stored`)."""

    def __init__(self, keys: Strings, ptr: array[int], positions: array[int]) -> None:
        self._keys, self._ptr, self._pos = keys, ptr, positions

    def __getitem__(self, name: str) -> Positions:
        keys = self._keys
        i = bisect_left(keys, name)
        if i == len(keys) or keys[i] != name:
            raise KeyError(name)
        lo, hi = self._ptr[i], self._ptr[i + 1]
        return self._pos[lo] if hi - lo == 1 else tuple(self._pos[lo:hi])

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def values(self) -> ValuesView[Positions]:
        return _Values(self)

    def in_order(self) -> Iterator[Positions]:
        """Every name's positions in name order, without a lookup each."""
        ptr, pos = self._ptr, self._pos
        for i in range(len(ptr) - 1):
            lo, hi = ptr[i], ptr[i + 1]
            yield pos[lo] if hi - lo == 1 else tuple(pos[lo:hi])


class _Values(ValuesView[Positions]):
    """`PackedNames.values()`: read in order from the arrays (a bisect a value was ~0.1 ms)."""

    def __init__(self, names: PackedNames) -> None:
        super().__init__(names)
        self._names = names

    def __iter__(self) -> Iterator[Positions]:
        return self._names.in_order()


def _utf8(items: Sequence[str]) -> tuple[bytes, list[int]]:
    buf, off = bytearray(), [0]
    for s in items:
        buf += s.encode("utf-8", "surrogatepass")
        off.append(len(buf))
    return bytes(buf), off


VERSION = 5  # of the packed form `stored` keeps (2: CJK/Thai names as bigrams, text.tokenize;
# 3: combining marks kept in their word, Arabic/Hebrew points dropped; 4: an enclosing mark
# ends its word; 5: a soft hyphen or zero-width joiner inside a word keeps it one word)


def _names(corpus: Corpus, i: int) -> set[str]:
    """The token runs that name the note at position `i`, each joined by spaces."""
    out = set()
    for name in (corpus.titles[i], *corpus.aliases[i]):
        toks = tokenize(name)
        if 0 < len(toks) <= MAX_NAME_TOKENS:
            out.add(" ".join(toks))
    return out
