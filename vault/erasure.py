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
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ErasurePending, PathRefused
from .learning.usage import UsageRecorder
from .notes.rows import NoteRow
from .retrieval.encoders import Encoder
from .retrieval.signals.dense_units import note_chunks
from .storage import leftovers
from .storage.embeddings import (
    EmbeddingCache,
    embedding_key,
)
from .storage.erase import (
    ErasurePlan,
    Proof,
    distinctive_lines,
    names,
    names_bytes,
    owned_files,
    scan,
    trash_copies,
)
from .storage.fileops import alive
from .storage.index import Index
from .storage.intent_fields import texts
from .storage.intents import ForgetIntent, Journal
from .storage.removal import TRASH_NAME
from .storage.store import TRASH_DIR, Store


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


def _forms(subject: str) -> tuple[str, ...]:
    """The subject as typed, and as a conversation's notes write a name with brackets (round:
    "[John]" is "(John)", conversation/layout.py `_plain`), so that a speaker is forgotten by
    the name the chat shows (CONV6: `--subject "[John]"` named no note)."""
    if not subject:
        return ()
    return tuple(dict.fromkeys((subject, subject.replace("[", "(").replace("]", ")"))))


def _link_path(value: Any) -> str | None:
    """The note path a generated `'[[PATH|label]]'` frontmatter link names (PATH + ".md")."""
    if not isinstance(value, str) or not value.startswith("[[") or not value.endswith("]]"):
        return None
    return value[2:-2].split("|", 1)[0] + ".md"


def _about_speakers(rows: Sequence[NoteRow], ids: set[int], subject: str) -> set[int]:
    """Notes ingest made about a speaker the subject names, whose own text may not name it:
    the speaker's entity note (`speaker_note` of its turns) and the fact notes about or
    pointing at it (`subject_note`, `value_note`). A speaker's key drops punctuation ("C++
    Bot (beta)" is "c++ bot beta", "John (work)" "john work"), so `forget --subject "John
    (work)"` named the turns but left "john work lives in rome" (CONV6)."""
    targets = {t for r in rows if r.id in ids and names(str(r.frontmatter.get("speaker", "")),
                                                         subject)
               if (t := _link_path(r.frontmatter.get("speaker_note"))) is not None}
    return {r.id for r in rows if r.path in targets
            or _link_path(r.frontmatter.get("subject_note")) in targets
            or _link_path(r.frontmatter.get("value_note")) in targets}


def plan(store: Store, index: Index, ids: set[int], subject: str, encoder: Encoder | None,
         max_tokens: int, max_units: int) -> ErasurePlan:
    """The erasure of the notes `ids` and of every note naming `subject` (nothing changes)."""
    rows = index.notes()
    named = tuple(sorted(r.path for r in rows if r.id in ids))
    for form in _forms(subject):
        ids = ids | {r.id for r in rows if names(_text(r), form)}
        ids = ids | _about_speakers(rows, ids, form)
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
    folded = [p.casefold() for p in paths]
    shadows = tuple(sorted(r.path for r in rows if r.id not in ids
                           and any(f in r.path.casefold() for f in folded)))
    trash = trash_copies(store.state / TRASH_NAME, paths, subject)  # the held `.rmh`
    hidden = tuple(left.path for left in leftovers.find(store, alive) if left.note in paths
                   or (subject and names_bytes(store.root / left.path, subject)))
    return ErasurePlan(tuple(paths), tuple(r.id for r in erased), tuple(trash),
                       tuple(dict.fromkeys(needles)), tuple(sorted(set(keys))), subject, named,
                       shadows, hidden)


def execute(store: Store, index: Index, cache: EmbeddingCache | None, usage: UsageRecorder,
            todo: ErasurePlan, sync: Callable[[list[str]], object],
            extra_files: Sequence[Path], before: Callable[[], object] | None = None,
            settings: Sequence[Path] = ()) -> Erased:
    """Carry out `todo` (see the module docstring for the order); `sync(paths)` brings the
    index in line with the folder for the removed paths; `before()` runs right after the
    intent is recorded (the caller's own derived files); `settings`: the caller's settings
    files, whose file-system paths naming the subject the proof reports apart (`scan`)."""
    from . import erasure_steps  # here: a search's open never needs the steps (issue 33)
    from .storage import forgotten

    journal = Journal(store)
    with store.lock.held():  # the whole erasure: no other process finishes it meanwhile
        # first: nothing rmh does (a hook's ingest of a transcript) makes it again
        forgotten.remember(store.state, todo.subject, todo.named, store.count_op)
        name = journal.record(ForgetIntent(_plan_json(todo), tuple(map(str, extra_files))))
        if before is not None:
            before()
        done = erasure_steps.run(store, index, cache, usage, todo, sync, extra_files)
        if done.failed:  # the intent stays: the next open tries the steps again
            if not done.blocking:
                name = _narrow(journal, name, todo, extra_files,
                               erasure_steps.retry_state(done, store, extra_files))
            raise erasure_steps.pending(name, done.failed, todo.needles, len(todo.notes))
        journal.finish(name)
    # the plan's trash copies too, through a link the walk does not follow: a copy that
    # remove_below left behind one (no link followed) still counts against the proof
    left = [store.root / TRASH_DIR / rel for rel in todo.trash]
    unread: list[Path] = []
    proof = scan(owned_files(store.root, [*_with_sidecars(extra_files), *left], unread),
                 todo.needles, todo.subject, store.root, todo.shadows, unread=unread,
                 settings=settings)
    return Erased(todo, done.removed, done.learning, proof)


def _plan_json(todo: ErasurePlan, retry: dict[str, object] | None = None) -> dict[str, Any]:
    doc = {"notes": list(todo.notes), "ids": list(todo.ids), "trash": list(todo.trash),
           "needles": list(todo.needles), "chunk_keys": list(todo.chunk_keys),
           "hidden": list(todo.hidden)}
    return doc if retry is None else {**doc, "retry": retry}  # (erasure_steps.retry_state)


def plan_from_json(doc: dict[str, Any]) -> ErasurePlan:
    """The plan a `ForgetIntent` recorded (KeyError, TypeError or UnicodeEncodeError when it
    is not one: lists of strings, and of whole numbers for the ids, as `_plan_json` writes;
    else a forged "ids": [Infinity] failed every open, and 1.5 or the characters of a text
    were erased as what they happened to mean)."""
    ids = doc["ids"]
    if not isinstance(ids, list) or not all(type(i) is int for i in ids):
        raise TypeError("an erasure plan's ids are whole numbers")
    return ErasurePlan(texts(doc["notes"]), tuple(ids), texts(doc["trash"]),
                       texts(doc["needles"]), texts(doc["chunk_keys"]),
                       hidden=texts(doc.get("hidden", [])))  # (an intent of before 34: none)


def recover(store: Store, index: Index, cache: EmbeddingCache | None, usage: UsageRecorder,
            sync: Callable[[list[str]], object],
            own: Callable[[list[str]], object] | None = None, *,
            at_rest: bool = False) -> list[ErasurePlan]:
    """Finish every erasure a killed process left journalled (`Vault.open`); the plans whose erased
    text is no longer readable, in order. An intent that cannot be read stays pending (`doctor`
    lists it). One whose steps fail stays pending too (erasure_steps.py): when a failed step leaves
    erased text readable, ErasurePending (after every intent was tried; it carries their needles, so
    the caller can clean its own files all the same), else the vault opens and `doctor` lists the
    step that failed (`store.recovered`). `own`: the caller's files (erasure_steps.run). One
    narrowed to its steps at rest whose last try failed on a full disk is tried again only once
    free space grew (erasure_steps.waiting), or always with `at_rest` (`rmh doctor`)."""
    journal = Journal(store)
    done: list[ErasurePlan] = []
    blocked: list[ErasurePending] = []
    if not store.lock.is_held and not journal.pending():
        return done  # none: no lock taken (an erasure recorded later is PendingGuard's)
    with store.lock.held():
        for name in journal.pending():
            try:
                todo = _finish(store, index, cache, usage, sync, journal, name, own, at_rest)
            except ErasurePending as exc:
                blocked.append(exc)
                continue
            if todo is not None:
                done.append(todo)
    if blocked:
        first = blocked[0]
        raise ErasurePending(first.intent, [f for b in blocked for f in b.failed], first.fix,
                             tuple(n for b in blocked for n in b.needles),
                             sum(b.notes for b in blocked))
    return done


def refuse_pending(store: Store, why: str) -> None:
    """ErasurePending when an erasure is pending that this open will not finish (`why`: no
    learning log to redact, or a vault read only for this process): the index and the files
    may still hold its text, so nothing is served until an open that can finish it does.
    An intent that is no readable erasure, or one narrowed to its steps at rest (nothing
    readable left), is no reason (it stays pending, `doctor` lists it)."""
    journal = Journal(store)
    found = [(name, got) for name in journal.pending()
             if (got := _readable(journal, name)) is not None]
    _refuse(found, "open", why, "run `rmh doctor` as the vault's owner: its open finishes the "
            "erasure (if it fails, its message says why: a full disk, a file it may not remove)")


class PendingGuard:
    """Checked by an open vault before every call (storage/live.py `LiveIndex.guard`), so a
    process that serves the vault for long (`rmh serve`, the hooks' daemon) stops serving an
    erasure's text as soon as another process journals it: ErasurePending while a readable
    erasure is pending (being made, or a step of it failed), as a fresh open would raise; once
    it is finished the calls are answered again (the sync sees its changes). Not while this
    thread holds the write lock (its own erasure, or an operation that checked before it took
    the lock: no other process journals one meanwhile). Cost per call: one listdir of
    `.rmh/intents/`; an intent is read once (its name, inode, size and mtime kept)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.journal = Journal(store)
        self._seen: dict[str, tuple[tuple[int, int, int], _Pending | None]] = {}

    def __call__(self) -> None:
        names = self.journal.pending()
        if not names or self.store.lock.held_here:
            return
        seen: dict[str, tuple[tuple[int, int, int], _Pending | None]] = {}
        for name in names:
            try:
                info = os.stat(os.path.join(self.journal.folder, name))
            except OSError:
                continue  # finished meanwhile
            key = (info.st_ino, info.st_size, info.st_mtime_ns)
            known = self._seen.get(name)
            seen[name] = known if known is not None and known[0] == key else (
                key, _readable(self.journal, name))
        self._seen = seen
        _refuse([(name, got) for name, (_, got) in seen.items() if got is not None],
                "pending", "an erasure is being made by another process, or a step of it failed",
                "wait for the erasure to finish, or run `rmh doctor` as the vault's owner: its "
                "open finishes it (if it fails, its message says why); calls are answered again "
                "once it is finished, without a restart")


@dataclass(frozen=True)
class _Pending:
    """A pending erasure whose text may still be readable: how many notes, its needles."""

    notes: int
    needles: tuple[str, ...]


def _readable(journal: Journal, name: str) -> _Pending | None:
    """The intent `name` when it is an erasure whose text may still be readable; None when it
    is no readable erasure, or one narrowed to its steps at rest."""
    from . import erasure_steps

    loaded = _load(journal.store, journal, name)
    if loaded is None or erasure_steps.narrowed(loaded[1]):  # narrowed: nothing readable
        return None
    return _Pending(len(loaded[1].notes), loaded[1].needles)


def _load(store: Store, journal: Journal, name: str) -> tuple[ForgetIntent, ErasurePlan] | None:
    """The erasure intent `name` and its plan; None when it is no readable erasure (another
    intent, unreadable, or naming a note the store refuses: none rmh could have erased)."""
    try:
        intent = journal.load(name)
        if not isinstance(intent, ForgetIntent):
            return None
        todo = plan_from_json(intent.plan)
        for path in todo.notes:
            store.check(path)
    except (OSError, ValueError, KeyError, TypeError, RecursionError, PathRefused):
        return None
    return intent, todo


def _refuse(found: Sequence[tuple[str, _Pending]], step: str, why: str, fix: str) -> None:
    if found:
        raise ErasurePending(found[0][0], [(step, "", why)], fix,
                             tuple(n for _, p in found for n in p.needles),
                             sum(p.notes for _, p in found))


def _finish(store: Store, index: Index, cache: EmbeddingCache | None, usage: UsageRecorder,
            sync: Callable[[list[str]], object], journal: Journal, name: str,
            own: Callable[[list[str]], object] | None, at_rest: bool) -> ErasurePlan | None:
    """Finish the erasure intent `name`; None when it is no readable erasure."""
    from . import erasure_steps

    loaded = _load(store, journal, name)
    if loaded is None:
        return None
    intent, todo = loaded
    extra = [Path(p) for p in intent.extra_files]
    narrowed = erasure_steps.narrowed(todo)
    retry = intent.plan.get("retry") if narrowed else None
    if not at_rest and erasure_steps.waiting(retry, store, extra):
        store.recovered.append({"intent": name, "op": "forget", "notes": 0, "state":
                                "pending: waiting for free space (tried again once it grows, "
                                "or by `rmh doctor`)"})
        return todo
    done = erasure_steps.run(store, index, cache, usage, todo, sync, extra, own,
                             vacuumed=isinstance(retry, dict) and retry.get("vacuumed") is True)
    if done.blocking:
        raise erasure_steps.pending(name, done.failed, todo.needles, len(todo.notes))
    state = "rolled forward"
    if done.failed:  # only bytes nothing serves are left: tried again at the next open
        state = "pending: " + "; ".join(f"{f.step}: {f.error}" for f in done.failed)
        now = erasure_steps.retry_state(done, store, extra)
        if not narrowed or now != retry:
            name = _narrow(journal, name, todo, intent.extra_files, now)
    else:
        journal.finish(name)
    store.recovered.append({"intent": name, "op": "forget", "state": state,
                            "notes": len(todo.notes)})
    return todo


def _narrow(journal: Journal, name: str, todo: ErasurePlan,
            extra_files: Sequence[Path | str], retry: dict[str, object]) -> str:
    """Replace the intent `name`, whose failed steps are all at rest, by one holding only
    what those need (erasure_steps.at_rest) and what the try left to know (`retry`:
    erasure_steps.retry_state); its name. A kill between the two leaves both (the whole one
    is made again: as before); no room to write it leaves the whole one."""
    from . import erasure_steps

    try:
        new = journal.record(ForgetIntent(_plan_json(erasure_steps.at_rest(todo), retry),
                                          tuple(map(str, extra_files))))
    except OSError:
        return name
    journal.finish(name)
    return new


def _with_sidecars(files: Sequence[Path]) -> list[Path]:
    return [p for f in files for p in (f, Path(f"{f}-wal"), Path(f"{f}-journal"))]
