"""An ingest's journalled writes (`WritesIntent`, storage/intents.py's module docstring), the
same with archives in the learning ledger (`ArchiveWritesIntent`, finished by the facade:
vault/archive_writes.py) and what applying an intent did (`Outcome`)."""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import (
    DiskFull,
    EditConflict,
    NoteExists,
    NoteNotFound,
    NotText,
    PathRefused,
    PermissionDenied,
)
from ..notes.hashing import content_hash
from . import intent_fields as fields
from .generated_record import Entry, set_entries
from .intent_fields import VERSION
from .store import Store


@dataclass
class Outcome:
    """What applying (or recovering) one intent did."""

    intent: str
    op: str
    old: str
    new: str
    state: str = "rolled forward"  # or "rolled back", "unreadable", "failed: why"
    written: list[str] = field(default_factory=list)  # paths changed, in plan order
    left: list[str] = field(default_factory=list)  # changed since planned: left as they are
    # the trash copies of what a note held before a file saved at a move's old name took its
    # place (intent_merge.fold_old: the note's editor's save, or another note made there)
    replaced: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Write:
    """One note of a `WritesIntent`: `path` from `old_hash` (None: absent) to `new_text`;
    with `trash`, the bytes of `old_hash` put in the trash first (`Store.trash`, kept: a
    hard link), so a kill between the copy and the write leaves both or neither. `undo`: the
    text of `old_hash`, which a whole intent's recovery puts back when another of its writes
    cannot be made (None: not kept; a new note is undone by removing it). `record`: the
    note's line of ingest's record of generated notes, set as the write ends (made or taken
    back) by a recovery too, so the record never names a note absent (generated_record.py)."""

    path: str
    old_hash: str | None
    new_text: str
    trash: bool = False
    undo: str | None = None
    record: Entry | None = None


@dataclass(frozen=True)
class WritesIntent:
    """Several writes made as one operation (module docstring). `whole`: all or none (a
    fact's supersede: the old note and its successor); a recovery that cannot make one of
    them (changed since, a folder at its path, not writable) takes back those it made or
    found made, so the group ends as it was before (`apply_writes`), never half made."""

    writes: tuple[Write, ...]
    whole: bool = False
    refused: bool = False  # its process refused it midway: recovery only takes it back

    def to_json(self) -> dict[str, Any]:
        # "trash-writes": an rmh that cannot make the copies reports it unreadable, never
        # writes over bytes not yet in the trash; "whole-writes" likewise: an rmh that knows
        # no `whole`/`refused`/`undo` (before session 40) would finish a refused change
        op = ("whole-writes" if self.whole else "trash-writes" if any(w.trash for w in self.writes)
              else "writes")
        return {"version": VERSION, "op": op, **asdict(self)}

    @classmethod
    def plan(cls, store: Store, notes: Sequence[tuple[str, str]],
             trash: Collection[str] = (), whole: bool = False,
             record: Mapping[str, Entry] | None = None) -> WritesIntent:
        """The intent of writing `notes` ((vault path, text)) over what the files hold now,
        those at the paths `trash` copied to the trash first; `whole` keeps each note's text
        now as its `undo`; `record`: each path's record line (`Write.record`)."""
        writes = []
        for path, text in notes:
            old_hash, undo = _now(store, path, whole)
            writes.append(Write(path, old_hash, text, path in trash, undo,
                                None if record is None else record.get(path)))
        return cls(tuple(writes), whole)


def _now(store: Store, path: str, whole: bool) -> tuple[str | None, str | None]:
    """(hash of the bytes at `path` now, their text when `whole` keeps it)."""
    if not whole:
        return file_hash(store, path), None
    try:
        text = store.read_text(path)
    except (NoteNotFound, NotText):
        return file_hash(store, path), None
    return content_hash(text), text


def _writes(value: object) -> tuple[Write, ...]:
    t = fields.text
    return tuple(Write(t(w["path"]), None if w["old_hash"] is None else t(w["old_hash"]),
                       t(w["new_text"]), w.get("trash") is True,
                       None if w.get("undo") is None else t(w["undo"]), _entry(w.get("record")))
                 for w in fields.objects(value))


def _entry(value: object) -> Entry | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise TypeError("a record line is an object")
    t = fields.text
    before = value["before"]
    return Entry(t(value["file"]), t(value["key"]),
                 None if before is None else fields.texts(before), t(value["after"]))


def load_writes(doc: dict[str, Any]) -> WritesIntent | ArchiveWritesIntent | None:
    """The writes intent in `doc` (KeyError, TypeError when damaged); None: another op."""
    if doc.get("version") != VERSION or doc.get("op") not in ("writes", "trash-writes",
                                                              "whole-writes", "archive-writes"):
        return None
    if doc["op"] != "archive-writes":
        return WritesIntent(_writes(doc["writes"]), doc["op"] == "whole-writes",
                            doc.get("refused") is True)
    archive = tuple((_note_id(a[0]), fields.text(a[1])) for a in doc["archive"])
    now = doc["now"]
    if not isinstance(now, float):
        raise TypeError("an intent's time is a number")
    return ArchiveWritesIntent(_writes(doc["writes"]), archive, now)


def _note_id(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError("a note id is an integer")
    return value


@dataclass(frozen=True)
class ArchiveWritesIntent:
    """Notes archived in the learning ledger (note id, reason) at time `now` and notes written,
    as one operation (vault/archive_writes.py): not applied by `Journal.recover`, which has
    no ledger."""

    writes: tuple[Write, ...]
    archive: tuple[tuple[int, str], ...]
    now: float

    def to_json(self) -> dict[str, Any]:
        return {"version": VERSION, "op": "archive-writes", **asdict(self)}


_REFUSED = (EditConflict, NoteExists, NoteNotFound, PathRefused)


def apply_writes(store: Store, intent: WritesIntent, name: str = "") -> Outcome:
    """Make (or finish) a `WritesIntent`'s writes, each guarded by its old hash; idempotent.
    A whole intent with a write left (or not permitted, or no room for it) is taken back
    instead (`_take_back`: every write made, by this call or before, put back to its `undo`
    or removed); the record lines last (`set_record`)."""
    out = Outcome(name, "writes", "", "")
    # whole: a note that cannot be written now (a full disk too: none is freed by waiting
    # half made) takes the others back
    refused = (*_REFUSED, PermissionDenied, DiskFull) if intent.whole else _REFUSED
    with store.lock.held():
        if intent.whole:
            _settle_asides(store, intent)
        if intent.whole and intent.refused:
            _take_back(store, intent, out)
            set_record(store, intent)
            return out
        for w in intent.writes:
            now = step_hash(store, w.path)
            if now == content_hash(w.new_text):
                continue
            if intent.whole and out.left:  # taken back below: not made
                continue
            if now != w.old_hash:
                out.left.append(w.path)
                continue
            try:
                if w.trash:  # a copy an earlier attempt linked is reused (removal.py)
                    store.trash(w.path, keep=True)
                store.write_text(w.path, w.new_text, create_only=w.old_hash is None,
                                 expected_hash=w.old_hash)
            except refused:
                out.left.append(w.path)
                continue
            out.written.append(w.path)
        if intent.whole and out.left:
            _take_back(store, intent, out)
        set_record(store, intent)
    return out


def set_record(store: Store, intent: WritesIntent) -> None:
    """Each write's record line as the write ends: made (its path holds its text), or as it
    was (its path holds its old bytes); one changed since by another program keeps the line
    the ingest saved (both ours: the new bytes told from the edit), as a live ingest does."""
    lines = []
    for w in intent.writes:
        if w.record is None:
            continue
        now = step_hash(store, w.path)
        if now == content_hash(w.new_text):
            lines.append((w.record, True))
        elif now == w.old_hash:
            lines.append((w.record, False))
    if lines:
        set_entries(store.state, lines, store.count_op)


def _settle_asides(store: Store, intent: WritesIntent) -> None:
    """Put back first a note a dead process's take-back set aside (`Store.erase`: killed
    between the rename aside and the unlink), so the take-back finds it where it was written
    (else it was put back by the next sync, after the journal ended: a note of a conversation
    taken back, its links dangling). Only its folders are listed (`Store.clean_stale_temps`)."""
    seen = []
    for folder in sorted({w.path.rpartition("/")[0] for w in intent.writes}):
        try:
            names = os.listdir(os.path.join(store.root, folder))
        except OSError:
            continue
        seen += [f"{folder}/{n}" if folder else n for n in sorted(names)
                 if n.startswith(".") and ".rmh-tmp-aside-" in n]
    if seen:
        store.clean_stale_temps(seen)


def _take_back(store: Store, intent: WritesIntent, out: Outcome) -> None:
    """Put every write of the whole `intent` found made back as it was (last first, each
    guarded by the hash of the text written: an edit since is left as it is). The notes it
    made are removed first, those it replaced written back after: a take-back that runs out
    of room (its intent kept, retried at every open) has freed what it could first and left
    none of the new notes, and one note with no room does not stop the others (STORE17: a
    grown re-ingest met a full disk, and its take-back stopped at the first old text it could
    not write back, the new turns' notes still there)."""
    out.state, out.written = "rolled back", []
    full: DiskFull | None = None
    for made_new in (True, False):
        for w in reversed(intent.writes):
            made = content_hash(w.new_text)
            if (w.old_hash is None) != made_new or w.path in out.left or step_hash(
                    store, w.path) != made:
                continue
            try:
                if w.old_hash is None:
                    store.erase(w.path, expected_hash=made)
                elif w.undo is not None and content_hash(w.undo) == w.old_hash:
                    store.write_text(w.path, w.undo, expected_hash=made)
                else:
                    continue
            except (*_REFUSED, PermissionDenied):
                continue
            except DiskFull as exc:  # the rest first, then raised: the intent stays
                full = full or exc
                continue
            out.written.append(w.path)
    if full is not None:
        raise full


def file_hash(store: Store, path: str) -> str | None:
    """sha256 hex of the file's bytes now; None when it is missing or not a note file
    (PathRefused where no note may be read there: a plan is refused before it starts)."""
    try:
        return content_hash(store.read_bytes(path))
    except (NoteNotFound, NotText):
        return None


def step_hash(store: Store, path: str) -> str | None:
    """`file_hash` as a recorded plan's steps read it: also None where no note may be read
    now (a symlink leaving the vault at the path, a folder on the way replaced by one:
    `path_refused`), so the step takes it as gone (left, or a move rolled back) instead of
    failing the recovery at every open (STORE12, session 37)."""
    try:
        return file_hash(store, path)
    except PathRefused:
        return None
