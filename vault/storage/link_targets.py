"""Which notes' links a name could concern: the reverse map an incremental snapshot needs.

When a note is added or its aliases change, links written in *other* notes may resolve
differently (a dangling `[[Foo]]` finds the new `Foo.md`; a bare name gains a second
candidate). Every way `Resolver` matches a link to a note compares the last path component
of the link's target with the note's file name or one of its aliases (folded, `.md`
dropped), so `name_key` of both sides is equal whenever a link can mean a note.

`LinkTargets` maps key_hash(name_key) -> source note id as two sorted int64 arrays (about 16
bytes per link, against hundreds for a dict of lists). `key_hash` is the first 8 bytes of the
key's BLAKE2b, the same in every process (not Python's per-process `hash(str)`), so the arrays
can be persisted with the snapshot (storage/note_store.py). It is a superset on purpose: a hash
collision or a pair left from a note's older text only makes the snapshot re-resolve a note
whose links did not change, which gives the same result; nothing is ever missed.
"""

from __future__ import annotations

import hashlib
import posixpath
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..notes.link_keys import fold, strip_md
from ..notes.rows import LinkRow


def key_hash(key: str) -> int:
    """A name key's 64-bit hash, stable across processes and runs (module docstring)."""
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8", "surrogatepass"),
                                          digest_size=8).digest(), "little", signed=True)


def name_key(name: str) -> str:
    """The last component of a wiki target, note path or alias, folded, `.md` dropped."""
    return posixpath.basename(fold(strip_md(name.strip())))


def alias_key(alias: str) -> str:
    """An alias's key (aliases match whole, so `.md` is not dropped: `strip_md` happens on
    the link side only)."""
    return posixpath.basename(fold(alias.strip()))


def link_keys(link: LinkRow, source: str) -> list[str]:
    """The keys of the names `link` (written in note `source`) could resolve to."""
    if link.kind == "markdown":
        rel = posixpath.normpath(posixpath.join(posixpath.dirname(source), link.target))
        root = posixpath.normpath(link.target.lstrip("/"))
        return [posixpath.basename(fold(strip_md(c))) for c in (rel, root)]
    return [name_key(link.target)] if link.target else []


def note_keys(path: str, aliases: Sequence[str]) -> list[str]:
    """The keys under which note `path` with `aliases` can be named by a link."""
    return [posixpath.basename(fold(strip_md(path))), *(alias_key(a) for a in aliases)]


class TargetsBuilder:
    """Collects (keys, source) pairs as two int64 arrays (no tuple or key string kept per
    link: at 10^6 notes a list of pairs was a few hundred MB while the snapshot was built)."""

    def __init__(self) -> None:
        self._hashes, self._sources = array("q"), array("q")

    def add(self, keys: Iterable[str], src: int) -> None:
        for key in keys:
            self._hashes.append(key_hash(key))
            self._sources.append(src)

    def build(self) -> LinkTargets:
        h = np.frombuffer(self._hashes, dtype=np.int64) if self._hashes else _EMPTY
        s = np.frombuffer(self._sources, dtype=np.int64) if self._sources else _EMPTY
        order = np.lexsort((s, h))
        return LinkTargets(h[order], s[order])


_EMPTY = np.zeros(0, dtype=np.int64)


@dataclass(frozen=True)
class LinkTargets:
    """key_hash(key) -> source id pairs, sorted by hash; a superset (module doc)."""

    hashes: npt.NDArray[np.int64]
    sources: npt.NDArray[np.int64]

    @staticmethod
    def builder() -> TargetsBuilder:
        return TargetsBuilder()

    @classmethod
    def build(cls, pairs: Iterable[tuple[str, int]]) -> LinkTargets:
        out = TargetsBuilder()
        for key, src in pairs:
            out.add((key,), src)
        return out.build()

    def sources_of(self, keys: Iterable[str]) -> set[int]:
        """Ids of every note with a link whose key may be one of `keys`."""
        out: set[int] = set()
        for h in {key_hash(k) for k in keys}:
            lo = int(np.searchsorted(self.hashes, h, side="left"))
            hi = int(np.searchsorted(self.hashes, h, side="right"))
            out.update(int(x) for x in self.sources[lo:hi])
        return out

    def plus(self, pairs: Iterable[tuple[str, int]]) -> LinkTargets:
        """These pairs added (old pairs stay: the superset only grows until a full rebuild)."""
        extra = LinkTargets.build(pairs)
        if not len(extra.hashes):
            return self
        at = np.searchsorted(self.hashes, extra.hashes, side="right")
        return LinkTargets(np.insert(self.hashes, at, extra.hashes),
                           np.insert(self.sources, at, extra.sources))
