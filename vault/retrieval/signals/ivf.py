"""An inverted-file (IVF) index over int8 chunk vectors: the approximate dense path.

Coarse quantiser (Jégou, Douze & Schmid 2011, "Product quantization for nearest neighbor
search", §4, IVF): k centroids c_1..c_k from spherical k-means (Dhillon & Modha 2001) on a
fixed, evenly spaced sample of the rows, centred on the sample mean mu (sentence embeddings
share a common direction that would otherwise pull most rows into a few huge lists; since
<q, x> = <q, x - mu> + <q, mu>, centring changes no ranking); every row x goes to the list
argmax_l <c_l, x - mu>. A query q scans the `nprobe` lists with the highest <c_l, q> and
scores every row there against its stored vector.

Rows are stored as int8 with one float32 scale per row (symmetric per-row quantisation):

    s(x) = max_j |x_j| / 127,  code(x) = round(x / s(x)),  <q, x> ~= s(x) * <q, code(x)>

a quarter of the float32 bytes; for unit vectors of dim 384 the score error is ~1e-3 (below
the gaps that decide a top 10, measured in bench/bench_dense_scale.py).

Where the codes live (`Codes`): in memory (`MemoryCodes`, an int8 array reordered in place)
or, when the engine names a scratch folder, on disk (`storage/row_file.RowFile`: an unlinked
file). On disk, a query reads only its `nprobe` lists (contiguous runs of
rows, ~21 MB at 10^6 notes) through a shared mapping, unmapped after the scan, so the process
does not hold the 1.1 GiB of codes; the page cache keeps them while memory allows. Both give the
same bytes out.

Determinism: no random numbers; initial centroids are evenly spaced sample rows, a fixed
number of Lloyd iterations, ties to the lowest index (np.argmax, stable sorts), an empty
cluster keeps its previous centroid. Same rows in the same order on the same BLAS build give
the same bytes; the sample is drawn and ordered by note path (`path_sample`), so the same
notes at other positions (another indexing history) train the same centroids, and a scanned
row's score is np.vecdot's, which depends on the row alone (not on its place in a block).
Sums and products go through BLAS, whose rounding differs between CPU kernels
and thread counts, so bytes across machines may differ: a build persisted by
retrieval/ivf_store.py and loaded on another machine is the saving machine's build.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from ...storage.row_file import RowFile

F32 = npt.NDArray[np.float32]
I8 = npt.NDArray[np.int8]
I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]

BLOCK = 16384  # rows per matrix product when assigning (bounds the temporary)
SCAN_BLOCK = 512  # rows per matrix-vector product in a query's scan (768 KB of float32)
PERMUTE_BLOCK = 65_536  # rows placed per step of `permute_rows` (24 MiB of int8 at dim 384)


@dataclass(frozen=True)
class IvfParams:
    """Shape of the coarse quantiser and of a query's scan (defaults from
    bench/bench_dense_scale.py, BENCHMARKS.md)."""

    nprobe: int = 32  # lists scanned per query
    lists_per_sqrt: float = 1.0  # k = lists_per_sqrt * sqrt(rows)
    train_per_list: int = 32  # sample rows per list for k-means (capped at all rows)
    train_iters: int = 8  # Lloyd iterations

    def lists(self, rows: int) -> int:
        return max(1, min(rows, round(self.lists_per_sqrt * math.sqrt(rows))))


class Codes(Protocol):
    """The IVF's int8 rows, wherever they are kept (module docstring)."""

    @property
    def shape(self) -> tuple[int, int]: ...

    def span(self, lo: int, hi: int) -> npt.NDArray[np.generic]:
        """Rows lo:hi (a view or a new array: callers only read it)."""
        ...

    def take(self, rows: I64) -> npt.NDArray[np.generic]:
        """The rows at `rows`, as a new array."""
        ...

    def blocks(self, lo: int, hi: int, size: int) -> Iterator[npt.NDArray[np.generic]]:
        """Rows lo:hi, `size` at a time, each valid until the next (a query's scan)."""
        ...

    def put(self, at: int, block: npt.NDArray[np.generic]) -> None:
        """Write `block` as rows at, at + 1, ... (before the store is trained)."""
        ...

    def permuted(self, order: I64) -> Codes:
        """Rows reordered so that row p is row order[p]; this store is given up."""
        ...


@dataclass(frozen=True)
class MemoryCodes:
    """Codes in one int8 array (counted by `derived.array_bytes`)."""

    array: I8

    @classmethod
    def empty(cls, rows: int, dim: int) -> MemoryCodes:
        return cls(np.empty((rows, dim), dtype=np.int8))

    @property
    def shape(self) -> tuple[int, int]:
        return (int(self.array.shape[0]), int(self.array.shape[1]))

    def span(self, lo: int, hi: int) -> I8:
        return self.array[lo:hi]

    def take(self, rows: I64) -> I8:
        out: I8 = self.array[rows]
        return out

    def blocks(self, lo: int, hi: int, size: int) -> Iterator[I8]:
        for s in range(lo, min(hi, self.array.shape[0]), size):
            yield self.array[s : min(hi, s + size)]

    def put(self, at: int, block: npt.NDArray[np.generic]) -> None:
        self.array[at : at + block.shape[0]] = block

    def permuted(self, order: I64) -> MemoryCodes:
        permute_rows(self.array, order)
        return self


def row_file(rows: int, dim: int, scratch: str | None) -> RowFile | None:
    """A file in `scratch` for `rows` int8 rows, or None (no folder named, or no room or no
    folder there: then memory, the same bytes)."""
    if scratch is None:
        return None
    try:
        return RowFile(scratch, rows, dim, np.int8)
    except OSError:
        return None


def room(rows: int, dim: int, scratch: str | None) -> Codes:
    """Room for `rows` int8 rows: a file in `scratch` when it can be made, else memory."""
    return row_file(rows, dim, scratch) or MemoryCodes.empty(rows, dim)


def quantize(rows: F32) -> tuple[I8, F32]:
    """Per-row symmetric int8 codes and scales (a zero row gets scale 1 and zero codes)."""
    peak = np.abs(rows).max(axis=1) if rows.shape[0] else np.zeros(0, np.float32)
    scale = np.where(peak > 0, peak / np.float32(127.0), np.float32(1.0)).astype(np.float32)
    q = rows / scale[:, None]  # one float temporary, rounded and clipped in place
    np.rint(q, out=q)
    np.clip(q, -127, 127, out=q)
    return q.astype(np.int8), scale


def sample_rows(n: int, m: int) -> I64:
    """`m` evenly spaced row numbers out of `n` (all of them when m >= n), ascending."""
    if m >= n:
        return np.arange(n, dtype=np.int64)
    return np.unique(np.linspace(0, n - 1, m).round().astype(np.int64))


def path_sample(note: I32, paths: Sequence[str] | None, m: int) -> I64:
    """`m` rows evenly spaced over the rows in path order (a note's rows in chunk order;
    `note[r]` is row r's note position), in that order: the k-means sample of the same files
    whatever their positions (positions follow note ids, ids the indexing history). Without
    `paths`, `sample_rows` (row order)."""
    if paths is None:
        return sample_rows(note.shape[0], m)
    rank = np.empty(len(paths), dtype=np.int64)
    rank[np.argsort(np.asarray(paths, dtype=str), kind="stable")] = np.arange(len(paths))
    order = np.lexsort((np.arange(note.shape[0]), rank[note]))
    out: I64 = order[sample_rows(note.shape[0], m)]
    return out


def assign(rows: F32 | I8 | Codes, centroids: F32, mean: F32 | None = None,
           scale: F32 | None = None) -> I32:
    """Nearest centroid (largest <c, x - mean>, lowest index on ties) of every row; with
    `scale`, `rows` are int8 codes of x / scale (an array, or a `Codes` read a block at a
    time)."""
    out = np.empty(rows.shape[0], dtype=np.int32)
    ct = np.ascontiguousarray(centroids.T)
    for s in range(0, rows.shape[0], BLOCK):
        part = rows[s : s + BLOCK] if isinstance(rows, np.ndarray) else rows.span(s, s + BLOCK)
        block = part.astype(np.float32)
        if scale is not None:
            block *= scale[s : s + BLOCK, None]
        if mean is not None:
            block -= mean
        out[s : s + BLOCK] = np.argmax(block @ ct, axis=1)
    return out


def permute_rows(rows: I8, order: I64, block: int = PERMUTE_BLOCK) -> None:
    """`rows[:] = rows[order]` in place, with O(block) rows of extra memory instead of a
    second copy of `rows` (1.1 GiB of codes at 10^6 notes). Positions are filled a block
    at a time: the rows a block needs are copied out, the rows it held that later blocks
    still need move into the slots just read, and two int64 maps track where each original
    row lives now. `order` must be a permutation."""
    n = int(order.shape[0])
    at = np.arange(n, dtype=np.int64)  # at[p]: the original row now at position p
    where = np.arange(n, dtype=np.int64)  # where[r]: the position of original row r
    for s in range(0, n, block):
        e = min(n, s + block)
        need = order[s:e]
        src = where[need]  # all >= s: positions before s hold rows already placed
        taken = rows[src]
        inside = src < e
        keep = np.ones(e - s, dtype=np.bool_)
        keep[src[inside] - s] = False
        displaced = np.flatnonzero(keep) + s  # rows at s:e that later blocks need
        free = src[~inside]  # slots after e read into `taken`, as many as `displaced`
        rows[free] = rows[displaced]
        moved = at[displaced]
        at[free] = moved
        where[moved] = free
        rows[s:e] = taken
        at[s:e] = need
        where[need] = np.arange(s, e, dtype=np.int64)


def kmeans(sample: F32, k: int, iters: int) -> F32:
    """Spherical k-means: unit centroids maximising sum_i max_l <c_l, x_i> (Lloyd steps)."""
    init = np.linspace(0, sample.shape[0] - 1, k).round().astype(np.int64)
    cents = _unit(sample[init].astype(np.float32))
    for _ in range(iters):
        labels = assign(sample, cents)
        counts = np.bincount(labels, minlength=k)
        order = np.argsort(labels, kind="stable")
        firsts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        full = counts > 0
        sums = np.add.reduceat(sample[order], firsts[full], axis=0)
        cents = cents.copy()
        cents[full] = _unit(sums.astype(np.float32))
    return cents


def _unit(rows: F32) -> F32:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    out: F32 = (rows / np.clip(norms, 1e-12, None)).astype(np.float32)
    return out


@dataclass(frozen=True)
class IvfStore:
    """Quantised rows grouped by list: list l is rows `offsets[l]:offsets[l+1]`; `note[r]`
    is the note position row r belongs to."""

    centroids: F32  # (k, dim), unit rows
    mean: F32  # (dim,) the training sample's mean
    offsets: I64  # (k + 1,)
    codes: Codes  # (rows, dim) int8
    scale: F32  # (rows,)
    note: I32  # (rows,)

    @property
    def rows(self) -> int:
        return int(self.codes.shape[0])

    @property
    def nbytes(self) -> int:
        """Bytes held in memory (codes kept on disk not counted: `disk_bytes`)."""
        arrays = (self.centroids, self.mean, self.offsets, self.scale, self.note)
        held = self.codes.array.nbytes if isinstance(self.codes, MemoryCodes) else 0
        return sum(a.nbytes for a in arrays) + held

    @property
    def disk_bytes(self) -> int:
        return 0 if isinstance(self.codes, MemoryCodes) else self.rows * int(self.codes.shape[1])

    @classmethod
    def train(cls, codes: Codes, scale: F32, note: I32, sample: F32, params: IvfParams
              ) -> IvfStore:
        """Centroids from `sample` (float rows), every row assigned, rows sorted by list
        (stably, so a list keeps the given row order). `codes` is reordered (in place in
        memory, into a new file on disk) and kept: the caller hands it over."""
        k = params.lists(codes.shape[0])
        mean = sample.mean(axis=0).astype(np.float32)
        cents = kmeans(_unit(sample - mean), min(k, sample.shape[0]), params.train_iters)
        labels = assign(codes, cents, mean, scale)
        order = np.argsort(labels, kind="stable")
        offsets = np.zeros(cents.shape[0] + 1, dtype=np.int64)
        offsets[1:] = np.cumsum(np.bincount(labels, minlength=cents.shape[0]))
        try:
            placed = codes.permuted(order)
        except OSError:  # no room for the sorted copy on disk: sort the codes in memory
            placed = MemoryCodes(np.asarray(codes.span(0, codes.shape[0]), dtype=np.int8))
            placed = placed.permuted(order)
        return cls(cents, mean, offsets, placed, scale[order], note[order])

    def lists_of(self, rows: F32) -> I32:
        """The list each new float row joins (the nearest existing centroid)."""
        return assign(rows, self.centroids, self.mean)

    def probe(self, qvec: F32, nprobe: int) -> I32:
        """The `nprobe` lists whose centroids score highest for `qvec` (ties: lower list)."""
        sims = self.centroids @ qvec
        top = np.argsort(-sims, kind="stable")[: max(1, nprobe)]
        return top.astype(np.int32)

    def scan(self, qvec: F32, lists: I32) -> tuple[I32, F32]:
        """(note, score) of every row in `lists`: s(x) * <q, code(x)>. A list's rows are
        contiguous (views in memory or of the file's mapping: no gather); `SCAN_BLOCK` rows of
        a list at a time, so the float32 copy of the codes stays small and in cache; a
        gather of all probed rows at once, or a float32 copy of a whole list of the uneven
        lists at 10^6 notes, cost 8-10x as much (BENCHMARKS.md, scale)."""
        notes: list[I32] = []
        sims: list[F32] = []
        for j in lists.tolist():
            lo, hi = int(self.offsets[j]), int(self.offsets[j + 1])
            if hi == lo:
                continue
            notes.append(self.note[lo:hi])
            at = lo
            for part in self.codes.blocks(lo, hi, SCAN_BLOCK):
                end = at + part.shape[0]
                # np.vecdot: a row's score depends on the row alone (BLAS gemv rounds by
                # where the row sits in the block, and blocks follow note positions)
                sims.append(np.vecdot(part.astype(np.float32), qvec) * self.scale[at:end])
                at = end
        if not notes:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32)
        return np.concatenate(notes), np.concatenate(sims).astype(np.float32)
