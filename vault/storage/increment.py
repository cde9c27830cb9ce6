"""The next snapshot from the previous one, over the notes a sync added, updated, renamed or
removed.

`advance(prev, index, paths, removed)` re-reads just the rows at `paths` and returns the snapshot
`build_snapshot(index)` would return, field by field (tests/vault/storage/test_increment.py),
plus `corpus.delta`, so an edit costs what the changed notes cost, not what the vault costs:

- an updated note keeps its position (same id); a renamed one (a new path for the same id:
  `Vault.move`, or a file moved outside rmh that sync matched by content) is an updated
  note whose path and title changed too; added notes have ids above every earlier id, so
  they append (checked: otherwise None and the caller rebuilds);
- names: an added note's file name and aliases, an updated note's changed aliases, or a
  renamed note's old and new path, may change what other notes' links resolve to; those
  notes are found through `Snapshot.targets`, their raw links read from the index and
  re-resolved (their text is unchanged: not in `delta.changed`, but their edges may change);
- `delta.relinked` names every source whose edges were recomputed, and `delta.earlier` chains
  the previous snapshot's delta (up to `MAX_CHAIN`), so the retrieval structures of any
  generation in the chain catch up (retrieval/derived.py);
- a removed note (`removed`: its id; a rename onto an existing note removes the note that
  was there) drops its row from every column without copying the others (overlay.py
  `Dropped`), every later position moves down by the removed rows before it (shift.py), and
  `delta.removed` holds its position in the previous corpus; its names go from the resolver
  (name_index.py `minus`), and the notes that linked to one of its names re-resolve (their
  link may now find another note of that name, or dangle);
- edges stay sorted `Edges` arrays: pairs touching a removed position are dropped and the
  rest moved (one numpy pass), then each re-resolved source's slice is replaced; the
  undirected `graph`, when the previous corpus had built it, is patched for the pairs that
  changed (an overlay over the last CSR graph, built again once the changes would fold).

It returns None (rebuild) where the history is not one it can follow: a note of `paths` not
where its id says, a removed id that is a note of the index again (ids are AUTOINCREMENT,
never reused: schema.py), or another writer between the two reads.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from ..notes.folding import folds
from ..notes.links import Resolver
from ..notes.rows import NoteRow
from ..shift import Shift
from .columns import Edges, Graph, as_edges
from .corpus import MAX_CHAIN, BaseRef, Corpus, CorpusDelta, chain_depth
from .index import Index
from .link_targets import alias_key, link_keys, note_keys
from .overlay import Column, Patch, kept_rows
from .snapshot import IndexLinks, Snapshot, resolved


def advance(prev: Snapshot, index: Index, paths: Sequence[str],
            removed: Sequence[int] = ()) -> Snapshot | None:
    """The snapshot after the notes at `paths` were added or updated and the notes with the
    ids `removed` were removed (module docstring); None: rebuild."""
    c = prev.corpus
    with index.reading():
        generation = index.generation()
        # a path with no note now was renamed again since (its later path is in `paths`
        # too) or removed (its id is in `removed`)
        ids = [i for i in map(index.note_id, sorted(set(paths))) if i is not None]
        rows = index.notes_of(ids)
        links = {i: index.links_of(i) for i in rows}
        if removed and index.present(removed):
            return None  # a removed id is a note again: not the history we were told
    # ids ascend with positions; an id added since `prev` and removed again is in neither
    gone = Shift(tuple(p for p in map(_position(c), sorted(set(removed))) if p >= 0), len(c))
    last = c.ids[-1] if c.ids else 0
    added = sorted(i for i in rows if i > last)
    updated = sorted(i for i in rows if i <= last)
    was = [_position(c)(i) for i in updated]  # positions in `prev`
    if any(p < 0 for p in was):
        return None
    pos = dict(zip(updated, gone.forward(was).tolist(), strict=True))
    renamed = [i for i, p in zip(updated, was, strict=True) if c.paths[p] != rows[i].path]
    for k, i in enumerate(added):
        pos[i] = gone.kept + k
    corpus = _corpus(c, rows, updated, added, renamed, pos, generation, gone)
    resolver, names = _names(prev.resolver, c, corpus, rows, dict(zip(updated, was, strict=True)),
                             added, renamed, pos, gone)
    sources = set(rows) | (prev.targets.sources_of(names) if names else set())
    sources = {s for s in sources if s in resolver.id_path}  # targets: a superset
    out_edges: dict[int, list[int]] = {}
    with index.reading():
        if index.generation() != generation:
            return None  # another writer since the rows were read: rebuild
        for s in sorted(sources):
            lns = links[s] if s in links else index.links_of(s)  # unchanged note: same links
            dsts = {d for _, d in resolved(resolver, lns, resolver.id_path[s])}
            out_edges[corpus.position(s)] = sorted(
                corpus.position(d) for d in dsts if d is not None and d != s)
    edges = _splice(_dropped(c.edges, gone), out_edges)
    assert corpus.delta is not None
    earlier = c.delta if chain_depth(c.delta) < MAX_CHAIN else None  # consumers catch up
    delta = replace(corpus.delta, relinked=tuple(sorted(out_edges)), earlier=earlier)
    corpus = replace(corpus, edges=edges, delta=delta)
    if "graph" in c.__dict__:  # cached_property: patch it rather than rebuild it lazily
        corpus.__dict__["graph"] = _patched_graph(c, corpus, out_edges, gone)
    targets = prev.targets.plus(  # each distinct (kind, target) once (snapshot.resolved)
        (key, i) for i in sorted(rows) for ln in {(ln.kind, ln.target): ln for ln in links[i]}
        .values() for key in link_keys(ln, rows[i].path)
    )
    return Snapshot(corpus, resolver, IndexLinks(index, resolver), targets)


def _position(c: Corpus) -> Callable[[int], int]:
    """A note id's position in `c`, or -1."""
    def at(note_id: int) -> int:
        try:
            return c.position(note_id)
        except KeyError:
            return -1
    return at


def _corpus(c: Corpus, rows: dict[int, NoteRow], updated: list[int], added: list[int],
            renamed: list[int], pos: dict[int, int], generation: int, gone: Shift) -> Corpus:
    """The corpus with the removed rows dropped, the updated rows overlaid and the added
    rows appended: each column shares the last one's storage (storage/overlay.py); ids
    change only by the removed and added notes, and paths and titles only for `renamed`
    notes besides, so without a rename or a removal those columns are the same objects."""
    fields = {
        "ids": "id", "paths": "path", "titles": "title", "aliases": "aliases",
        "bodies": "body", "frontmatter": "frontmatter", "content_hashes": "content_hash",
    }
    new: dict[str, Sequence[object]] = {}
    for name, attr in fields.items():
        touched = () if name == "ids" else renamed if name in _BY_PATH else updated
        changes = {pos[i]: getattr(rows[i], attr) for i in touched}
        new[name] = Column.of(getattr(c, name), changes, [getattr(rows[i], attr) for i in added],
                              gone)
    delta = CorpusDelta(c.generation, len(c), tuple(pos[i] for i in updated),
                        removed=gone.removed)
    archived = c.archived
    if gone:
        archived = tuple(kept_rows(archived, gone.removed))
    if added:
        archived += (False,) * len(added)
    base = c.base if c.stamp is None else BaseRef(c.stamp, c.generation, len(c))
    return replace(c, generation=generation, archived=archived, delta=delta, stamp=None,
                   base=base, **new)  # type: ignore[arg-type]


_BY_PATH = frozenset({"paths", "titles"})  # the same for an updated note not renamed


def _names(r: Resolver, c: Corpus, new: Corpus, rows: dict[int, NoteRow],
           was: dict[int, int], added: list[int], renamed: list[int], pos: dict[int, int],
           gone: Shift) -> tuple[Resolver, set[str]]:
    """The resolver over the new corpus's columns, and the keys of every name added or
    dropped (an updated note changes its names by its aliases, a renamed one by its path
    as well: the old path's keys and the new one's; a removed note drops all of its names).
    `was`: an updated note's position in `c`, `pos`: in `new`."""
    keys: set[str] = set()
    realiased = [i for i in was if tuple(rows[i].aliases) != tuple(c.aliases[was[i]])]
    for i in realiased:
        keys.update(alias_key(x) for x in (*c.aliases[was[i]], *new.aliases[pos[i]]))
    for i in renamed:
        keys.update(note_keys(c.paths[was[i]], c.aliases[was[i]]))
        keys.update(note_keys(rows[i].path, rows[i].aliases))
    for i in added:
        keys.update(note_keys(rows[i].path, rows[i].aliases))
    for p in gone.removed:
        keys.update(note_keys(c.paths[p], c.aliases[p]))
    return r.plus(new.ids, new.paths, new.aliases, [pos[i] for i in realiased],
                  [pos[i] for i in renamed], gone.removed), keys


def _dropped(edges: Sequence[tuple[int, int]], gone: Shift) -> Sequence[tuple[int, int]]:
    """`edges` less the pairs touching a removed position, the others moved down (the map
    is monotone, so they stay sorted): O(edges) numpy, the same object with no removal."""
    if not gone:
        return edges
    old = as_edges(edges)
    keep = gone.keep
    both = keep[old.src] & keep[old.dst]
    return Edges(gone.forward(old.src[both]), gone.forward(old.dst[both]))


def _splice(edges: Sequence[tuple[int, int]],
            out_edges: dict[int, list[int]]) -> Sequence[tuple[int, int]]:
    """`edges` with the slice of each source position in `out_edges` replaced (sorted), as
    `Edges`: the same object when no source's targets changed, else new arrays cut from the
    old ones (a copy of two int32 arrays: milliseconds at 10^6 notes)."""
    changed = {p: d for p, d in out_edges.items() if _out(edges, p) != d}
    if not changed:
        return edges
    old = as_edges(edges)
    srcs: list[npt.NDArray[np.int32]] = []
    dsts: list[npt.NDArray[np.int32]] = []
    at = 0
    for p in sorted(changed):
        lo, hi = old.span(p)
        srcs += [old.src[at:lo], np.full(len(changed[p]), p, dtype=np.int32)]
        dsts += [old.dst[at:lo], np.asarray(changed[p], dtype=np.int32)]
        at = max(at, hi)
    srcs.append(old.src[at:])
    dsts.append(old.dst[at:])
    return Edges(np.concatenate(srcs), np.concatenate(dsts))


def _out(edges: Sequence[tuple[int, int]], p: int) -> list[int]:
    if isinstance(edges, Edges):
        return edges.out(p)
    lo = bisect_left(edges, (p,))
    hi = bisect_left(edges, (p + 1,), lo)
    return [d for _, d in edges[lo:hi]]


def _patched_graph(old: Corpus, new: Corpus, out_edges: dict[int, list[int]],
                   gone: Shift) -> Mapping[int, list[int]]:
    """`new.graph` from `old.graph`: a removed note leaves it with its pairs, and only pairs
    with a re-resolved source can change otherwise. Equal to `undirected(new edges)` as a
    mapping (a node new to the graph is inserted last; readers look nodes up by id and never
    depend on the key order)."""
    base = old.graph
    graph: Patch[int, list[int]] = Patch(base)
    dead = {old.ids[p] for p in gone.removed}
    for x in sorted(dead):
        for y in graph.get(x, ()):
            if y not in dead:
                adj = [z for z in graph[y] if z != x]
                if adj:
                    graph[y] = adj
                else:
                    graph.pop(y)
        if x in graph:
            graph.pop(x)
    srcs = sorted(out_edges)
    kept = [s for s in srcs if s < gone.kept]
    before = dict(zip(kept, gone.back(kept).tolist(), strict=True))  # positions in `old`
    pairs: set[tuple[int, int]] = set()
    for s in srcs:
        a = new.ids[s]
        ends = [new.ids[d] for d in out_edges[s]]
        if s in before:
            ends += [old.ids[d] for d in _out(old.edges, before[s])]
        pairs.update((min(a, b), max(a, b)) for b in ends if b != a and b not in dead)
    for ia, ib in sorted(pairs):
        a, b = new.position(ia), new.position(ib)
        now = b in _out(new.edges, a) or a in _out(new.edges, b)
        was = ib in graph.get(ia, ())
        if now == was:
            continue
        for x, y in ((ia, ib), (ib, ia)):
            adj = list(graph.get(x, ()))
            if now:
                insort(adj, y)
            else:
                adj.remove(y)
            if adj:
                graph[x] = adj
            else:
                graph.pop(x)
    if folds(len(graph._changes) + len(graph._removed), len(base)):
        return Graph(new.ids, new.edges)  # many changes: build it again rather than fold
    return graph.frozen(base)
