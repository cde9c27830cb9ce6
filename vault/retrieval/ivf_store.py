"""The approximate dense layout (signals/ivf.py) of a full build persisted beside the index,
so a new process maps the int8 codes instead of re-chunking every note, reading every vector
back from the embedding cache and training the coarse quantiser again.

An IVF build is a function of the notes' chunk texts in position order, the encoder, the
chunking shape (max_tokens, max_units) and the training parameters. The store is valid for
exactly one such build, named by

    digest = BLAKE2b-256(VERSION, fingerprint, shape, training parameters, n,
                         key(d) for every note d in position order)

with key(d) dense_store.py's 16-byte note key (title, speaker, content). Two files under the
vault's `.rmh/`: `dense-ivf-codes-<digest>.npy` (the int8 codes in list order, memory-mapped
read-only when loaded) and `dense-ivf.npz` (the digest, the per-note chunk counts and cut
flags, the centroids, the mean, the list offsets, each row's scale and note, and the codes
file's name). Each is written to a temporary name and renamed into place, the codes first, so
a reader sees an old or a new store, whole. `load` returns the index's parts only when the
digest matches; they are the arrays the build made, so every score equals the build's bit for
bit (tests/vault/retrieval/test_ivf_store.py). Any other store (an edit, another encoder,
shape or parameters, a torn or corrupt file) is ignored: the caller builds and saves, which
replaces it. A change in a running process, or in a new process catching up from this
store (signals/registry.py `caught_up`), trains the lists again in memory (signals/dense.py:
the fresh build's lists); the store is rewritten at the next full build. A catch-up saves
what it trained in a second slot (`CAUGHT`: `dense-ivf-now.npz`, `dense-ivf-now-codes-*`),
so the next process that catches up to the same notes loads it instead of training again;
the base's store stays for catch-ups to other states.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ..storage.corpus import Corpus
from ..storage.fileops import create_temp, drop_temps, folder_locked
from ..storage.saved_arrays import map_npy, read_npz
from .dense_store import drop_dead_temps, drop_stale, note_keys
from .encoders import Encoder
from .signals.ivf import BLOCK, IvfParams, IvfStore, MemoryCodes

VERSION = 4  # 2, 3: as dense_store.py 2, 3 (chunking.turn_speaker); 4: ivf.canonical_order


@dataclass(frozen=True)
class Slot:
    """Where a store lives: its index file and its codes files' prefix."""

    index: str
    codes: str


BUILT = Slot("dense-ivf.npz", "dense-ivf-codes-")  # a full build's
CAUGHT = Slot("dense-ivf-now.npz", "dense-ivf-now-codes-")  # a catch-up's (DenseIndex.caught_up)
INDEX, CODES_PREFIX = BUILT.index, BUILT.codes

U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Loaded:
    """A persisted IVF build: per note its chunk count and cut flag, and the store."""

    counts: I64
    cut: npt.NDArray[np.bool_]
    ivf: IvfStore


def digest(keys: U8, fingerprint: str, shape: tuple[int, int], params: IvfParams) -> str:
    """What a build derives from (module docstring), as hex."""
    h = hashlib.blake2b(digest_size=32)
    h.update(f"rmh-ivf/{VERSION}/{fingerprint}/{shape[0]}/{shape[1]}/{params.lists_per_sqrt!r}/"
             f"{params.train_per_list}/{params.train_iters}/{keys.shape[0]}".encode())
    h.update(np.ascontiguousarray(keys, dtype=np.uint8).tobytes())
    return h.hexdigest()


def save(folder: str | Path, name: str, counts: I64, cut: npt.NDArray[np.bool_],
         ivf: IvfStore, slot: Slot = BUILT, count_op: Callable[[], None] | None = None) -> bool:
    """Persist a build named `name` (its digest); False when the folder cannot be written.
    Both temporaries are written first; then, holding the folder's flock (`tidy` takes it
    too), the codes renamed, the index renamed, the slot's other codes files removed.
    `count_op` is called after each file operation (each temporary written, each rename, each
    stale codes file removed: the store's fault seam, storage/faults.py)."""
    folder = Path(folder)
    done = count_op or _nothing
    codes_name = f"{slot.codes}{name[:32]}.npy"
    drop_dead_temps(folder, slot.codes, slot.index)
    tmp_codes = folder / f".{codes_name}.{os.getpid()}.tmp"
    tmp_index = folder / f".{slot.index}.{os.getpid()}.tmp"
    rows, dim = ivf.codes.shape
    try:
        create_temp(tmp_codes).close()  # a link planted at the name goes first
        out = np.lib.format.open_memmap(tmp_codes, mode="w+", dtype=np.int8, shape=(rows, dim))
        at = 0
        for block in ivf.codes.blocks(0, rows, BLOCK):
            out[at : at + block.shape[0]] = block
            at += block.shape[0]
        out.flush()
        del out
        done()
        with create_temp(tmp_index) as fh:
            np.savez(fh, version=np.int64(VERSION), digest=np.str_(name),
                     codes=np.str_(codes_name), counts=counts.astype(np.int64),
                     cut=cut.astype(np.bool_), centroids=ivf.centroids, mean=ivf.mean,
                     offsets=ivf.offsets, scale=ivf.scale, note=ivf.note)
        done()
        with folder_locked(folder):
            os.replace(tmp_codes, folder / codes_name)
            done()
            os.replace(tmp_index, folder / slot.index)
            done()
            drop_stale(folder, slot.codes, codes_name, done)
    except (OSError, ValueError):
        drop_temps(tmp_codes, tmp_index)
        return False
    return True


def tidy(folder: str | Path, slot: Slot) -> None:
    """Remove what a killed `save` of `slot` left in `folder` when a process loads the slot
    instead of saving it again: the temporaries of dead writers, and the codes files its index
    does not name (a kill between the index's rename and the stale codes' removal left the
    older state's, for good). Under the folder's flock, so a live writer's codes, renamed in
    before its index, are never taken for stale; a folder this process cannot change is left."""
    folder = Path(folder)
    if len(list(folder.glob(f"{slot.codes}*.npy"))) < 2 and not any(
            folder.glob(f".{slot.codes}*.tmp")) and not any(folder.glob(f".{slot.index}.*.tmp")):
        return
    with contextlib.suppress(OSError), folder_locked(folder):
        drop_dead_temps(folder, slot.codes, slot.index)
        named = read_npz(folder / slot.index, lambda z: str(z["codes"]))
        if named is not None and named.startswith(slot.codes):
            drop_stale(folder, slot.codes, named)


def _nothing() -> None:
    return None


def load(folder: str | Path, name: str, notes: int, slot: Slot = BUILT) -> Loaded | None:
    """The store in `folder` when it was saved for digest `name` over `notes` notes and is
    whole, else None."""
    meta = read_npz(Path(folder) / slot.index, lambda z: {k: z[k] for k in z.files})
    try:
        if meta is None or int(meta["version"]) != VERSION or str(meta["digest"]) != name:
            return None
        codes = map_npy(Path(folder) / str(meta["codes"]))
        counts = meta["counts"].astype(np.int64)
        cut = meta["cut"].astype(np.bool_)
        cents, mean = meta["centroids"], meta["mean"]
        offsets, scale, note = meta["offsets"], meta["scale"], meta["note"]
    except (KeyError, TypeError, ValueError):  # a store whose members are not its own
        return None
    if codes is None:
        return None
    rows = int(counts.sum())
    whole = (codes.ndim == 2 and codes.dtype == np.int8 and codes.shape[0] == rows
             and counts.shape == (notes,) and cut.shape == (notes,)
             and cents.ndim == 2 and cents.dtype == np.float32
             and cents.shape[1] == codes.shape[1] and mean.shape == (codes.shape[1],)
             and offsets.shape == (cents.shape[0] + 1,) and offsets.dtype == np.int64
             and int(offsets[0]) == 0 and int(offsets[-1]) == rows
             and bool(np.all(np.diff(offsets) >= 0))
             and scale.shape == (rows,) and scale.dtype == np.float32
             and note.shape == (rows,) and note.dtype == np.int32
             and (rows == 0 or (int(note.min()) >= 0 and int(note.max()) < notes)))
    if not whole:
        return None
    return Loaded(counts, cut, IvfStore(cents, mean, offsets, MemoryCodes(codes), scale, note))


def restore(folder: str | None, corpus: Corpus, encoder: Encoder, shape: tuple[int, int],
            params: IvfParams, approx_above: int, slots: Sequence[Slot] = (BUILT,)
            ) -> Loaded | None:
    """The build of `corpus`'s notes persisted in `folder` in the first of `slots` that holds
    one, when it is approximate (more rows than `approx_above` > 0: signals/dense.py), else
    None. The notes' keys (a pass over them) are read once, only when a slot has a file."""
    if folder is None:
        return None
    present = [slot for slot in slots if (Path(folder) / slot.index).is_file()]
    if not present:
        return None
    name = digest(note_keys(corpus, folder), encoder.fingerprint, shape, params)
    for slot in present:
        got = load(folder, name, len(corpus), slot)
        if got is not None and 0 < approx_above < got.ivf.rows:
            tidy(folder, slot)
            return got
    return None


def save_build(folder: str | None, corpus: Corpus, fingerprint: str, shape: tuple[int, int],
               params: IvfParams, counts: I64, cut: npt.NDArray[np.bool_],
               ivf: IvfStore, slot: Slot = BUILT,
               count_op: Callable[[], None] | None = None) -> bool:
    """Persist in `folder` (None: nowhere) the IVF a full build of `corpus` made (or, in
    `CAUGHT`, a catch-up's, which is the same bytes: signals/dense.py)."""
    if folder is None:
        return False
    name = digest(note_keys(corpus, folder), fingerprint, shape, params)
    return save(folder, name, counts, cut, ivf, slot, count_op)
