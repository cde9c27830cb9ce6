"""`Vault.forget`: erase notes (or everything naming a subject) from all that rmh keeps, and
prove it (storage/erase.py says what counts as a trace and how the proof scans).

The plan is journalled first (storage/intents.py, `ForgetIntent`, fsynced, under the write
lock), so a process killed part-way leaves it to the next `Vault.open`, which makes every step
again (each is idempotent): after the next open either nothing was erased (killed before the
intent landed) or everything was. Order of work: the files go first (the folder and the trash:
the source of truth), then the index follows the folder (its rows), then the embedding keys of
the erased chunks (the vault's cache and the shared one), then the learned event log is
rewritten (learning/redact.py), then the persisted retrieval structures are dropped (rebuilt
from what remains by the next search), then both SQLite files are vacuumed, then the intent
(which holds the erased strings) is removed, then the proof is taken.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import PathRefused
from .learning.usage import UsageRecorder
from .notes.rows import NoteRow
from .retrieval import dense_store, ivf_store, lexical_store, stamped
from .retrieval.encoders import Encoder
from .retrieval.signals.dense import note_chunks
from .storage import catch_up, edge_store, note_store, stat_store
from .storage.anchored import prune_below, remove_below
from .storage.embeddings import (
    EmbeddingCache,
    SharedEmbeddingCache,
    TieredEmbeddingCache,
    embedding_key,
)
from .storage.erase import (
    ErasurePlan,
    Proof,
    distinctive_lines,
    names,
    owned_files,
    scan,
    trash_copies,
)
from .storage.index import Index
from .storage.intents import ForgetIntent, Journal, texts
from .storage.store import STATE_DIR, TRASH_DIR, Store


@dataclass(frozen=True)
class Erased:
    """What `Vault.forget` did, with its proof."""

    plan: ErasurePlan
    embeddings: int  # cache rows removed (the vault's and the shared cache's)
    learning: dict[str, int]  # events dropped and rewritten
    proof: Proof

    def to_json(self) -> dict[str, Any]:
        return {"erased": self.plan.to_json(), "embeddings_removed": self.embeddings,
                "learning": self.learning, "proof": self.proof.to_json()}


def _text(row: NoteRow) -> str:
    return "\n".join((row.path, row.title, *row.aliases, *row.tags, row.body))


def plan(store: Store, index: Index, ids: set[int], subject: str, encoder: Encoder | None,
         max_tokens: int, max_units: int) -> ErasurePlan:
    """The erasure of the notes `ids` and of every note naming `subject` (nothing changes)."""
    rows = index.notes()
    if subject:
        ids = ids | {r.id for r in rows if names(_text(r), subject)}
    erased = sorted((r for r in rows if r.id in ids), key=lambda r: r.path)
    surviving = [_text(r).casefold() for r in rows if r.id not in ids]  # folded once
    needles: list[str] = [subject] if subject else []
    keys: list[str] = []
    for row in erased:
        needles.append(row.path)
        needles += distinctive_lines(row.body, surviving, folded=True)
        if encoder is not None:
            chunks, _ = note_chunks(row.title, row.body, row.frontmatter, encoder.count_tokens,
                                    max_tokens, max_units)
            keys += [embedding_key(c) for c in chunks]
    paths = [r.path for r in erased]
    trash = trash_copies(store.root / TRASH_DIR, paths, subject)
    return ErasurePlan(tuple(paths), tuple(r.id for r in erased), tuple(trash),
                       tuple(dict.fromkeys(needles)), tuple(sorted(set(keys))))


def execute(store: Store, index: Index, cache: EmbeddingCache | None, usage: UsageRecorder,
            todo: ErasurePlan, sync: Callable[[list[str]], object],
            extra_files: Sequence[Path], before: Callable[[], object] | None = None) -> Erased:
    """Carry out `todo` (see the module docstring for the order); `sync(paths)` brings the
    index in line with the folder for the removed paths; `before()` runs right after the
    intent is recorded (the caller's own derived files)."""
    journal = Journal(store)
    with store.lock.held():  # the whole erasure: no other process finishes it meanwhile
        name = journal.record(ForgetIntent(_plan_json(todo), tuple(map(str, extra_files))))
        if before is not None:
            before()
        removed, learning = steps(store, index, cache, usage, todo, sync, extra_files)
        journal.finish(name)
    # the plan's trash copies too, through a link the walk does not follow: a copy that
    # remove_below left behind one (no link followed) still counts against the proof
    left = [store.root / TRASH_DIR / rel for rel in todo.trash]
    proof = scan(owned_files(store.root, [*_with_sidecars(extra_files), *left]), todo.needles)
    return Erased(todo, removed, learning, proof)


def steps(store: Store, index: Index, cache: EmbeddingCache | None, usage: UsageRecorder,
          todo: ErasurePlan, sync: Callable[[list[str]], object],
          extra_files: Sequence[Path]) -> tuple[int, dict[str, int]]:
    """The erasure's steps, each idempotent (a recovery makes them all again); returns the
    embedding rows removed and the ledger's counts. Each step counts as one operation for
    fault injection (Store.count_op), so a crash test can kill the process between any two."""
    for path in todo.notes:
        store.erase(path)
    root = str(store.root)
    for rel in todo.trash:  # through folder descriptors: a folder swapped for a link is not
        where = f"{TRASH_DIR}/{rel}"  # followed (storage/anchored.py)
        if remove_below(root, where):
            store.count_op()
        prune_below(root, where.rpartition("/")[0], len(TRASH_DIR.split("/")))
    sync(list(todo.notes))
    store.count_op()
    keys = list(todo.chunk_keys)
    removed = index.forget_embeddings(keys)
    store.count_op()
    shared = {str(p): SharedEmbeddingCache(p) for p in extra_files}
    if isinstance(cache, TieredEmbeddingCache) and isinstance(cache.shared,
                                                             SharedEmbeddingCache):
        shared.setdefault(str(cache.shared.path), cache.shared)
    for _, each in sorted(shared.items()):
        removed += each.forget_embeddings(keys)
        store.count_op()
    learning = usage.redact(list(todo.ids), list(todo.needles))
    store.count_op()
    _drop_derived(store.root / STATE_DIR)
    store.count_op()
    index.vacuum()
    store.count_op()
    return removed, learning


def _plan_json(todo: ErasurePlan) -> dict[str, Any]:
    return {"notes": list(todo.notes), "ids": list(todo.ids), "trash": list(todo.trash),
            "needles": list(todo.needles), "chunk_keys": list(todo.chunk_keys)}


def plan_from_json(doc: dict[str, Any]) -> ErasurePlan:
    """The plan a `ForgetIntent` recorded (KeyError, TypeError or UnicodeEncodeError when it
    is not one: lists of strings, and of whole numbers for the ids, as `_plan_json` writes;
    else a forged "ids": [Infinity] failed every open, and 1.5 or the characters of a text
    were erased as what they happened to mean)."""
    ids = doc["ids"]
    if not isinstance(ids, list) or not all(type(i) is int for i in ids):
        raise TypeError("an erasure plan's ids are whole numbers")
    return ErasurePlan(texts(doc["notes"]), tuple(ids), texts(doc["trash"]),
                       texts(doc["needles"]), texts(doc["chunk_keys"]))


def recover(store: Store, index: Index, cache: EmbeddingCache | None, usage: UsageRecorder,
            sync: Callable[[list[str]], object]) -> list[ErasurePlan]:
    """Finish every erasure a killed process left journalled (`Vault.open`); the plans
    finished, in order (the caller's own derived files are then its to clean). An intent
    that cannot be read or finished stays pending (`doctor` lists it)."""
    journal = Journal(store)
    done: list[ErasurePlan] = []
    with store.lock.held():
        for name in journal.pending():
            todo = _finish(store, index, cache, usage, sync, journal, name)
            if todo is not None:
                done.append(todo)
    return done


def _finish(store: Store, index: Index, cache: EmbeddingCache | None, usage: UsageRecorder,
            sync: Callable[[list[str]], object], journal: Journal, name: str
            ) -> ErasurePlan | None:
    """Finish the erasure intent `name`; None when it is no readable erasure."""
    try:
        intent = journal.load(name)
        if not isinstance(intent, ForgetIntent):
            return None
        todo = plan_from_json(intent.plan)
        for path in todo.notes:  # a name the store refuses: no note rmh could have erased
            store.check(path)
    except (OSError, ValueError, KeyError, TypeError, RecursionError, PathRefused):
        return None
    steps(store, index, cache, usage, todo, sync, [Path(p) for p in intent.extra_files])
    journal.finish(name)
    store.recovered.append({"intent": name, "op": "forget", "state": "rolled forward",
                            "notes": len(todo.notes)})
    return todo


def _drop_derived(state: Path) -> None:
    """Remove the persisted retrieval structures (retrieval/dense_store.py, lexical_store.py,
    ivf_store.py, storage/edge_store.py, note_store.py, stat_store.py) and the catch-up
    record (storage/catch_up.py: the paths changed since the saved base): they hold the
    erased notes' chunk keys, terms and vectors, digests of their paths and links, their
    paths and text; the next search rebuilds them from the notes that remain."""
    for path in [state / lexical_store.FILE, state / lexical_store.LEGACY,
                 *sorted(state.glob(f".{lexical_store.FILE}.*.tmp")),
                 state / dense_store.INDEX, state / ivf_store.INDEX,
                 state / edge_store.FILE, state / note_store.FILE, state / catch_up.FILE,
                 *sorted(state.glob(f".{catch_up.FILE}.*.tmp")),
                 *sorted(state.glob(f".{note_store.FILE}.*.tmp")),
                 state / stat_store.FILE, *sorted(state.glob(f".{stat_store.FILE}.*.tmp")),
                 *sorted(state.glob(f"{stamped.PREFIX}*.npz")),
                 *sorted(state.glob(f".{stamped.PREFIX}*.tmp")),
                 *sorted(state.glob(f"{dense_store.ROWS_PREFIX}*.npy")),
                 *sorted(state.glob(f"{ivf_store.CODES_PREFIX}*.npy"))]:
        path.unlink(missing_ok=True)


def _with_sidecars(files: Sequence[Path]) -> list[Path]:
    return [p for f in files for p in (f, Path(f"{f}-wal"), Path(f"{f}-journal"))]
