"""Dense signal: cosine similarity between the query embedding and each note's best chunk.

    dense(d, q) = max_{c in chunks(d)} <e(c), e(q)>

with e(.) the encoder's L2-normalised embedding, so the inner product is the cosine and the
raw score lies in [-1, 1]. Chunk embeddings come through the `EmbeddingCache`, keyed by the
sha256 of the chunk text, so unchanged text is never embedded twice.

Two layouts, chosen by the number of chunks when the index is built or compacted:

- exact (up to `DenseParams.approx_above` chunks): one float32 matrix, rows grouped by note
  in position order; a query is one row-wise dot product (`np.vecdot`, whose per-row result
  depends only on the row, unlike BLAS gemv whose rounding depends on where a row sits)
  followed by a segmented max (`np.maximum.reduceat`);
- approximate (above it): an IVF over int8 rows (ivf.py); a query scores the rows of its
  `nprobe` lists and returns, for the notes among them, their best chunk's cosine and 0 for
  every other note (fusion ranks only positive scores).

Incremental: `updated(corpus, ...)` applies a `CorpusDelta` (removals included) without
re-embedding or copying the base (signals/dense_update.py): the base stays in its own
coordinates, a cumulative removal maps its notes to current positions, base rows of removed
and changed notes are masked (`stale`), the new chunks of changed and appended notes live in
a small float32 `delta` (a new chunk of the approximate index goes to its nearest existing
list), and once delta rows plus masked rows exceed `compact_fraction` of the base rows the
two merge into a new base (`_compacted`). On the exact layout every score after any sequence
of updates equals, bit for bit, a fresh `build` on the final corpus (same cache). On the
approximate layout of at most `retrain_max_rows` live rows every change is followed by a
compaction, which trains the lists again (as does a change that takes the rows over
`approx_above`; one that takes them back under it builds, for the float rows): the IVF is a
function of the notes' paths and int8 rows alone (ivf.py, `canonical_order`), so after any
sequence of changes, in a running process or one catching up from a saved base, every note
scores the bits a fresh build gives it (same machine and BLAS). A retraining costs
O(rows x lists x dim) (~2.5 s CPU at 250,000 rows: session39/NOTES-DENSE41.md), so a larger
index follows history: its centroids stay, new chunks join the nearest list, and it is
trained again once the rows changed since its training pass `retrain_share` of its trained
rows (a running process) or by `retrained` (`rmh index`); until then `untrained_rows` counts
them, and hits beyond the first can differ from a fresh build's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from ...storage.corpus import Corpus
from ...storage.embeddings import EmbeddingCache
from .. import dense_store, ivf_store
from ..encoders import Encoder, Progress, encode_cached
from ..packed_texts import PackedTexts
from .dense_units import note_chunks_of
from .dense_update import Overlay, Rows, compacted_exact, compacted_ivf, starts_of
from .ivf import F32, I32, I64, IvfParams, IvfStore, quantize, room

Bools = npt.NDArray[np.bool_]
ENCODE_BLOCK = 16384  # chunks embedded and quantised at a time by an approximate build
# (its float32 rows, their cache lookup and quantisation: ~80 MB of temporaries at dim 384)


@dataclass(frozen=True)
class DenseParams:
    """When to go approximate and when to compact (defaults measured in
    bench/bench_dense_scale.py, BENCHMARKS.md)."""

    approx_above: int = 200_000  # chunks above which build/compaction use the IVF; 0 = never
    compact_fraction: float = 0.1  # merge once delta + masked rows exceed this share of base
    # the largest approximate index (live chunk rows) trained again at every change (equal to
    # a fresh build); a larger one keeps its lists until `retrained`; 0 = never at a change
    retrain_max_rows: int = 250_000
    # above it, the share of trained rows changed at which a running process trains again
    # and `rmh status` warns (retrieval/dense_health.py; measured: NOTES-DENSE42.md)
    retrain_share: float = 0.1
    ivf: IvfParams = field(default_factory=IvfParams)


@dataclass(frozen=True)
class DenseIndex:
    """Chunk embeddings of a corpus (module docstring). Base note i owns base rows
    `starts[i]:starts[i+1]` (in note order; on the exact layout `matrix` holds them)."""

    matrix: F32  # (base rows, dim) unit rows; (0, dim) on the approximate layout
    starts: I64  # (base notes,)
    fingerprint: str
    overlay: Overlay  # how the corpus differs from the base (signals/dense_update.py)
    ivf: IvfStore | None
    generation: int
    shape: tuple[int, int]  # (max_tokens, max_units) the chunks were cut with
    params: DenseParams
    scratch: str | None = None  # where the IVF's codes go on disk (None: in memory)

    @property
    def n_docs(self) -> int:
        return int(self.cut.shape[0])

    @property
    def cut(self) -> Bools:
        """(notes,) which notes' chunks were cut at `max_units`."""
        return self.overlay.cut

    @property
    def capped(self) -> int:
        """Notes whose chunks were cut at `max_units`."""
        return int(self.overlay.cut.sum())

    @property
    def stale(self) -> Bools:
        """(base notes,) base notes whose base rows are masked (removed or changed)."""
        return self.overlay.stale

    @property
    def delta(self) -> Rows:
        """Rows of the notes changed or added since the base, by current position."""
        return self.overlay.delta

    @property
    def base_rows(self) -> int:
        return self.ivf.rows if self.ivf is not None else int(self.matrix.shape[0])

    @property
    def n_chunks(self) -> int:
        """Live chunk rows (masked base rows not counted)."""
        return (self.base_rows - self.overlay.stale_rows(self._base_counts())
                + int(self.delta.matrix.shape[0]))

    @property
    def untrained_rows(self) -> int:
        """Chunk rows added, changed or removed since the IVF was trained (0 when exact):
        while above 0, hits beyond the first can differ from a fresh build's."""
        if self.ivf is None:
            return 0
        return int(self.delta.matrix.shape[0]) + self.overlay.stale_rows(self._base_counts())

    @property
    def staleness(self) -> str:
        """`untrained_rows` in words for receipts and `rmh index` ("" when 0)."""
        if not self.untrained_rows:
            return ""
        return (f"trained before {self.untrained_rows} of its chunk rows changed: hits beyond "
                "the first can differ from a fresh build's until `rmh index` trains it again")

    @property
    def nbytes(self) -> int:
        """Bytes of every array the index holds."""
        held = self.matrix.nbytes + self.starts.nbytes + self.overlay.nbytes
        return held + (0 if self.ivf is None else self.ivf.nbytes)

    @classmethod
    def build(cls, corpus: Corpus, encoder: Encoder, cache: EmbeddingCache | None,
              max_tokens: int = 256, progress: Progress | None = None, max_units: int = 0,
              params: DenseParams | None = None, scratch: str | None = None,
              count_op: Callable[[], None] | None = None) -> DenseIndex:
        """Chunk every note (title + body) and embed the chunks, reading/filling `cache`.
        With `max_units` > 0 a note contributes at most its first `max_units` chunks, so one
        huge note costs at most that many encoder calls (it stays findable by the lexical
        signals over its whole text, and densely by its first units). With `scratch` (a
        folder) an approximate index keeps its codes in a file there (ivf.py), or in memory
        when the file cannot be made, and the exact layout's rows persist there
        (retrieval/dense_store.py): a later build re-chunks only the notes they lack."""
        p = params or DenseParams()
        shape = (max_tokens, max_units)
        kept = ivf_store.restore(scratch, corpus, encoder, shape, p.ivf, p.approx_above,
                                 (ivf_store.BUILT, ivf_store.CAUGHT))  # same bytes (caught_up)
        if kept is not None:  # an approximate build an earlier process persisted
            return cls._exact(corpus, encoder, np.zeros((0, encoder.dim), np.float32),
                              kept.counts, kept.cut, shape, p, scratch, kept.ivf)
        if scratch is not None:  # the rows a build in an earlier process persisted
            got = dense_store.restore(
                scratch, corpus, encoder.fingerprint, shape,
                lambda at: note_chunks_of(corpus, at, encoder.count_tokens, max_tokens,
                                          max_units, []),
                lambda texts: encode_cached(encoder, texts, cache, progress), p.approx_above)
            if got is not None:
                return cls._exact(corpus, encoder, *got, shape, p, scratch)
        every = np.arange(len(corpus), dtype=np.int64)
        texts, counts, cut = note_chunks_of(corpus, every, encoder.count_tokens, max_tokens,
                                            max_units, PackedTexts(ENCODE_BLOCK))
        dim, ivf = encoder.dim, None
        if 0 < p.approx_above < len(texts):
            note = np.repeat(every, counts).astype(np.int32)
            ivf = _ivf_build(texts, note, corpus.paths, encoder, cache, progress, p.ivf,
                             scratch)
            matrix = np.zeros((0, dim), dtype=np.float32)
            ivf_store.save_build(scratch, corpus, encoder.fingerprint, shape, p.ivf, counts, cut,
                                 ivf, count_op=count_op)
        else:
            matrix = encode_cached(encoder, texts, cache, progress)
            if scratch is not None:
                dense_store.save(scratch, dense_store.note_keys(corpus, scratch), counts, cut,
                                 matrix, encoder.fingerprint, shape)
        return cls(matrix, starts_of(counts), encoder.fingerprint, Overlay.empty(cut, dim), ivf,
                   corpus.generation, shape, p, scratch)

    @classmethod
    def _exact(cls, corpus: Corpus, encoder: Encoder, matrix: F32, counts: I64, cut: Bools,
               shape: tuple[int, int], p: DenseParams, scratch: str | None,
               ivf: IvfStore | None = None) -> DenseIndex:
        return cls(matrix, starts_of(counts), encoder.fingerprint,
                   Overlay.empty(cut, encoder.dim), ivf, corpus.generation, shape, p, scratch)

    @classmethod
    def caught_up(cls, base: Corpus, corpus: Corpus, encoder: Encoder,
                  cache: EmbeddingCache | None, max_tokens: int = 256,
                  progress: Progress | None = None, max_units: int = 0,
                  params: DenseParams | None = None, scratch: str | None = None,
                  count_op: Callable[[], None] | None = None) -> DenseIndex:
        """The index of `base` (a saved state: its stores load) brought up to `corpus`
        without compacting the exact layout. An IVF trained again on the way (`updated`) is
        saved in ivf_store's `CAUGHT` slot, and a later process catching up to the same
        notes loads it: one training per state, not one per process."""
        p, shape = params or DenseParams(), (max_tokens, max_units)
        kept = ivf_store.restore(scratch, corpus, encoder, shape, p.ivf, p.approx_above,
                                 (ivf_store.CAUGHT,))
        if kept is not None:
            return cls._exact(corpus, encoder, np.zeros((0, encoder.dim), np.float32),
                              kept.counts, kept.cut, shape, p, scratch, kept.ivf)
        start = cls.build(base, encoder, cache, max_tokens, progress, max_units, p, scratch,
                          count_op)
        out = start.updated(corpus, encoder, cache, max_tokens, progress, max_units,
                            compact=False)
        if out.ivf is not None and out.ivf is not start.ivf:
            ivf_store.save_build(scratch, corpus, encoder.fingerprint, shape, p.ivf,
                                 out._base_counts(), out.cut, out.ivf, ivf_store.CAUGHT,
                                 count_op)
        return out

    def updated(
        self, corpus: Corpus, encoder: Encoder, cache: EmbeddingCache | None,
        max_tokens: int = 256, progress: Progress | None = None, max_units: int = 0,
        compact: bool = True,
    ) -> DenseIndex:
        """This index for `corpus`: from its delta chain when the chain reaches back to this
        index's generation (removed notes masked, only changed and appended notes chunked and
        embedded: signals/dense_update.py), else a build. Without `compact` the delta is
        never merged into a new base here."""
        d = corpus.delta
        since = None if d is None else d.changes_since(self.generation, self.n_docs,
                                                       len(corpus))
        if (since is None or encoder.fingerprint != self.fingerprint
                or (max_tokens, max_units) != self.shape):
            return DenseIndex.build(corpus, encoder, cache, max_tokens, progress, max_units,
                                    self.params, self.scratch)
        fresh = np.array(since.changed, dtype=np.int64)
        if fresh.size == 0 and not since.removed:
            return replace(self, generation=corpus.generation)
        ov = self.overlay.removing(since.shift)
        if fresh.size:
            texts, counts, cut = note_chunks_of(corpus, fresh, encoder.count_tokens,
                                                max_tokens, max_units, [])
            vecs = encode_cached(encoder, texts, cache, progress)
            lists = None if self.ivf is None else self.ivf.lists_of(vecs)
            ov = ov.replacing(fresh, counts, cut, vecs, lists, len(corpus))
        out = replace(self, overlay=ov, generation=corpus.generation)
        approx = 0 < self.params.approx_above < out.n_chunks  # the layout a build picks
        if self.ivf is not None and not approx:  # the float rows an exact build embeds
            return DenseIndex.build(corpus, encoder, cache, max_tokens, progress, max_units,
                                    self.params, self.scratch)
        if approx and (self.ivf is None or out.n_chunks <= self.params.retrain_max_rows):
            return out._compacted(corpus.paths)  # a fresh build's lists (module docstring)
        due = out.delta.matrix.shape[0] + ov.stale_rows(self._base_counts())
        share = self.params.compact_fraction if self.ivf is None else self.params.retrain_share
        return out._compacted(corpus.paths) if compact and due > share * self.base_rows else out

    def retrained(self, corpus: Corpus) -> DenseIndex:
        """This index (of `corpus`) with its IVF trained again when rows changed since its
        training: a fresh build's, saved in ivf_store's `CAUGHT` slot for later processes."""
        if not self.untrained_rows:
            return self
        out = self._compacted(corpus.paths)
        if out.ivf is not None:
            ivf_store.save_build(self.scratch, corpus, self.fingerprint, self.shape,
                                 self.params.ivf, out._base_counts(), out.cut, out.ivf,
                                 ivf_store.CAUGHT)
        return out

    def _base_counts(self) -> I64:
        return np.diff(np.append(self.starts, self.base_rows))

    def _compacted(self, paths: Sequence[str] | None = None) -> DenseIndex:
        """Base and overlay merged into a new base (re-trained when approximate; `paths`, the
        corpus's, order the rows: ivf.canonical_order; without them, note positions)."""
        p, ov = self.params, self.overlay
        if self.ivf is not None:
            matrix, counts, ivf = compacted_ivf(self.ivf, ov, p.ivf, self.scratch, ENCODE_BLOCK,
                                                paths)
        else:
            matrix, counts, ivf = compacted_exact(self.matrix, self._base_counts(), ov,
                                                  p.approx_above, p.ivf, self.scratch, paths)
        return replace(self, matrix=matrix, starts=starts_of(counts),
                       overlay=Overlay.empty(ov.cut, self.matrix.shape[1]), ivf=ivf)

    def score_vector(self, qvec: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        """Best-chunk cosine per note for a unit query vector (zeros for an empty corpus);
        on the approximate layout, 0 for the notes outside the probed lists."""
        q = qvec.astype(np.float32)
        if self.ivf is not None:
            return self._approx_scores(self.ivf, q)
        out = np.zeros(self.n_docs, dtype=np.float64)
        if self.starts.shape[0] and self.matrix.shape[0]:
            base = np.maximum.reduceat(np.vecdot(self.matrix, q), self.starts)
            kept = self.overlay.removal  # base notes to their positions, removed ones dropped
            out[: kept.kept] = base[kept.keep] if kept else base
        if self.delta.notes.shape[0]:
            sims = np.vecdot(self.delta.matrix, q)
            out[self.delta.notes] = np.maximum.reduceat(sims, self.delta.starts)
        return out

    def _approx_scores(self, ivf: IvfStore, q: F32) -> npt.NDArray[np.float64]:
        lists = ivf.probe(q, self.params.ivf.nprobe)
        notes, sims = ivf.scan(q, lists)
        if self.overlay.removal:  # base notes to their current positions, stale ones out
            at = self.overlay.live_at[notes]
            live = at >= 0
            notes, sims = at[live], sims[live]
        elif self.stale.any():
            live = ~self.stale[notes]
            notes, sims = notes[live], sims[live]
        rows, owners = self.delta.in_lists(lists)
        if rows.size:
            notes = np.concatenate((notes, owners))
            sims = np.concatenate((sims, np.vecdot(self.delta.matrix[rows], q)))
        # the best scanned row per note, 0 for notes with none (only scanned entries touched);
        # float64 values, as `best` holds: ufunc.at casting each one was ~30x slower (10 ms a
        # query at 10^6 notes), and the cast is exact
        best = np.zeros(self.n_docs, dtype=np.float64)
        best[notes] = -np.inf
        np.maximum.at(best, notes, sims.astype(np.float64))
        return best


def _ivf_build(texts: Sequence[str], note: I32, paths: Sequence[str], encoder: Encoder,
               cache: EmbeddingCache | None, progress: Progress | None, params: IvfParams,
               scratch: str | None) -> IvfStore:
    """Embed `texts` a block at a time into int8 rows (never the whole float32 matrix),
    then train (ivf.py: on the rows and paths alone)."""
    n = len(texts)
    codes = room(n, encoder.dim, scratch)
    scale = np.empty(n, dtype=np.float32)
    for s in range(0, n, ENCODE_BLOCK):
        e = min(n, s + ENCODE_BLOCK)
        block, scale[s:e] = quantize(encode_cached(encoder, texts[s:e], cache))
        codes.put(s, block)
        if progress is not None:
            progress(e, n, "embedding")
    return IvfStore.train(codes, scale, note, paths, params)


def dense_scores(index: DenseIndex, encoder: Encoder, query: str,
                 qvec: npt.NDArray[np.float32] | None = None) -> npt.NDArray[np.float64]:
    """Score every note for `query`, embedded here unless `qvec` (the same encoder's) is given."""
    if encoder.fingerprint != index.fingerprint:
        raise ValueError("dense index was built with a different encoder")
    return index.score_vector(encoder.encode([query])[0] if qvec is None else qvec)
