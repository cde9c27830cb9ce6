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

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import erasure_steps
from .errors import ErasurePending, PathRefused
from .learning.usage import UsageRecorder
from .notes.rows import NoteRow
from .retrieval.encoders import Encoder
from .retrieval.signals.dense import note_chunks
from .storage import forgotten
from .storage.embeddings import (
    EmbeddingCache,
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
    """Everything of a note a subject can be named in: its path, title, every frontmatter
    field (a conversation's `speakers`, a turn's `speaker`, not only aliases and tags) and
    its body."""
    fields = json.dumps(row.frontmatter, ensure_ascii=False, sort_keys=True, default=str)
    return "\n".join((row.path, row.title, *row.aliases, *row.tags, fields, row.body))


def plan(store: Store, index: Index, ids: set[int], subject: str, encoder: Encoder | None,
         max_tokens: int, max_units: int) -> ErasurePlan:
    """The erasure of the notes `ids` and of every note naming `subject` (nothing changes)."""
    rows = index.notes()
    named = tuple(sorted(r.path for r in rows if r.id in ids))
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
                       tuple(dict.fromkeys(needles)), tuple(sorted(set(keys))), subject, named)


def execute(store: Store, index: Index, cache: EmbeddingCache | None, usage: UsageRecorder,
            todo: ErasurePlan, sync: Callable[[list[str]], object],
            extra_files: Sequence[Path], before: Callable[[], object] | None = None) -> Erased:
    """Carry out `todo` (see the module docstring for the order); `sync(paths)` brings the
    index in line with the folder for the removed paths; `before()` runs right after the
    intent is recorded (the caller's own derived files)."""
    journal = Journal(store)
    with store.lock.held():  # the whole erasure: no other process finishes it meanwhile
        # first: nothing rmh does (a hook's ingest of a transcript) makes it again
        forgotten.remember(store.root / STATE_DIR, todo.subject, todo.named, store.count_op)
        name = journal.record(ForgetIntent(_plan_json(todo), tuple(map(str, extra_files))))
        if before is not None:
            before()
        done = erasure_steps.run(store, index, cache, usage, todo, sync, extra_files)
        if done.failed:  # the intent stays: the next open tries the steps again
            if not done.blocking:
                name = _narrow(journal, name, todo, extra_files)
            raise erasure_steps.pending(name, done.failed, todo.needles)
        journal.finish(name)
    # the plan's trash copies too, through a link the walk does not follow: a copy that
    # remove_below left behind one (no link followed) still counts against the proof
    left = [store.root / TRASH_DIR / rel for rel in todo.trash]
    proof = scan(owned_files(store.root, [*_with_sidecars(extra_files), *left]), todo.needles,
                 todo.subject)
    return Erased(todo, done.removed, done.learning, proof)


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
            sync: Callable[[list[str]], object],
            own: Callable[[list[str]], object] | None = None) -> list[ErasurePlan]:
    """Finish every erasure a killed process left journalled (`Vault.open`); the plans whose erased
    text is no longer readable, in order. An intent that cannot be read stays pending (`doctor`
    lists it). One whose steps fail stays pending too (erasure_steps.py): when a failed step leaves
    erased text readable, ErasurePending (after every intent was tried; it carries their needles, so
    the caller can clean its own files all the same), else the vault opens and `doctor` lists the
    step that failed (`store.recovered`). `own`: the caller's files (erasure_steps.run)."""
    journal = Journal(store)
    done: list[ErasurePlan] = []
    blocked: list[ErasurePending] = []
    with store.lock.held():
        for name in journal.pending():
            try:
                todo = _finish(store, index, cache, usage, sync, journal, name, own)
            except ErasurePending as exc:
                blocked.append(exc)
                continue
            if todo is not None:
                done.append(todo)
    if blocked:
        first = blocked[0]
        raise ErasurePending(first.intent, [f for b in blocked for f in b.failed], first.fix,
                             tuple(n for b in blocked for n in b.needles))
    return done


def refuse_pending(store: Store, why: str) -> None:
    """ErasurePending when an erasure is pending that this open will not finish (`why`: no
    learning log to redact, or a vault read only for this process): the index and the files
    may still hold its text, so nothing is served until an open that can finish it does.
    An intent that is no readable erasure, or one narrowed to its steps at rest (nothing
    readable left), is no reason (it stays pending, `doctor` lists it)."""
    journal = Journal(store)
    names: list[str] = []
    needles: list[str] = []
    for name in journal.pending():
        try:
            intent = journal.load(name)
            if not isinstance(intent, ForgetIntent):
                continue
            todo = plan_from_json(intent.plan)
            if erasure_steps.narrowed(todo):  # only bytes nothing serves: no reason
                continue
            needles += todo.needles
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            continue
        names.append(name)
    if names:
        raise ErasurePending(names[0], [("open", "", why)], "run `rmh doctor` as the vault's "
                             "owner: its open finishes the erasure (if it fails, its message "
                             "says why: a full disk, a file it may not remove)", tuple(needles))


def _finish(store: Store, index: Index, cache: EmbeddingCache | None, usage: UsageRecorder,
            sync: Callable[[list[str]], object], journal: Journal, name: str,
            own: Callable[[list[str]], object] | None) -> ErasurePlan | None:
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
    done = erasure_steps.run(store, index, cache, usage, todo, sync,
                             [Path(p) for p in intent.extra_files], own)
    if done.blocking:
        raise erasure_steps.pending(name, done.failed, todo.needles)
    state = "rolled forward"
    if done.failed:  # only bytes nothing serves are left: tried again at the next open
        state = "pending: " + "; ".join(f"{f.step}: {f.error}" for f in done.failed)
        if not erasure_steps.narrowed(todo):
            name = _narrow(journal, name, todo, intent.extra_files)
    else:
        journal.finish(name)
    store.recovered.append({"intent": name, "op": "forget", "state": state,
                            "notes": len(todo.notes)})
    return todo


def _narrow(journal: Journal, name: str, todo: ErasurePlan,
            extra_files: Sequence[Path | str]) -> str:
    """Replace the intent `name`, whose failed steps are all at rest, by one holding only
    what those need (erasure_steps.at_rest); its name. A kill between the two leaves both
    (the whole one is made again: as before); no room to write it leaves the whole one."""
    try:
        new = journal.record(ForgetIntent(_plan_json(erasure_steps.at_rest(todo)),
                                          tuple(map(str, extra_files))))
    except OSError:
        return name
    journal.finish(name)
    return new


def _with_sidecars(files: Sequence[Path]) -> list[Path]:
    return [p for f in files for p in (f, Path(f"{f}-wal"), Path(f"{f}-journal"))]
