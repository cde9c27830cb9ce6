"""The read-only snapshot of the index that every retrieval signal reads.

A `Corpus` is built by the facade from the SQLite index whenever the index generation changes.
Position `i` in every tuple describes the same note; `ids` ascend, so every order derived from
positions is a total order by note id.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from .linkgraph import undirected


@dataclass(frozen=True)
class Corpus:
    """All notes of one index generation, aligned by position."""

    generation: int
    ids: tuple[int, ...]
    paths: tuple[str, ...]
    titles: tuple[str, ...]
    aliases: tuple[tuple[str, ...], ...]
    bodies: tuple[str, ...]
    frontmatter: tuple[Mapping[str, Any], ...]
    content_hashes: tuple[str, ...]
    edges: tuple[tuple[int, int], ...]
    archived: tuple[bool, ...]

    def __len__(self) -> int:
        return len(self.ids)

    @cached_property
    def graph(self) -> dict[int, list[int]]:
        """The undirected link graph by note id (what `neighbors` and activation walk)."""
        return undirected([(self.ids[a], self.ids[b]) for a, b in self.edges])

    def position(self, note_id: int) -> int:
        """Position of a note id; KeyError when the id is not in this corpus."""
        i = bisect_left(self.ids, note_id)
        if i == len(self.ids) or self.ids[i] != note_id:
            raise KeyError(note_id)
        return i


def empty_corpus(generation: int = 0) -> Corpus:
    """A corpus with no notes (a fresh vault)."""
    return Corpus(generation, (), (), (), (), (), (), (), (), ())
