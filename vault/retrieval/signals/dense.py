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

Incremental: `updated(corpus, ...)` applies a `CorpusDelta` without re-embedding or copying
the base: base rows of changed notes are masked (`stale`), the new chunks of changed and
appended notes live in a small float32 `delta` (a new chunk of the approximate index goes to
its nearest existing list), and once delta rows plus masked rows exceed `compact_fraction`
of the base rows the two merge into a new base (`_compacted`). On the exact layout every
score after any sequence of updates equals, bit for bit, a fresh `build` on the final corpus
(same cache). On the approximate layout the result depends on history: the centroids are
those trained at the last build or compaction, on that base's rows in its row order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from ...storage.corpus import Corpus
from ...storage.embeddings import EmbeddingCache
from ...storage.row_file import RowFile
from .. import dense_store, ivf_store
from ..chunking import chunk_note
from ..encoders import Encoder, Progress, encode_cached
from ..packed_texts import PackedTexts
from .ivf import F32, I32, I64, Codes, IvfParams, IvfStore, MemoryCodes, quantize, sample_rows

Bools = npt.NDArray[np.bool_]
Texts = TypeVar("Texts", list[str], PackedTexts)
ENCODE_BLOCK = 16384  # chunks embedded and quantised at a time by an approximate build
# (its float32 rows, their cache lookup and quantisation: ~80 MB of temporaries at dim 384)


@dataclass(frozen=True)
class DenseParams:
    """When to go approximate and when to compact (defaults measured in
    bench/bench_dense_scale.py, BENCHMARKS.md)."""

    approx_above: int = 200_000  # chunks above which build/compaction use the IVF; 0 = never
    compact_fraction: float = 0.1  # merge once delta + masked rows exceed this share of base
    ivf: IvfParams = field(default_factory=IvfParams)


@dataclass(frozen=True)
class Rows:
    """Chunk vectors of some notes: note `notes[j]` owns rows `starts[j]:starts[j+1]`;
    `lists[r]` is row r's coarse list on the approximate layout (empty on the exact one)."""

    matrix: F32
    notes: I64
    starts: I64
    lists: I32

    @classmethod
    def of(cls, matrix: F32, row_note: I64, lists: I32) -> Rows:
        """From rows sorted by note (`row_note` ascending)."""
        first = np.flatnonzero(np.diff(row_note, prepend=-1)) if row_note.size else row_note
        return cls(matrix, row_note[first], first.astype(np.int64), lists)

    def row_notes(self) -> I64:
        counts = np.diff(np.append(self.starts, self.matrix.shape[0]))
        return np.repeat(self.notes, counts)


def _no_rows(dim: int) -> Rows:
    return Rows(np.zeros((0, dim), np.float32), np.zeros(0, np.int64), np.zeros(0, np.int64),
                np.zeros(0, np.int32))


@dataclass(frozen=True)
class DenseIndex:
    """Chunk embeddings of a corpus (module docstring). Base note i owns base rows
    `starts[i]:starts[i+1]` (in note order; on the exact layout `matrix` holds them)."""

    matrix: F32  # (base rows, dim) unit rows; (0, dim) on the approximate layout
    starts: I64  # (base notes,)
    fingerprint: str
    capped: int  # notes whose chunks were cut at `max_units`
    cut: Bools  # (notes,) which notes were cut
    stale: Bools  # (base notes,) base notes whose base rows are masked
    delta: Rows
    ivf: IvfStore | None
    generation: int
    shape: tuple[int, int]  # (max_tokens, max_units) the chunks were cut with
    params: DenseParams
    scratch: str | None = None  # where the IVF's codes go on disk (None: in memory)

    @property
    def n_docs(self) -> int:
        return int(self.cut.shape[0])

    @property
    def base_rows(self) -> int:
        return self.ivf.rows if self.ivf is not None else int(self.matrix.shape[0])

    @property
    def n_chunks(self) -> int:
        """Live chunk rows (masked base rows not counted)."""
        return self.base_rows - self._stale_rows() + int(self.delta.matrix.shape[0])

    @property
    def nbytes(self) -> int:
        """Bytes of every array the index holds."""
        arrays = (self.matrix, self.starts, self.cut, self.stale, self.delta.matrix,
                  self.delta.notes, self.delta.starts, self.delta.lists)
        return sum(a.nbytes for a in arrays) + (0 if self.ivf is None else self.ivf.nbytes)

    @classmethod
    def build(cls, corpus: Corpus, encoder: Encoder, cache: EmbeddingCache | None,
              max_tokens: int = 256, progress: Progress | None = None, max_units: int = 0,
              params: DenseParams | None = None, scratch: str | None = None) -> DenseIndex:
        """Chunk every note (title + body) and embed the chunks, reading/filling `cache`.
        With `max_units` > 0 a note contributes at most its first `max_units` chunks, so one
        huge note costs at most that many encoder calls (it stays findable by the lexical
        signals over its whole text, and densely by its first units). With `scratch` (a
        folder) an approximate index keeps its codes in a file there (ivf.py), or in memory
        when the file cannot be made, and the exact layout's rows persist there
        (retrieval/dense_store.py): a later build re-chunks only the notes they lack."""
        p = params or DenseParams()
        shape = (max_tokens, max_units)
        kept = ivf_store.restore(scratch, corpus, encoder, shape, p.ivf, p.approx_above)
        if kept is not None:  # an approximate build an earlier process persisted
            return cls._exact(corpus, encoder, np.zeros((0, encoder.dim), np.float32),
                              kept.counts, kept.cut, shape, p, scratch, kept.ivf)
        if scratch is not None:  # the rows a build in an earlier process persisted
            got = dense_store.restore(
                scratch, corpus, encoder.fingerprint, shape,
                lambda at: _note_chunks(corpus, at, encoder.count_tokens, max_tokens,
                                        max_units, []),
                lambda texts: encode_cached(encoder, texts, cache, progress), p.approx_above)
            if got is not None:
                return cls._exact(corpus, encoder, *got, shape, p, scratch)
        every = np.arange(len(corpus), dtype=np.int64)
        texts, counts, cut = _note_chunks(corpus, every, encoder.count_tokens, max_tokens,
                                          max_units, PackedTexts(ENCODE_BLOCK))
        starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
        dim, ivf = encoder.dim, None
        if 0 < p.approx_above < len(texts):
            note = np.repeat(every, counts).astype(np.int32)
            ivf = _ivf_build(texts, note, encoder, cache, progress, p.ivf, scratch)
            matrix = np.zeros((0, dim), dtype=np.float32)
            ivf_store.save_build(scratch, corpus, encoder, shape, p.ivf, counts, cut, ivf)
        else:
            matrix = encode_cached(encoder, texts, cache, progress)
            if scratch is not None:
                dense_store.save(scratch, dense_store.note_keys(corpus, scratch), counts, cut,
                                 matrix, encoder.fingerprint, shape)
        return cls(matrix, starts[: len(corpus)], encoder.fingerprint, int(cut.sum()), cut,
                   np.zeros(len(corpus), np.bool_), _no_rows(dim), ivf, corpus.generation,
                   shape, p, scratch)

    @classmethod
    def _exact(cls, corpus: Corpus, encoder: Encoder, matrix: F32, counts: I64, cut: Bools,
               shape: tuple[int, int], p: DenseParams, scratch: str | None,
               ivf: IvfStore | None = None) -> DenseIndex:
        starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
        return cls(matrix, starts[: len(corpus)], encoder.fingerprint, int(cut.sum()), cut,
                   np.zeros(len(corpus), np.bool_), _no_rows(encoder.dim), ivf,
                   corpus.generation, shape, p, scratch)

    def updated(
        self, corpus: Corpus, encoder: Encoder, cache: EmbeddingCache | None,
        max_tokens: int = 256, progress: Progress | None = None, max_units: int = 0,
        compact: bool = True,
    ) -> DenseIndex:
        """This index for `corpus`: from its delta chain when the chain reaches back to this
        index's generation (only changed and appended notes are chunked and embedded), else a
        build. Without `compact` the delta is never merged into a new base here."""
        d = corpus.delta
        since = None if d is None else d.changes_since(self.generation, self.n_docs,
                                                       len(corpus))
        if (since is None or since.removed or encoder.fingerprint != self.fingerprint
                or (max_tokens, max_units) != self.shape):
            return DenseIndex.build(corpus, encoder, cache, max_tokens, progress, max_units,
                                    self.params, self.scratch)
        fresh = np.array(since.changed, dtype=np.int64)
        if fresh.size == 0:
            return replace(self, generation=corpus.generation)
        texts, counts, cut_fresh = _note_chunks(corpus, fresh, encoder.count_tokens,
                                                max_tokens, max_units, [])
        vecs = encode_cached(encoder, texts, cache, progress)
        old = self.delta.row_notes()
        keep = ~np.isin(old, fresh)
        row_note = np.concatenate((old[keep], np.repeat(fresh, counts)))
        order = np.argsort(row_note, kind="stable")
        rows = np.concatenate((self.delta.matrix[keep], vecs))[order]
        lists = self.delta.lists  # empty on the exact layout
        if self.ivf is not None:
            lists = np.concatenate((lists[keep], self.ivf.lists_of(vecs)))[order]
        delta = Rows.of(rows, row_note[order], lists)
        stale = self.stale.copy()
        stale[fresh[fresh < stale.shape[0]]] = True
        cut = np.concatenate((self.cut, np.zeros(len(corpus) - self.n_docs, np.bool_)))
        cut[fresh] = cut_fresh
        out = replace(self, delta=delta, stale=stale, cut=cut, capped=int(cut.sum()),
                      generation=corpus.generation)
        due = out.delta.matrix.shape[0] + out._stale_rows()
        return (out._compacted() if compact and due > self.params.compact_fraction
                * self.base_rows else out)

    def _base_counts(self) -> I64:
        return np.diff(np.append(self.starts, self.base_rows))

    def _stale_rows(self) -> int:
        return int(self._base_counts()[self.stale].sum()) if self.stale.any() else 0

    def _compacted(self) -> DenseIndex:
        """Base and delta merged into a new base (re-trained when approximate)."""
        n, dim, p = self.n_docs, self.matrix.shape[1], self.params
        delta_note = self.delta.row_notes()
        if self.ivf is not None:
            live = ~self.stale[self.ivf.note]
            dcodes, dscale = quantize(self.delta.matrix)
            codes = _live_codes(self.ivf.codes, live, dcodes, self.scratch)
            scale = np.concatenate((self.ivf.scale[live], dscale))
            note = np.concatenate((self.ivf.note[live], delta_note.astype(np.int32)))
            pick = sample_rows(len(note), p.ivf.train_per_list * p.ivf.lists(len(note)))
            sample = codes.take(pick).astype(np.float32) * scale[pick, None]
            ivf: IvfStore | None = IvfStore.train(codes, scale, note, sample, p.ivf)
            matrix, counts = np.zeros((0, dim), np.float32), np.bincount(note, minlength=n)
        else:
            live = np.repeat(~self.stale, self._base_counts())
            base_note = np.repeat(np.arange(self.stale.shape[0]), self._base_counts())
            row_note = np.concatenate((base_note[live], delta_note))
            order = np.argsort(row_note, kind="stable")
            matrix = np.concatenate((self.matrix[live], self.delta.matrix))[order]
            counts, ivf = np.bincount(row_note, minlength=n), None
            if 0 < p.approx_above < matrix.shape[0]:
                ivf = _ivf_of(matrix, row_note[order].astype(np.int32), p.ivf, self.scratch)
                matrix = np.zeros((0, dim), np.float32)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)[:n]
        return replace(self, matrix=matrix, starts=starts, stale=np.zeros(n, np.bool_),
                       delta=_no_rows(dim), ivf=ivf)

    def score_vector(self, qvec: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        """Best-chunk cosine per note for a unit query vector (zeros for an empty corpus);
        on the approximate layout, 0 for the notes outside the probed lists."""
        q = qvec.astype(np.float32)
        if self.ivf is not None:
            return self._approx_scores(self.ivf, q)
        out = np.zeros(self.n_docs, dtype=np.float64)
        if self.starts.shape[0] and self.matrix.shape[0]:
            base = np.maximum.reduceat(np.vecdot(self.matrix, q), self.starts)
            out[: self.starts.shape[0]] = base
        if self.delta.notes.shape[0]:
            sims = np.vecdot(self.delta.matrix, q)
            out[self.delta.notes] = np.maximum.reduceat(sims, self.delta.starts)
        return out

    def _approx_scores(self, ivf: IvfStore, q: F32) -> npt.NDArray[np.float64]:
        lists = ivf.probe(q, self.params.ivf.nprobe)
        notes, sims = ivf.scan(q, lists)
        if self.stale.any():
            live = ~self.stale[notes]
            notes, sims = notes[live], sims[live]
        sel = np.isin(self.delta.lists, lists)
        if sel.any():
            notes = np.concatenate((notes, self.delta.row_notes()[sel].astype(np.int32)))
            sims = np.concatenate((sims, np.vecdot(self.delta.matrix[sel], q)))
        # the best scanned row per note, 0 for notes with none (only scanned entries touched);
        # float64 values, as `best` holds: ufunc.at casting each one was ~30x slower (10 ms a
        # query at 10^6 notes), and the cast is exact
        best = np.zeros(self.n_docs, dtype=np.float64)
        best[notes] = -np.inf
        np.maximum.at(best, notes, sims.astype(np.float64))
        return best


def _row_file(rows: int, dim: int, scratch: str | None) -> RowFile | None:
    """A file in `scratch` for `rows` int8 rows, or None (no folder named, or no room or no
    folder there: then memory, the same bytes)."""
    if scratch is None:
        return None
    try:
        return RowFile(scratch, rows, dim, np.int8)
    except OSError:
        return None


def _codes(rows: int, dim: int, scratch: str | None) -> Codes:
    """Room for `rows` int8 rows: a file in `scratch` when it can be made, else memory."""
    return _row_file(rows, dim, scratch) or MemoryCodes.empty(rows, dim)


def _live_codes(base: Codes, live: Bools, extra: npt.NDArray[np.int8], scratch: str | None
                ) -> Codes:
    """The `live` rows of `base` followed by `extra`, a block at a time."""
    out = _codes(int(live.sum()) + extra.shape[0], base.shape[1], scratch)
    at = 0
    for s in range(0, base.shape[0], ENCODE_BLOCK):
        rows = base.span(s, s + ENCODE_BLOCK)[live[s : s + ENCODE_BLOCK]]
        out.put(at, rows)
        at += rows.shape[0]
    out.put(at, extra)
    return out


def _ivf_build(texts: Sequence[str], note: I32, encoder: Encoder, cache: EmbeddingCache | None,
               progress: Progress | None, params: IvfParams, scratch: str | None) -> IvfStore:
    """Embed `texts` a block at a time into int8 rows (never the whole float32 matrix),
    keeping the k-means sample rows in float32, then train."""
    n = len(texts)
    codes = _codes(n, encoder.dim, scratch)
    scale = np.empty(n, dtype=np.float32)
    pick = sample_rows(n, params.train_per_list * params.lists(n))
    sample = np.empty((pick.shape[0], encoder.dim), dtype=np.float32)
    for s in range(0, n, ENCODE_BLOCK):
        e = min(n, s + ENCODE_BLOCK)
        vecs = encode_cached(encoder, texts[s:e], cache)
        block, scale[s:e] = quantize(vecs)
        codes.put(s, block)
        lo, hi = np.searchsorted(pick, [s, e])
        sample[lo:hi] = vecs[pick[lo:hi] - s]
        if progress is not None:
            progress(e, n, "embedding")
    return IvfStore.train(codes, scale, note, sample, params)


def _ivf_of(matrix: F32, note: I32, params: IvfParams, scratch: str | None) -> IvfStore:
    quantized, scale = quantize(matrix)
    codes: Codes = MemoryCodes(quantized)
    spill = _row_file(matrix.shape[0], matrix.shape[1], scratch)
    if spill is not None:  # the codes go to the file; the array is dropped (no second copy)
        spill.put(0, quantized)
        codes = spill
        del quantized
    pick = sample_rows(matrix.shape[0], params.train_per_list * params.lists(matrix.shape[0]))
    return IvfStore.train(codes, scale, note, matrix[pick], params)


def _note_chunks(
    corpus: Corpus, positions: I64, count_tokens: Callable[[str], int], max_tokens: int,
    max_units: int, texts: Texts,
) -> tuple[Texts, I64, Bools]:
    """Chunk texts of the notes at `positions` (in that order, appended to `texts`: a list,
    or a build's `PackedTexts`), chunks per note, and which notes were cut at `max_units`."""
    counts = np.zeros(positions.shape[0], dtype=np.int64)
    cut = np.zeros(positions.shape[0], dtype=np.bool_)
    for j, i in enumerate(positions.tolist()):
        chunks, cut[j] = note_chunks(corpus.titles[i], corpus.bodies[i],
                                     corpus.frontmatter[i], count_tokens, max_tokens, max_units)
        texts.extend(chunks)
        counts[j] = len(chunks)
    return texts, counts, cut


def note_chunks(title: str, body: str, frontmatter: Mapping[str, Any],
                count_tokens: Callable[[str], int], max_tokens: int, max_units: int
                ) -> tuple[tuple[str, ...], bool]:
    """The chunks one note is embedded as, and whether they were cut at `max_units` (the
    one definition the index and erasure's embedding keys share)."""
    speaker = frontmatter.get("speaker")
    chunks = chunk_note(title, body, count_tokens, max_tokens,
                        speaker.strip() if isinstance(speaker, str) else "",
                        max_units + 1 if max_units > 0 else 0)  # one more tells a cut note
    if 0 < max_units < len(chunks):
        return chunks[:max_units], True
    return chunks, False


def corpus_chunks(
    corpus: Corpus, count_tokens: Callable[[str], int], max_tokens: int = 256, max_units: int = 0
) -> tuple[list[str], npt.NDArray[np.int64], int]:
    """The dense units of every note, in position order: (chunk texts, first row of each
    note, notes cut at `max_units`). What `DenseIndex.build` embeds and `rmh index` (local or
    on Ray) must find in the cache."""
    every = np.arange(len(corpus), dtype=np.int64)
    texts, counts, cut = _note_chunks(corpus, every, count_tokens, max_tokens, max_units, [])
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)[: len(corpus)]
    return texts, starts, int(cut.sum())


def dense_scores(index: DenseIndex, encoder: Encoder, query: str,
                 qvec: npt.NDArray[np.float32] | None = None) -> npt.NDArray[np.float64]:
    """Score every note for `query`, embedded here unless `qvec` (the same encoder's) is given."""
    if encoder.fingerprint != index.fingerprint:
        raise ValueError("dense index was built with a different encoder")
    return index.score_vector(encoder.encode([query])[0] if qvec is None else qvec)
