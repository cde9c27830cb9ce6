"""Building the read-only snapshot of one index generation: the corpus, names and links.

`build_snapshot(index)` reads every note row and link row once and returns what the facade
serves between two changes of the folder: the `Corpus` every signal reads, the `Resolver` that
turns names into ids, and each note's links with the id each resolves to (None: dangling).
Corpus edges are (source position, target position) pairs of resolved links, self links
dropped, sorted — so everything derived from them is a total order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..notes.links import Resolver
from .corpus import Corpus
from .index import Index, LinkRow
from .link_targets import LinkTargets, link_keys

ResolvedLinks = Mapping[int, list[tuple[LinkRow, int | None]]]


@dataclass(frozen=True)
class Snapshot:
    """One index generation as the facade serves it."""

    corpus: Corpus
    resolver: Resolver
    links: ResolvedLinks  # note id -> its links in text order, each with its resolved id
    targets: LinkTargets  # name key -> ids of the notes linking to that name (a superset)

    def referrers(self, note_id: int) -> list[int]:
        """Ids of the other notes with a link that resolves to `note_id`, ascending."""
        return sorted(
            {src for src, links in self.links.items() for _, dst in links if dst == note_id}
            - {note_id}
        )

    def dangling(self) -> list[tuple[str, str]]:
        """(source path, link target) of every link that resolves to no note, sorted."""
        paths = self.resolver.id_path
        return sorted(
            (paths[src], ln.target)
            for src, links in self.links.items()
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
    resolved: dict[int, list[tuple[LinkRow, int | None]]] = {}
    for r in rows:
        out = resolved.setdefault(r.id, [])
        for ln in links.get(r.id, []):
            dst = resolver.resolve(ln, r.path)
            out.append((ln, dst))
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
    return Snapshot(corpus, resolver, resolved, targets)
