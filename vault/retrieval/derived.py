"""What the pipeline derives from a corpus once per generation, built whole or updated in place.

`build_derived(corpus)` indexes every note: BM25, the conjunctive code, the name index, the
link adjacency and its walk. `update_derived(d, corpus)` brings those of an earlier
generation up to date when `corpus.delta` reaches back to it (storage/corpus.py): each
structure changes by what the changed notes change (signals/postings.py), so an edit to one
note of a million costs milliseconds, and every score equals a fresh build's bit for bit
(tests/vault/retrieval/test_incremental_*.py). A removal too (`Since.shift`): the lexical
indexes and the names keep their base in its own coordinates with the removal beside it
(signals/postings.py, names.py), the adjacency drops the removed rows and columns (O(links)
numpy), and only the removed notes are read again. It returns None when the delta does not
reach back, or when the delta has grown past compaction (postings.needs_compaction; removed
notes count): the caller rebuilds, which folds the delta into a new base.
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from ..cancel import checkpoint
from ..shift import Shift
from ..storage.columns import Edges as EdgeArrays
from ..storage.corpus import Corpus
from ..storage.snapshot import saved_corpus
from . import lexical_store, stamped
from .caught_up_sums import Sums
from .csr import Csr, index_dtype
from .names import NameIndex
from .signals.bm25 import Bm25Index
from .signals.conjunctive import ConjunctiveIndex
from .signals.dense import DenseIndex
from .signals.graph import Walk, adjacency
from .signals.postings import needs_compaction
from .signals.registry import BM25, CONJUNCTIVE, DENSE, BuildEnv

Edges = Sequence[tuple[int, int]]
LEXICAL = BuildEnv()  # the lexical signals need nothing beyond the corpus


@dataclass
class Derived:
    """The structures of one corpus generation (`dense` is filled when an encoder is set)."""

    corpus: Corpus
    bm25: Bm25Index
    conj: ConjunctiveIndex
    names: NameIndex
    links: Csr
    walk: Walk
    dense: DenseIndex | None = None  # of its own generation: DenseIndex.updated catches up

    @property
    def generation(self) -> int:
        return self.corpus.generation

    @property
    def n(self) -> int:
        return len(self.corpus)


def layout(dense: DenseIndex) -> str:
    """The dense index's layout in words: "exact", or "int8 IVF" (", codes on disk")."""
    if dense.ivf is None:
        return "exact"
    words = "int8 IVF" + (", codes on disk" if dense.ivf.disk_bytes else "")
    return words + (f", {dense.staleness}" if dense.staleness else "")


def prepared(view: Derived, corpus: Corpus, calibration: str) -> dict[str, Any]:
    """What SearchEngine.prepare reports of `corpus`'s structures (JSON-safe counts)."""
    dense = view.dense
    return {
        "generation": corpus.generation,
        "notes": len(corpus),
        "chunks": 0 if dense is None else dense.n_chunks,
        "dense": "skipped: no encoder" if dense is None else "ready (" + layout(dense) + ")",
        "capped_notes": 0 if dense is None else dense.capped,
        "array_bytes": {name: array_bytes(getattr(view, name))
                        for name in ("bm25", "conj", "names", "links", "walk", "dense")},
        "disk_bytes": {"dense": 0 if dense is None or dense.ivf is None
                       else dense.ivf.disk_bytes},
        "calibration": calibration,
    }


def retrained(d: Derived, corpus: Corpus, retrain: bool) -> Derived:
    """`d` with its dense IVF trained again on `corpus` when `retrain` and rows changed since
    its training (DenseIndex.retrained: `rmh index`)."""
    if retrain and d.dense is not None:
        d.dense = d.dense.retrained(corpus)
    return d


def array_bytes(obj: object) -> int:
    """Bytes of the numpy arrays (sparse matrices included) reachable through dataclass
    fields and dict values of `obj` (dicts' own overhead and Python strings not counted)."""
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)
    if all(hasattr(obj, a) for a in ("data", "indices", "indptr")):
        return sum(array_bytes(getattr(obj, a)) for a in ("data", "indices", "indptr"))
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return sum(array_bytes(getattr(obj, f.name)) for f in dataclasses.fields(obj)
                   if f.name != "corpus")
    if isinstance(obj, dict):  # a lazy or layered mapping holds no arrays of its own
        return sum(array_bytes(v) for v in obj.values() if isinstance(v, np.ndarray))
    return 0


def stored_adjacency(corpus: Corpus, folder: str | None) -> Csr:
    """`adjacency(len(corpus), corpus.edges)`, kept beside the index under the corpus's stamp
    (stamped.py: its three arrays; a cold process does not sort every edge again)."""
    n = len(corpus)

    def built() -> dict[str, npt.NDArray[Any]]:
        m = adjacency(n, corpus.edges)
        return {"indptr": m.indptr, "indices": m.indices, "data": m.data}

    z = stamped.remembered_arrays(folder, corpus, f"adjacency-{ADJACENCY_VERSION}",
                                  ("indptr", "indices", "data"), built)
    indptr, indices, data = z["indptr"], z["indices"], z["data"]
    if (indptr.shape != (n + 1,) or data.dtype != np.float64 or indices.shape != data.shape
            or int(indptr[-1]) != data.shape[0]
            or (data.size and (int(indices.min()) < 0 or int(indices.max()) >= n))):
        return adjacency(n, corpus.edges)
    return Csr(indptr, indices, data, (n, n))


ADJACENCY_VERSION = 1  # of the arrays `stored_adjacency` keeps


def build_derived(corpus: Corpus, folder: str | None = None) -> Derived:
    """Every structure from scratch; with `folder` (the vault's .rmh/) the lexical indexes
    come from the store a full build of the same notes saved there (lexical_store.py), and
    a build saves them for the next process."""
    links = stored_adjacency(corpus, folder)
    got, digest = None, ""
    if folder is not None:
        digest = lexical_store.corpus_digest(corpus, folder)
        got = lexical_store.load(folder, digest)
    if got is None:
        got = BM25.build(corpus, LEXICAL), CONJUNCTIVE.build(corpus, LEXICAL)
        if folder is not None:  # saved before a cancel can stop it: the next build loads it
            lexical_store.save(folder, digest, *got)
        checkpoint()
    return Derived(corpus, *got, NameIndex.stored(corpus, folder), links, Walk.build(links))


def from_base(corpus: Corpus, folder: str | None, env: BuildEnv | None,
              count_op: Callable[[], None] | None = None) -> Derived | None:
    """`corpus`'s structures built on the saved state it was advanced from (`corpus.base`,
    storage/catch_up.py), whose stores load instead of a rebuild, then brought up to it
    through its delta (`update_derived`, the conjunctive sums read or saved for the next
    process: caught_up_sums.py, `count_op` the store's fault seam; with `env`'s encoder the
    dense index too, without compacting: registry.py `caught_up`). None when there is no
    such state, its columns are no longer saved, or the delta does not reach back to it:
    the caller builds."""
    ref, delta = corpus.base, corpus.delta
    if (folder is None or ref is None or delta is None
            or delta.changes_since(ref.generation, ref.notes, len(corpus)) is None):
        return None
    base = saved_corpus(folder, ref)
    if base is None:
        return None
    d = build_derived(base, folder)
    d.dense = None if env is None else DENSE.caught_up(base, corpus, env)
    sums = Sums(folder, lexical_store.corpus_digest(base, folder), count_op)
    return update_derived(d, corpus, sums)


def update_derived(d: Derived, corpus: Corpus, sums: Sums | None = None) -> Derived | None:
    """`d` brought up to `corpus` through its delta, or None (rebuild; module docstring);
    with `sums` the conjunctive channel's S1 and S2 read from or saved to the vault."""
    delta = corpus.delta
    if delta is None:
        return None
    since = delta.changes_since(d.generation, d.n, len(corpus))
    if since is None:
        return None
    changed, relinked = since.changed, since.relinked
    if needs_compaction(d.bm25.delta_docs + len(since.removed) + len(changed), len(corpus)):
        return None
    old, n = d.corpus, len(corpus)
    bm25 = BM25.update(d.bm25, old, corpus, since, LEXICAL)
    conj = (CONJUNCTIVE.update(d.conj, old, corpus, since, LEXICAL) if sums is None
            else sums.update(d.conj, old, corpus, since))
    names = d.names.updated(old, corpus, changed, since.shift)
    links = relink(d.links, old.edges, corpus.edges, relinked, n, since.shift)
    walk = d.walk if links is d.links else Walk.build(links)
    return replace(d, corpus=corpus, bm25=bm25, conj=conj, names=names, links=links,
                   walk=walk)


def _outs(edges: Edges, nodes: Sequence[int]) -> list[set[int]]:
    """The targets of each node's edges (`edges`: sorted (source, target) pairs): slices of
    the corpus's arrays found by one searchsorted for all nodes (a bisect over the pairs
    built a tuple a probe: 0.1 ms a note, 1 s for a note 10^4 others link to)."""
    if isinstance(edges, EdgeArrays):
        q = np.asarray(nodes, dtype=edges.src.dtype)  # the array's dtype: no copy of it
        lo = np.searchsorted(edges.src, q, side="left").tolist()
        hi = np.searchsorted(edges.src, q, side="right").tolist()
        return [set(edges.dst[i:j].tolist()) for i, j in zip(lo, hi, strict=True)]
    out = []
    for p in nodes:
        i, j = bisect_left(edges, (p, -1)), bisect_left(edges, (p + 1, -1))
        out.append({t for _, t in edges[i:j]})
    return out


def dropped(adj: Csr, shift: Shift) -> Csr:
    """`adj` without the rows and columns `shift` removes, the others renumbered
    (`shift.forward`): the canonical matrix `adjacency` builds over the kept nodes' links,
    in O(n + links) numpy (column indices stay ascending: the renumbering is monotone)."""
    if not shift.removed:
        return adj
    keep, n = shift.keep, shift.kept
    new = np.cumsum(keep, dtype=np.int64) - 1  # the new position of each kept one
    counts = np.diff(adj.indptr)
    rows = np.repeat(np.arange(shift.n, dtype=np.int64), counts)
    live = keep[rows] & keep[adj.indices]
    per_row = np.bincount(new[rows[live]], minlength=n) if n else np.zeros(0, np.int64)
    dt = index_dtype(n, int(live.sum()))
    indptr = np.zeros(n + 1, dtype=dt)
    np.cumsum(per_row, out=indptr[1:])
    return Csr(indptr, new[adj.indices[live]].astype(dt), adj.data[live], (n, n))


def relink(adj: Csr, old: Edges, new: Edges, relinked: Sequence[int], n: int,
           shift: Shift | None = None) -> Csr:
    """The symmetric adjacency of `new` edges (n nodes) from that of `old`, given the rows
    `shift` removes from `old` (`dropped`) and the sources whose out-links may differ
    besides (`relinked`, positions of `new`, new nodes included); equal to
    adjacency(n, new). An old node's position is `shift.back` of its new one."""
    s = shift if shift is not None else Shift.none(int(adj.shape[0]))
    adj = dropped(adj, s)
    kept = s.kept

    def before(nodes: list[int]) -> list[set[int]]:
        """The old out-links of nodes < kept, in new positions (removed targets gone)."""
        if not s.removed:
            return _outs(old, nodes)
        found = _outs(old, s.back(np.asarray(nodes, dtype=np.int64)).tolist())
        flat = sorted({t for ts in found for t in ts})
        to = dict(zip(flat, s.forward(np.asarray(flat, dtype=np.int64)).tolist(),
                      strict=True))
        return [{to[t] for t in ts if to[t] >= 0} for ts in found]

    ps = sorted(set(relinked))
    olds = before([p for p in ps if p < kept]) + [set() for p in ps if p >= kept]
    pairs: set[tuple[int, int]] = set()
    for p, gone, came in zip(ps, olds, _outs(new, ps), strict=True):
        for t in gone ^ came:
            if t != p:  # a self-link is no pair (signals/graph.py `_linked_pairs`)
                pairs.add((min(p, t), max(p, t)))
    ends = sorted({x for pair in pairs for x in pair})
    then = dict(zip(ends, before([x for x in ends if x < kept])
                    + [set() for x in ends if x >= kept], strict=True))
    now = dict(zip(ends, _outs(new, ends), strict=True))
    rows: list[int] = []
    vals: list[float] = []
    cols: list[int] = []
    for a, b in sorted(pairs):
        if (b in then[a] or a in then[b]) != (b in now[a] or a in now[b]):
            w = 1.0 if b in now[a] or a in now[b] else -1.0
            rows += [a, b]
            cols += [b, a]
            vals += [w, w]
    if not rows and n == kept:
        return adj
    return adj.plus(np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64),
                    np.asarray(vals, dtype=np.float64), n)
