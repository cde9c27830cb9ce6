"""Building the read-only snapshot of one index generation: the corpus, names and links.

`build_snapshot(index)` reads every note row and link row once and returns what the facade
serves between two changes of the folder: the `Corpus` every signal reads, the `Resolver` that
turns names into ids, and each note's links with the id each resolves to (None: dangling).
Corpus edges are (source position, target position) pairs of resolved links, self links
dropped, sorted — so everything derived from them is a total order.

The resolved links are not kept in memory (at 10^6 notes they were a quarter of a snapshot):
`Snapshot.links` reads a note's raw links from the index when asked and resolves them with
the snapshot's resolver. The facade asks only for a current snapshot (or, inside a batch,
for notes whose raw links it reads from the index anyway), so this gives what a kept copy
would.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from ..notes.links import Resolver
from .corpus import Corpus
from .index import Index, LinkRow
from .link_targets import LinkTargets, link_keys

Resolved = list[tuple[LinkRow, int | None]]


class IndexLinks(Mapping[int, Resolved]):
    """Note id -> its links in text order, each with its resolved id (None: dangling); read
    from the index on demand, resolved with `resolver`. Ids ascend in iteration."""

    def __init__(self, index: Index, resolver: Resolver) -> None:
        self._index = index
        self._resolver = resolver

    def __getitem__(self, note_id: int) -> Resolved:
        path = self._resolver.id_path.get(note_id)
        if path is None:
            raise KeyError(note_id)
        return [(ln, self._resolver.resolve(ln, path)) for ln in self._index.links_of(note_id)]

    def __iter__(self) -> Iterator[int]:
        return iter(sorted(self._resolver.id_path))

    def __len__(self) -> int:
        return len(self._resolver.id_path)

    def every(self) -> Iterator[tuple[int, Resolved]]:
        """(id, resolved links) of every note, ascending ids, from one read of the links."""
        raw = self._index.links()
        for note_id in self:
            path = self._resolver.id_path[note_id]
            yield note_id, [(ln, self._resolver.resolve(ln, path)) for ln in raw.get(note_id, ())]


@dataclass(frozen=True)
class Snapshot:
    """One index generation as the facade serves it."""

    corpus: Corpus
    resolver: Resolver
    links: IndexLinks  # note id -> its links in text order, each with its resolved id
    targets: LinkTargets  # name key -> ids of the notes linking to that name (a superset)

    def referrers(self, note_id: int) -> list[int]:
        """Ids of the other notes with a link that resolves to `note_id`, ascending."""
        return sorted(
            {src for src, links in self.links.every() for _, dst in links if dst == note_id}
            - {note_id}
        )

    def dangling(self) -> list[tuple[str, str]]:
        """(source path, link target) of every link that resolves to no note, sorted."""
        paths = self.resolver.id_path
        return sorted(
            (paths[src], ln.target)
            for src, links in self.links.every()
            for ln, dst in links
            if dst is None
        )


def build_snapshot(index: Index) -> Snapshot:
    """The snapshot of the index as it is now (archive flags all False; the facade sets them)."""
    with index.reading():
        generation = index.generation()
        rows = index.notes()
        links = index.links()
    resolver = Resolver.build({r.id: r.path for r in rows}, {r.id: r.aliases for r in rows})
    pos = {r.id: i for i, r in enumerate(rows)}
    edges: set[tuple[int, int]] = set()
    for r in rows:
        for ln in links.get(r.id, []):
            dst = resolver.resolve(ln, r.path)
            if dst is not None and dst != r.id:
                edges.add((pos[r.id], pos[dst]))
    corpus = Corpus(
        generation=generation,
        ids=tuple(r.id for r in rows),
        paths=tuple(r.path for r in rows),
        titles=tuple(r.title for r in rows),
        aliases=tuple(r.aliases for r in rows),
        bodies=tuple(r.body for r in rows),
        frontmatter=tuple(r.frontmatter for r in rows),
        content_hashes=tuple(r.content_hash for r in rows),
        edges=tuple(sorted(edges)),
        archived=tuple(False for _ in rows),
    )
    targets = LinkTargets.build(
        (key, r.id) for r in rows for ln in links.get(r.id, ()) for key in link_keys(ln, r.path)
    )
    return Snapshot(corpus, resolver, IndexLinks(index, resolver), targets)
