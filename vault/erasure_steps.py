"""The steps of an erasure (vault/erasure.py), and what a failed one means.

Every step is idempotent and independent of the others' success, so each is tried even when
one before it failed (a note that cannot be removed does not keep the others, or the ledger,
from being erased), and the intent, which stays while any failed, makes them all again at
the next open. The steps that need no new bytes come first (the notes, the trash copies and
the derived files are removals): on a full disk they free room, often enough for the SQLite
steps that follow.

A failed step is *blocking* when it leaves erased text where a read, a search, a report or a
client can reach it: a note or a trash copy still there (the next sync indexes it again), the
derived files (terms, paths), the index rows, the learning log (search texts naming the
subject). The vault does not open while such a step is pending (ErasurePending, saying what to
do), and a vault opened before stops answering (vault/erasure.py `PendingGuard`): masking the
erased notes instead would have to filter every path that reads the index, the files and the
log (search and its snippets, links, backlinks, neighbors, export, the REPL's host functions,
the hooks' memory, `rmh serve`), and one missed path serves what the user asked never to see
again; failing closed keeps the promise with one check. The other steps keep bytes that nothing
serves: the embedding rows (vectors under hashed keys, in the vault's cache and the shared one)
and the freed pages that VACUUM rewrites. Their failure, on a full disk the likeliest (VACUUM
copies the whole index), leaves the vault open; the intent stays pending (`doctor` lists the
step), narrowed to what those steps need (`at_rest`), and the next open tries them again, and
only them: a VACUUM already made is not made again, and after a full disk they are tried again
only once free space grew, or by `rmh doctor` (`retry_state`, `waiting`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TypeVar

from .errors import ErasurePending, PermissionDenied, ReadOnlyVault
from .full_disk import is_disk_full
from .learning.ledger import LEDGER_FILE
from .learning.usage import UsageRecorder
from .retrieval import caught_up_sums, dense_store, ivf_store, lexical_store, stamped
from .storage import catch_up, edge_store, note_store, stat_store
from .storage.anchored import prune_below, remove_below
from .storage.embeddings import EmbeddingCache, SharedEmbeddingCache, TieredEmbeddingCache
from .storage.erase import ErasurePlan
from .storage.generated_record import forget_notes
from .storage.index import Index
from .storage.store import STATE_DIR, TRASH_DIR, Store

T = TypeVar("T")
AT_REST = ("embeddings", "shared cache", "vacuum")  # steps whose failure serves nothing
ERASED_NAMES = ("note", "trash", "hidden")  # steps whose target names an erased note
INDEX_FILE = f"{STATE_DIR}/index.sqlite"
LEDGER = f"{STATE_DIR}/{LEDGER_FILE}"
_DENIED = (errno.EACCES, errno.EPERM, errno.EROFS)


@dataclass(frozen=True)
class Failure:
    """One failed step: `step` (note, trash, derived files, index, embeddings, shared cache,
    ledger, own files, vacuum), `target` (the note or trash copy, or rmh's own file: the
    index, the ledger, `.rmh`, the shared cache; "" for the caller's own files), `error`
    (one line), and what kind of failure it was."""

    step: str
    target: str
    error: str
    disk_full: bool
    denied: bool

    @property
    def blocking(self) -> bool:
        return self.step not in AT_REST

    def to_json(self) -> dict[str, str]:
        return {"step": self.step, "target": self.target, "error": self.error}


@dataclass
class Done:
    """What the steps did: embedding rows removed, the ledger's counts, the failures."""

    removed: int = 0
    learning: dict[str, int] = field(default_factory=dict)
    failed: list[Failure] = field(default_factory=list)
    vacuumed: bool = False  # the index's VACUUM was made (or owed nothing: `run`)

    @property
    def blocking(self) -> list[Failure]:
        return [f for f in self.failed if f.blocking]


def _line(exc: BaseException, erased: Sequence[str] = ()) -> str:
    """The error's one line, without any of the `erased` strings (case-insensitive): a
    PathRefused or PermissionDenied names its note ("path refused: 'people/Ann.md' (symlink
    leaves the vault)" was ErasurePending's message)."""
    if isinstance(exc, OSError) and exc.errno is not None:
        return os.strerror(exc.errno)  # no path: the step names its target
    line = " ".join(str(exc).split())
    for text in sorted({e for e in erased if e}, key=len, reverse=True):
        line = re.sub(re.escape(text), "(erased)", line, flags=re.IGNORECASE)
    return line[:300] or type(exc).__name__


def _denied(exc: BaseException) -> bool:
    if isinstance(exc, (PermissionDenied, ReadOnlyVault)):
        return True
    if isinstance(exc, sqlite3.Error):
        return "readonly" in str(exc)
    return isinstance(exc, OSError) and exc.errno in _DENIED


def run(store: Store, index: Index, cache: EmbeddingCache | None, usage: UsageRecorder,
        todo: ErasurePlan, sync: Callable[[list[str]], object],
        extra_files: Sequence[Path], own: Callable[[list[str]], object] | None = None,
        vacuumed: bool = False) -> Done:
    """Make every step of `todo` (module docstring), each counted as one operation for fault
    injection (Store.count_op) when it succeeds, so a crash test can kill between any two.
    `own(needles)`: the caller's own files that hold text (the hooks' memory, which the
    prompt hook reads without opening the vault), a blocking step of its own, made before
    the intent is removed: a process killed after it leaves the intent, never the text.
    `vacuumed`: an earlier try of this narrowed erasure made the index's VACUUM; it is made
    again only when the embeddings step removed rows now (else it frees no page: it cost
    ~0.7 s per open at 10^4 notes while another step at rest kept the intent pending)."""
    done = Done()
    whole = not narrowed(todo)
    erased = (*todo.needles, *todo.notes, *todo.trash)

    def attempt(step: str, target: str, action: Callable[[], T]) -> T | None:
        try:
            got = action()
        except Exception as exc:  # every step is tried; the failure is reported, typed
            done.failed.append(Failure(step, target, _line(exc, erased), is_disk_full(exc),
                                       _denied(exc)))
            return None
        return got

    for path in todo.notes:
        attempt("note", path, partial(store.erase, path))
    root = str(store.root)
    for rel in todo.trash:  # through folder descriptors: a folder swapped for a link is not
        attempt("trash", rel, partial(_trash, store, root, rel))  # followed (anchored.py)
    for rel in todo.hidden:  # rmh's own leftovers of an erased note (storage/leftovers.py)
        attempt("hidden", rel, partial(_hidden, store, root, rel))
    state = store.state
    if whole:
        attempt("derived files", STATE_DIR, partial(_counted, store, drop_derived, state))
        attempt("index", INDEX_FILE, partial(_counted, store, sync, list(todo.notes)))
        # the ingest's record of the erased notes (hashes: no trace of them), so that what
        # remains of them is written again; best effort: without it the next ingest leaves
        # them out as notes the user deleted (`left_deleted`), which loses nothing erased
        with contextlib.suppress(OSError):
            _counted(store, forget_notes, state, list(todo.notes))
    keys = list(todo.chunk_keys)
    own_rows = attempt("embeddings", INDEX_FILE, partial(
        _counted, store, index.forget_embeddings, keys))
    done.removed = own_rows or 0
    for name, opened in sorted(_shared_caches(cache, extra_files).items()):
        done.removed += attempt("shared cache", name, partial(
            _counted, store, lambda c: c().forget_embeddings(keys), opened)) or 0
    if whole:
        done.learning = attempt("ledger", LEDGER, partial(
            _counted, store, usage.redact, list(todo.ids), list(todo.needles))) or {}
        if own is not None:
            attempt("own files", "", partial(own, list(todo.needles)))
        attempt("derived files", STATE_DIR, partial(_counted, store, drop_derived, state))
    if whole or not vacuumed or own_rows != 0:  # (None: the step failed, rows may be left)
        done.vacuumed = attempt("vacuum", INDEX_FILE, partial(
            _counted, store, _vacuum, index)) is True
    else:
        done.vacuumed = True
    return done


def retry_state(done: Done, store: Store, extra_files: Sequence[Path]) -> dict[str, object]:
    """What a narrowed intent keeps about the try that left it pending (`waiting` reads it):
    whether the index's VACUUM was made, and, when every failure was a full disk, the free
    bytes of each file system the steps write (the vault's `.rmh/`, the shared caches')."""
    full = bool(done.failed) and all(f.disk_full for f in done.failed)
    return {"vacuumed": done.vacuumed,
            "free": free_space(store, extra_files) if full else None}


def waiting(retry: object, store: Store, extra_files: Sequence[Path]) -> bool:
    """Whether a narrowed erasure whose last try failed on a full disk (`retry_state`) need
    not be tried again at this open: no file system it writes has gained free space since
    (each try costs about a VACUUM of the index: ~0.7 s at 10^4 notes). Once space grows, or
    at `rmh doctor` (which does not ask), it is tried again."""
    free = retry.get("free") if isinstance(retry, dict) else None
    if not isinstance(free, dict) or not free:
        return False
    now = free_space(store, extra_files)
    return all(isinstance(was, int) and path in now and now[path] <= was
               for path, was in free.items())


def free_space(store: Store, extra_files: Sequence[Path]) -> dict[str, int]:
    """Free bytes for this user on the file system of the vault's `.rmh/` and of each shared
    cache's folder (those that can be asked)."""
    out: dict[str, int] = {}
    for folder in [store.state, *(Path(f).parent for f in extra_files)]:
        try:
            info = os.statvfs(folder)
        except OSError:
            continue
        out[str(folder)] = info.f_bavail * info.f_frsize
    return out


def narrowed(todo: ErasurePlan) -> bool:
    """Whether `todo` is what is left of an erasure once only steps at rest failed (`at_rest`):
    chunk keys, no note, id, trash copy or erased string, so nothing readable."""
    return not (todo.notes or todo.ids or todo.trash or todo.needles or todo.hidden)


def at_rest(todo: ErasurePlan) -> ErasurePlan:
    """The part of `todo` its steps at rest need: the chunk keys (the embedding rows; VACUUM
    needs nothing). What an intent keeps once the other steps were made: a later open makes
    none of them again (a note written at an erased path since is the user's, events logged
    since are kept) and no erased string stays on disk in the intent."""
    return ErasurePlan((), (), (), (), todo.chunk_keys)


def _vacuum(index: Index) -> bool:
    index.vacuum()
    return True


def _counted(store: Store, action: Callable[..., T], *args: object) -> T:
    got = action(*args)
    store.count_op()
    return got


def _shared_caches(cache: EmbeddingCache | None, extra_files: Sequence[Path]
                   ) -> dict[str, Callable[[], SharedEmbeddingCache]]:
    """The shared embedding caches to erase from, by path: the files named, and the one the
    vault's cache reads through (opened already)."""
    shared: dict[str, Callable[[], SharedEmbeddingCache]] = {
        str(p): partial(SharedEmbeddingCache, p) for p in extra_files}
    if isinstance(cache, TieredEmbeddingCache) and isinstance(cache.shared,
                                                             SharedEmbeddingCache):
        held = cache.shared
        shared.setdefault(str(held.path), lambda: held)
    return shared


def _trash(store: Store, root: str, rel: str) -> None:
    where = f"{TRASH_DIR}/{rel}"
    if remove_below(root, where):
        store.count_op()
    prune_below(root, where.rpartition("/")[0], len(TRASH_DIR.split("/")))


def _hidden(store: Store, root: str, rel: str) -> None:
    if remove_below(root, rel):  # no link followed; one already gone is no error
        store.count_op()


def pending(intent: str, failed: Sequence[Failure], needles: Sequence[str],
            notes: int) -> ErasurePending:
    """The error for an erasure of `notes` notes whose `failed` steps keep it pending, with
    what to do. It names rmh's own files that failed, never an erased note or trash copy
    (their names are what the erasure removes: `ERASED_NAMES`), nor the subject."""
    fixes = []
    if any(f.disk_full for f in failed):
        fixes.append("free space on the disk that holds the vault (and the shared embedding "
                     "cache)")
    if any(f.denied for f in failed):
        fixes.append("let this user remove or write the files of the failed steps (a note or "
                     "trash step: the files of the notes you asked to erase, still in the "
                     "vault folder or .rmh/trash/): their folder's owner or mode, an immutable "
                     "attribute (`lsattr`, `chattr -i`), a read-only mount")
    if not fixes:
        fixes.append("remove the cause named")
    fix = ("; ".join(fixes) + ", then run any rmh command (`rmh doctor`): its open finishes "
           "the erasure")
    return ErasurePending(intent, [(f.step, "" if f.step in ERASED_NAMES else f.target,
                                    f.error) for f in failed], fix, tuple(needles), notes)


def drop_derived(state: Path) -> None:
    """Remove the persisted retrieval structures (retrieval/dense_store.py, lexical_store.py,
    ivf_store.py, storage/edge_store.py, note_store.py, stat_store.py), the catch-up
    record (storage/catch_up.py: the paths changed since the saved base) and the caught-up
    conjunctive sums (retrieval/caught_up_sums.py: a digest of changed notes' text): they
    hold the erased notes' chunk keys, terms and vectors, digests of their paths, links and
    text, their paths and text; the next search rebuilds them from the notes that remain.
    With them the temporaries a killed save of the dense stores left (float rows, int8
    codes: the erased notes' vectors)."""
    for path in [state / lexical_store.FILE, state / lexical_store.LEGACY,
                 *sorted(state.glob(f".{lexical_store.FILE}.*.tmp")),
                 state / caught_up_sums.FILE, *sorted(state.glob(f".{caught_up_sums.FILE}.*.tmp")),
                 state / dense_store.INDEX, state / ivf_store.INDEX,
                 state / ivf_store.CAUGHT.index,
                 *sorted(state.glob(f"{ivf_store.CAUGHT.codes}*.npy")),
                 state / edge_store.FILE, state / note_store.FILE, state / catch_up.FILE,
                 *sorted(state.glob(f".{catch_up.FILE}.*.tmp")), state / catch_up.PAID_FILE,
                 *sorted(state.glob(f".{catch_up.PAID_FILE}.*.tmp")),
                 *sorted(state.glob(f".{note_store.FILE}.*.tmp")),
                 state / stat_store.FILE, *sorted(state.glob(f".{stat_store.FILE}.*.tmp")),
                 *sorted(state.glob(f"{stamped.PREFIX}*.npz")),
                 *sorted(state.glob(f".{stamped.PREFIX}*.tmp")),
                 *sorted(state.glob(f"{dense_store.ROWS_PREFIX}*.npy")),
                 *sorted(state.glob(f"{ivf_store.CODES_PREFIX}*.npy")),
                 *_dense_temps(state)]:
        path.unlink(missing_ok=True)


def _dense_temps(state: Path) -> list[Path]:
    """The temporaries of dense_store.py's and ivf_store.py's saves (both slots), as they
    name them: ".NAME.PID.tmp"."""
    names = (dense_store.INDEX, dense_store.ROWS_PREFIX, ivf_store.BUILT.index,
             ivf_store.BUILT.codes, ivf_store.CAUGHT.index, ivf_store.CAUGHT.codes)
    return sorted({p for name in names for p in state.glob(f".{name}*.tmp")})
