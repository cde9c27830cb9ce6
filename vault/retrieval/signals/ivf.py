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
cluster keeps its previous centroid. The index is a function of the notes' paths and int8
rows alone: training first puts the rows in `canonical_order` (by note path, then a key of
the row's codes), so the sample, its order, the blocks the assignment multiplies and the
order within each list are the same whatever positions the notes hold and however the rows
came (a fresh build's note order, a compaction's lists then new rows); the sample is
dequantised codes, the rows a build and a compaction both hold. A scanned row's score is
np.vecdot's, which depends on the row alone. So the same files give the same bytes, and an
index kept current by retraining at every change (signals/dense.py) equals a fresh build.
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
U64 = npt.NDArray[np.uint64]

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


def row_keys(block: npt.NDArray[np.generic]) -> U64:
    """A 64-bit key of each int8 row, a function of its codes alone (a fixed linear hash
    mod 2^64, then a mixing step): what orders a note's rows in `canonical_order`."""
    h = (np.asarray(block).astype(np.int64) @ _KEY_WEIGHTS[: block.shape[1]]).view(np.uint64)
    h ^= h >> np.uint64(31)
    h *= np.uint64(0x94D049BB133111EB)
    h ^= h >> np.uint64(29)
    out: U64 = h
    return out


def _weights(dim: int) -> I64:
    """splitmix64 of 1..dim: fixed odd-looking 64-bit weights (no random numbers)."""
    z = np.arange(1, dim + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    out: I64 = (z ^ (z >> np.uint64(31))).view(np.int64)
    return out


_KEY_WEIGHTS = _weights(4096)


def canonical_order(codes: Codes, scale: F32, note: I32, paths: Sequence[str] | None) -> I64:
    """The rows by (their note's path, the row's key, its scale): an order of the rows that
    depends on the notes' paths and rows alone, not on where the rows sit (positions follow
    note ids, ids the indexing history; a compaction's base rows come in list order).
    Without `paths`, by note position. Rows equal in all three keys are equal rows."""
    if paths is None:
        rank = note.astype(np.int64)
    else:  # notes sharing a path (not in a vault) share a rank: their rows go by key
        rank = np.unique(np.asarray(paths, dtype=str), return_inverse=True)[1][note]
    keys = np.empty(codes.shape[0], dtype=np.uint64)
    for s, block in enumerate(codes.blocks(0, codes.shape[0], BLOCK)):
        keys[s * BLOCK : s * BLOCK + block.shape[0]] = row_keys(block)
    out: I64 = np.lexsort((scale.view(np.uint32), keys, rank)).astype(np.int64)
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
    def train(cls, codes: Codes, scale: F32, note: I32, paths: Sequence[str] | None,
              params: IvfParams) -> IvfStore:
        """The IVF of these rows, a function of the notes' paths and rows alone (module
        docstring): rows put in `canonical_order`, centroids from the evenly spaced rows of
        that order (dequantised: s(x) * code(x)), every row assigned a block at a time in
        that order, rows sorted by list (stably: a list keeps the canonical order). `codes`
        is reordered (in place in memory, into new files on disk) and kept: the caller hands
        it over."""
        canon = canonical_order(codes, scale, note, paths)
        codes, scale, note = _permuted(codes, canon), scale[canon], note[canon]
        n = codes.shape[0]
        pick = sample_rows(n, params.train_per_list * params.lists(n))
        sample = codes.take(pick).astype(np.float32) * scale[pick, None]
        mean = sample.mean(axis=0).astype(np.float32)
        k = min(params.lists(n), sample.shape[0])
        cents = kmeans(_unit(sample - mean), k, params.train_iters)
        labels = assign(codes, cents, mean, scale)
        order = np.argsort(labels, kind="stable")
        offsets = np.zeros(cents.shape[0] + 1, dtype=np.int64)
        offsets[1:] = np.cumsum(np.bincount(labels, minlength=cents.shape[0]))
        return cls(cents, mean, offsets, _permuted(codes, order), scale[order], note[order])

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


def _permuted(codes: Codes, order: I64) -> Codes:
    """`codes` reordered by `order`; in memory when a sorted copy finds no room on disk."""
    try:
        return codes.permuted(order)
    except OSError:
        held = MemoryCodes(np.asarray(codes.span(0, codes.shape[0]), dtype=np.int8))
        return held.permuted(order)
