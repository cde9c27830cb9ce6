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

import json
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..cancel import checked
from ..notes.links import Resolver
from ..notes.rows import LinkRow
from . import edge_store, name_tables, note_store
from .columns import Edges, Strings, hex_column
from .corpus import BaseRef, Corpus
from .edge_store import I64, Digest
from .index import Index
from .link_targets import LinkTargets, link_keys
from .note_store import Columns

Resolved = list[tuple[LinkRow, int | None]]


def resolved(resolver: Resolver, links: Iterable[LinkRow], source: str) -> Resolved:
    """Each of `links` (written in note `source`) with the note id it resolves to, each
    distinct (kind, target) resolved once: `Resolver.resolve` reads nothing else of a link,
    and one note may repeat a link a million times (`[[x]]` x 10^6 is a 5 MB note)."""
    done: dict[tuple[str, str], int | None] = {}
    out: Resolved = []
    for ln in links:
        key = (ln.kind, ln.target)
        if key not in done:
            done[key] = resolver.resolve(ln, source)
        out.append((ln, done[key]))
    return out


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
        return resolved(self._resolver, self._index.links_of(note_id), path)

    def __iter__(self) -> Iterator[int]:
        return iter(sorted(self._resolver.id_path))

    def __len__(self) -> int:
        return len(self._resolver.id_path)

    def every(self) -> Iterator[tuple[int, Resolved]]:
        """(id, resolved links) of every note, ascending ids, from one read of the links."""
        raw = self._index.links()
        for note_id in self:
            path = self._resolver.id_path[note_id]
            yield note_id, resolved(self._resolver, raw.get(note_id, ()), path)


@dataclass(frozen=True)
class Snapshot:
    """One index generation as the facade serves it."""

    corpus: Corpus
    resolver: Resolver
    links: IndexLinks  # note id -> its links in text order, each with its resolved id
    targets: LinkTargets  # name key -> ids of the notes linking to that name (a superset)

    def referrers(self, note_id: int) -> list[int]:
        """Ids of the other notes with a link that resolves to `note_id`, ascending: the
        sources of its in-edges (the edges are the resolved links less self-links), one pass
        over the edge arrays; reading and resolving every link of the vault took minutes per
        `Vault.move` at 10^6 notes."""
        c = self.corpus
        t = c.position(note_id)
        edges = c.edges
        sources = (edges.sources_of(t) if isinstance(edges, Edges)
                   else [a for a, b in edges if b == t])
        return sorted({c.ids[a] for a in sources} - {note_id})

    def dangling(self) -> list[tuple[str, str]]:
        """(source path, link target) of every link that resolves to no note, sorted."""
        paths = self.resolver.id_path
        return sorted(
            (paths[src], ln.target)
            for src, links in self.links.every()
            for ln, dst in links
            if dst is None
        )


def build_snapshot(index: Index, folder: str | Path | None = None,
                   count_op: Callable[[], None] | None = None) -> Snapshot:
    """The snapshot of the index as it is now (archive flags all False; the facade sets them).

    Streams: note rows go straight into the corpus columns, then links one at a time into
    edges and name keys (no row objects or link lists kept: at 10^6 notes they doubled the
    peak). Links come by source id, which is position order, so the edges come out sorted;
    they are kept by id in two int64 arrays and turned into positions in one search at the
    end (no id -> position dict: 100 MB at 10^6 notes). With `folder` (the vault's .rmh/) the
    links are first read without resolving them, for the link targets and the digest of the
    edge store (edge_store.py); only when no store matches are they read again, resolved, and
    the edges saved for the next process.

    With `folder`, the note columns persisted for this state of the index (note_store.py)
    are loaded instead when they match: no note or link row is read. Otherwise the snapshot
    is built from the rows as above and saved there (`count_op`: the store's fault
    injection, called per file operation of the save)."""
    with index.reading():
        generation = index.generation()
        key = None
        if folder is not None:
            key = _stamp(index, generation)
            saved = note_store.load(folder, key)
            if saved is not None:
                return _loaded(index, generation, saved, key, Path(folder))
        snap = _from_rows(index, generation, folder)
    if folder is not None and key is not None:
        _save(snap, folder, key, count_op, lambda: state(index)[1])
        snap = replace(snap, corpus=replace(snap.corpus, stamp=key))
    return snap


def _stamp(index: Index, generation: int) -> str:
    return note_store.stamp(generation, ((name, d) for name, (d, _) in
                                         sorted(index.stat_folders()[1].items())))


def state(index: Index) -> tuple[int, str]:
    """The index's generation and stamp now (note_store.stamp: no row read)."""
    with index.reading():
        generation = index.generation()
        return generation, _stamp(index, generation)


def saved_snapshot(index: Index, folder: str | Path, ref: BaseRef) -> Snapshot | None:
    """The snapshot of the columns saved for the state `ref` names (its generation: the
    index may have moved on since; catch_up.py advances it), or None when the store does
    not hold that state."""
    saved = _saved(folder, ref)
    return None if saved is None else _loaded(index, ref.generation, saved, ref.stamp,
                                              Path(folder))


def saved_corpus(folder: str | Path, ref: BaseRef) -> Corpus | None:
    """The corpus of the columns saved for `ref` (what a search engine prepares on when it
    catches up from that state: retrieval/derived.py), or None as `saved_snapshot`."""
    saved = _saved(folder, ref)
    return None if saved is None else _corpus_of(ref.generation, saved, ref.stamp)


def _saved(folder: str | Path, ref: BaseRef) -> Columns | None:
    saved = note_store.load(folder, ref.stamp)
    return saved if saved is not None and len(saved.ids) == ref.notes else None


def _corpus_of(generation: int, c: Columns, key: str) -> Corpus:
    return Corpus(generation=generation, ids=c.ids, paths=c.paths, titles=c.titles,
                  aliases=c.aliases, bodies=c.bodies, frontmatter=c.frontmatter,
                  content_hashes=c.content_hashes, edges=Edges(c.src, c.dst),
                  archived=(False,) * len(c.ids), stamp=key)


def _loaded(index: Index, generation: int, c: Columns, key: str, folder: Path) -> Snapshot:
    """The snapshot of persisted columns (note_store.py), its name tables kept beside them
    (name_tables.py)."""
    corpus = _corpus_of(generation, c, key)
    resolver = Resolver.over(c.ids, c.paths, c.aliases,
                             name_tables.stored(folder, key, len(c.ids)))
    return Snapshot(corpus, resolver, IndexLinks(index, resolver),
                    LinkTargets(c.target_hashes, c.target_sources))


def _save(snap: Snapshot, folder: str | Path, key: str,
          count_op: Callable[[], None] | None, current: Callable[[], str]) -> None:
    """Persist a snapshot built from the rows (frontmatter and aliases as the index's JSON),
    unless the index's stamp is no longer `key` when the store would be renamed into place
    (`current`: note_store.save)."""
    c = snap.corpus
    edges = c.edges
    assert isinstance(edges, Edges)
    cols = Columns(ids=c.ids, paths=c.paths, titles=c.titles, aliases=c.aliases,
                   bodies=c.bodies, frontmatter=c.frontmatter,
                   content_hashes=c.content_hashes, src=edges.src, dst=edges.dst,
                   target_hashes=snap.targets.hashes, target_sources=snap.targets.sources)
    if note_store.save(folder, key, c.generation, cols,
                       (json.dumps(fm, ensure_ascii=False) for fm in c.frontmatter),
                       (json.dumps(list(a), ensure_ascii=False) for a in c.aliases),
                       count_op, current):
        # the name tables too, so the first process that catches up from these columns
        # does not build them (~2.7 s at 10^6 notes; name_tables.py)
        resolver = Resolver.over(c.ids, c.paths, c.aliases,
                                 name_tables.stored(Path(folder), key, len(c.ids)))
        for table in (resolver.keys, resolver.names, resolver.alias_index):
            table.positions("")


def _from_rows(index: Index, generation: int, folder: str | Path | None) -> Snapshot:
    """The snapshot read from the note and link rows (build_snapshot)."""
    cols: dict[str, list[Any]] = {name: [] for name in _COLUMNS}
    for r in checked(index.iter_notes()):
        for name, attr in _COLUMNS.items():
            cols[name].append(getattr(r, attr))
    ids, paths, aliases = (tuple(cols.pop(k)) for k in ("ids", "paths", "aliases"))
    resolver = Resolver.over(ids, paths, aliases)  # shares the corpus's columns
    id_array = np.asarray(ids, dtype=np.int64)  # ascending: an id's position by search
    digest, stored = None, None
    if folder is not None:
        keys, digest = _unresolved(index, resolver, Digest(ids, paths, aliases))
        stored = _positions(id_array, edge_store.load(folder, digest))
    if stored is None:
        keys, src_ids, dst_ids = _resolved(index, resolver)
        if folder is not None and digest is not None:
            edge_store.save(folder, digest, src_ids, dst_ids)
        stored = np.searchsorted(id_array, src_ids), np.searchsorted(id_array, dst_ids)
        del src_ids, dst_ids
    edges = Edges(*stored)
    del id_array, stored
    corpus = Corpus(
        generation=generation,
        ids=ids,
        paths=paths,
        titles=Strings(cols["titles"]),
        aliases=aliases,
        bodies=tuple(cols["bodies"]),
        frontmatter=tuple(cols["frontmatter"]),
        content_hashes=hex_column(cols["content_hashes"]),
        edges=edges,
        archived=(False,) * len(ids),
    )
    return Snapshot(corpus, resolver, IndexLinks(index, resolver), keys)


def _unresolved(index: Index, resolver: Resolver, digest: Digest) -> tuple[LinkTargets, str]:
    """The link targets and the edge store's digest, from one read of the links (none is
    resolved)."""
    keys = LinkTargets.builder()
    src, src_path = -1, ""
    seen: set[tuple[str, str]] = set()
    for note_id, ln in index.iter_links():
        if note_id != src:
            src, src_path, seen = note_id, resolver.id_path[note_id], set()
        digest.link(note_id, ln)
        if (ln.kind, ln.target) not in seen:  # link_keys reads nothing else of a link
            seen.add((ln.kind, ln.target))
            keys.add(link_keys(ln, src_path), src)
    return keys.build(), digest.hexdigest()


def _resolved(index: Index, resolver: Resolver) -> tuple[LinkTargets, I64, I64]:
    """The link targets and the resolved links as (source ids, target ids), self links
    dropped, sorted."""
    src_ids, dst_ids = array("q"), array("q")  # resolved links by id: positions later
    keys = LinkTargets.builder()
    src, src_path = -1, ""
    dsts: set[int] = set()
    seen: set[tuple[str, str]] = set()
    for note_id, ln in index.iter_links():
        if note_id != src:
            _flush(src, dsts, src_ids, dst_ids)
            src, src_path, dsts, seen = note_id, resolver.id_path[note_id], set(), set()
        if (ln.kind, ln.target) in seen:  # resolves as it did (`resolved`)
            continue
        seen.add((ln.kind, ln.target))
        dst = resolver.resolve(ln, src_path)
        if dst is not None and dst != src:
            dsts.add(dst)
        keys.add(link_keys(ln, src_path), src)
    _flush(src, dsts, src_ids, dst_ids)
    return (keys.build(), np.frombuffer(src_ids, dtype=np.int64),
            np.frombuffer(dst_ids, dtype=np.int64))


def _positions(id_array: I64, pairs: tuple[I64, I64] | None) -> tuple[I64, I64] | None:
    """Edges by id as positions, or None when `pairs` is None or not edges of these notes
    sorted by (source, target) with no repeat (a store that does not fit: resolve again)."""
    if pairs is None:
        return None
    src, dst = (np.searchsorted(id_array, x) for x in pairs)
    n = id_array.shape[0]
    for pos, x in ((src, pairs[0]), (dst, pairs[1])):
        if pos.size and (int(pos.max()) >= n or not np.array_equal(id_array[pos], x)):
            return None
    if src.size > 1 and not bool(np.all((src[1:] > src[:-1])
                                        | ((src[1:] == src[:-1]) & (dst[1:] > dst[:-1])))):
        return None
    return src, dst


def _flush(src: int, dsts: set[int], src_ids: array[int], dst_ids: array[int]) -> None:
    """One source's resolved targets, ascending (ids ascend with positions)."""
    for d in sorted(dsts):
        src_ids.append(src)
        dst_ids.append(d)


_COLUMNS = {  # Corpus field -> NoteRow attribute
    "ids": "id", "paths": "path", "titles": "title", "aliases": "aliases", "bodies": "body",
    "frontmatter": "frontmatter", "content_hashes": "content_hash",
}
