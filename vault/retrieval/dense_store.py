"""The exact dense layout's chunk rows persisted beside the index, so a new process does not
re-chunk (re-tokenise) every note to find vectors it already has.

What a build derives per note is a function of (title, speaker, body) and the chunking shape
(max_tokens, max_units) and the encoder: its chunk count, whether it was cut, and its chunk
vectors. The store keeps, for the notes of the last build, a 16-byte key per note,

    key(d) = BLAKE2b-128(title \\0 speaker \\0 content),

content being the note's content hash when the corpus has one (the file's bytes, frontmatter
included) and else its body, with the counts, the cut flags and the float32 rows, in two files
under the vault's `.rmh/`: `dense-rows-<digest>.npy` (the rows, memory-mapped when read; its
name carries a digest of its bytes) and `dense-index.npz` (keys, counts, cut, the encoder's
fingerprint, the shape, the format version and the rows file's name). Each is written to a
temporary name and renamed into place, the rows first, so a reader sees an old or a new
store, whole; a reader that mapped old rows keeps them (the file stays alive while mapped).

`reuse(store, keys)` tells, per note of the current corpus, which stored note (if any) had the
same key: those notes' rows are copied (or, when every key matches in order, the mapped rows
are used as they are), the others are chunked and embedded as a build would. The rows are
the cache's vectors for the same chunk texts, so the index equals a fresh build's bit for bit
(tests/vault/retrieval/test_dense_store.py); a store of another encoder, shape or format
version is ignored, and replaced by the next save.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ..storage import fileops
from ..storage.corpus import Corpus
from ..storage.fileops import create_temp, drop_temps
from ..storage.saved_arrays import map_npy, read_npz
from . import stamped

VERSION = 3  # 2: a turn whose body starts with its speaker ("user: ...") has sentence units;
# 3: not one whose first label later sentences answer with more (a structured abstract)
INDEX = "dense-index.npz"
ROWS_PREFIX = "dense-rows-"
KEY_BYTES = 16

U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]
F32 = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Stored:
    """A persisted build: per stored note its key, chunk count, cut flag; rows by note."""

    keys: U8  # (notes, 16)
    counts: I64
    cut: npt.NDArray[np.bool_]
    matrix: F32  # (sum counts, dim), memory-mapped read-only
    fingerprint: str
    shape: tuple[int, int]

    @property
    def starts(self) -> I64:
        out: I64 = np.concatenate(([0], np.cumsum(self.counts)[:-1])).astype(np.int64)
        return out[: self.counts.shape[0]]


def note_keys(corpus: Corpus, folder: str | Path | None = None) -> U8:
    """key(d) of every note of `corpus` (module docstring), as an (n, 16) byte array; with
    `folder`, remembered there under the corpus's stamp (retrieval/stamped.py)."""
    keys: U8 = stamped.remembered(folder, corpus, f"dense-keys-{VERSION}", lambda: _keys(corpus))
    return keys


def _keys(corpus: Corpus) -> U8:
    out = np.zeros((len(corpus), KEY_BYTES), dtype=np.uint8)
    for i in range(len(corpus)):
        speaker = corpus.frontmatter[i].get("speaker")
        content = corpus.content_hashes[i] or corpus.bodies[i]
        text = "\0".join((corpus.titles[i], speaker if isinstance(speaker, str) else "", content))
        out[i] = np.frombuffer(hashlib.blake2b(text.encode("utf-8"), digest_size=KEY_BYTES)
                               .digest(), dtype=np.uint8)
    return out


def load(folder: str | Path, fingerprint: str, shape: tuple[int, int]) -> Stored | None:
    """The store in `folder` if there is a whole, readable one of this encoder and shape."""
    meta = read_npz(Path(folder) / INDEX, lambda z: {k: z[k] for k in z.files})
    try:
        if (meta is None or int(meta["version"]) != VERSION
                or str(meta["fingerprint"]) != fingerprint
                or tuple(int(x) for x in meta["shape"]) != shape):
            return None
        matrix = map_npy(Path(folder) / str(meta["rows"]))
        counts = meta["counts"].astype(np.int64)
        keys = meta["keys"].astype(np.uint8)
        cut = meta["cut"].astype(np.bool_)
    except (KeyError, TypeError, ValueError):  # a store whose members are not its own
        return None
    if (matrix is None or matrix.ndim != 2 or matrix.dtype != np.float32
            or int(counts.sum()) != matrix.shape[0]
            or keys.shape != (counts.shape[0], KEY_BYTES) or cut.shape != counts.shape):
        return None
    return Stored(keys, counts, cut, matrix, fingerprint, shape)


def save(folder: str | Path, keys: U8, counts: I64, cut: npt.NDArray[np.bool_], matrix: F32,
         fingerprint: str, shape: tuple[int, int]) -> bool:
    """Persist a build (module docstring); False when the folder cannot be written."""
    folder = Path(folder)
    m = np.ascontiguousarray(matrix, dtype=np.float32)
    digest = hashlib.blake2b(m.tobytes(), digest_size=12)
    digest.update(np.asarray(m.shape, np.int64).tobytes())
    name = f"{ROWS_PREFIX}{digest.hexdigest()}.npy"
    drop_dead_temps(folder, ROWS_PREFIX, INDEX)
    tmp_rows = folder / f".{name}.{os.getpid()}.tmp"
    tmp_index = folder / f".{INDEX}.{os.getpid()}.tmp"
    try:
        if not (folder / name).exists():
            with create_temp(tmp_rows) as fh:
                np.save(fh, m, allow_pickle=False)
            os.replace(tmp_rows, folder / name)
        with create_temp(tmp_index) as fh:
            np.savez(fh, version=np.int64(VERSION), fingerprint=np.str_(fingerprint),
                     shape=np.asarray(shape, np.int64), rows=np.str_(name),
                     keys=keys, counts=counts.astype(np.int64), cut=cut.astype(np.bool_))
        os.replace(tmp_index, folder / INDEX)
    except OSError:
        drop_temps(tmp_rows, tmp_index)
        return False
    drop_stale(folder, ROWS_PREFIX, name)
    return True


def drop_stale(folder: Path, prefix: str, keep: str,
               done: Callable[[], None] | None = None) -> None:
    """Remove the mapped array files `prefix*.npy` of `folder` other than `keep`, the one the
    index just written names (a process that mapped an old one keeps its pages); `done`
    after each (the store's fault seam)."""
    for old in sorted(folder.glob(f"{prefix}*.npy")):
        if old.name != keep:
            old.unlink(missing_ok=True)
            if done is not None:
                done()


def drop_dead_temps(folder: Path, *names: str) -> None:
    """Remove the temporaries (".NAME....PID.tmp") a save of `names` (prefixes) left when
    its process died before its rename: a killed save's rows or codes stayed for good."""
    for name in names:
        fileops.drop_dead_temps(folder, f".{name}*.tmp")


def reuse(stored: Stored, keys: U8) -> I64:
    """For each current note, the stored note with the same key, or -1 (the first stored
    note of a key when several share it: their rows are equal)."""
    if keys.shape[0] == stored.keys.shape[0] and np.array_equal(keys, stored.keys):
        return np.arange(keys.shape[0], dtype=np.int64)
    where: dict[bytes, int] = {}
    for j in range(stored.keys.shape[0] - 1, -1, -1):
        where[stored.keys[j].tobytes()] = j
    return np.asarray([where.get(keys[i].tobytes(), -1) for i in range(keys.shape[0])],
                      dtype=np.int64)


Chunker = Callable[[I64], tuple[Sequence[str], I64, npt.NDArray[np.bool_]]]
Embedder = Callable[[Sequence[str]], F32]


def restore(folder: str | Path, corpus: Corpus, fingerprint: str, shape: tuple[int, int],
            chunk: Chunker, embed: Embedder, max_rows: int = 0
            ) -> tuple[F32, I64, npt.NDArray[np.bool_]] | None:
    """(rows, counts, cut) of every note of `corpus` from the store in `folder`, chunking
    (`chunk(positions)`) and embedding (`embed(texts)`) only the notes it lacks, and saving
    the result when anything was new; None when there is no usable store, or when the rows
    would exceed `max_rows` (> 0: the approximate layout, which this store does not keep)."""
    stored = load(folder, fingerprint, shape)
    if stored is None:
        return None
    keys = note_keys(corpus, folder)
    src = reuse(stored, keys)
    if src.shape[0] == stored.counts.shape[0] and np.array_equal(
            src, np.arange(src.shape[0], dtype=np.int64)):
        if 0 < max_rows < stored.matrix.shape[0]:
            return None
        return stored.matrix, stored.counts.copy(), stored.cut.copy()
    missing = np.flatnonzero(src < 0).astype(np.int64)
    texts, new_counts, new_cut = chunk(missing)
    counts = np.zeros(len(corpus), dtype=np.int64)
    cut = np.zeros(len(corpus), dtype=np.bool_)
    have = src >= 0
    counts[have], cut[have] = stored.counts[src[have]], stored.cut[src[have]]
    counts[missing], cut[missing] = new_counts, new_cut
    total = int(counts.sum())
    if 0 < max_rows < total:
        return None
    vecs = embed(texts) if len(texts) else np.zeros((0, stored.matrix.shape[1]), np.float32)
    out = np.zeros((total, stored.matrix.shape[1]), dtype=np.float32)
    dest_start = (np.cumsum(counts) - counts).astype(np.int64)
    reused = np.flatnonzero(have)
    dst, off = _spans(dest_start[reused], counts[reused])
    srcrows = np.repeat(stored.starts[src[reused]], counts[reused]) + off
    out[dst] = stored.matrix[srcrows]
    dst, _ = _spans(dest_start[missing], counts[missing])
    out[dst] = vecs
    save(folder, keys, counts, cut, out, fingerprint, shape)
    return out, counts, cut


def _spans(starts: I64, counts: I64) -> tuple[I64, I64]:
    """Row indices covering [starts[j], starts[j] + counts[j]) for each j, in order, and each
    row's offset within its span."""
    total = int(counts.sum())
    first = (np.cumsum(counts) - counts).astype(np.int64)  # [] for no spans, not [0]
    off = np.arange(total, dtype=np.int64) - np.repeat(first, counts)
    return np.repeat(starts, counts) + off, off
