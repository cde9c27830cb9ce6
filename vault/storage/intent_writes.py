"""An ingest's journalled writes (`WritesIntent`, storage/intents.py's module docstring), the
same with archives in the learning ledger (`ArchiveWritesIntent`, finished by the facade:
vault/archive_writes.py) and what applying an intent did (`Outcome`)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import EditConflict, NoteExists, NoteNotFound, NotText
from ..notes.hashing import content_hash
from . import intent_fields as fields
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
    hard link), so a kill between the copy and the write leaves both or neither."""

    path: str
    old_hash: str | None
    new_text: str
    trash: bool = False


@dataclass(frozen=True)
class WritesIntent:
    """Several writes made as one operation (module docstring)."""

    writes: tuple[Write, ...]

    def to_json(self) -> dict[str, Any]:
        # "trash-writes": an rmh that cannot make the copies reports it unreadable, never
        # writes over bytes not yet in the trash
        op = "trash-writes" if any(w.trash for w in self.writes) else "writes"
        return {"version": VERSION, "op": op, **asdict(self)}

    @classmethod
    def plan(cls, store: Store, notes: Sequence[tuple[str, str]],
             trash: Collection[str] = ()) -> WritesIntent:
        """The intent of writing `notes` ((vault path, text)) over what the files hold now,
        those at the paths `trash` copied to the trash first."""
        return cls(tuple(Write(p, file_hash(store, p), text, p in trash) for p, text in notes))


def _writes(value: object) -> tuple[Write, ...]:
    t = fields.text
    return tuple(Write(t(w["path"]), None if w["old_hash"] is None else t(w["old_hash"]),
                       t(w["new_text"]), w.get("trash") is True) for w in fields.objects(value))


def load_writes(doc: dict[str, Any]) -> WritesIntent | ArchiveWritesIntent | None:
    """The writes intent in `doc` (KeyError, TypeError when damaged); None: another op."""
    if doc.get("version") != VERSION or doc.get("op") not in ("writes", "trash-writes",
                                                              "archive-writes"):
        return None
    if doc["op"] != "archive-writes":
        return WritesIntent(_writes(doc["writes"]))
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


def apply_writes(store: Store, intent: WritesIntent, name: str = "") -> Outcome:
    """Make (or finish) a `WritesIntent`'s writes, each guarded by its old hash; idempotent."""
    out = Outcome(name, "writes", "", "")
    with store.lock.held():
        for w in intent.writes:
            now = file_hash(store, w.path)
            if now == content_hash(w.new_text):
                continue
            if now != w.old_hash:
                out.left.append(w.path)
                continue
            try:
                if w.trash:  # a copy an earlier attempt linked is reused (removal.py)
                    store.trash(w.path, keep=True)
                store.write_text(w.path, w.new_text, create_only=w.old_hash is None,
                                 expected_hash=w.old_hash)
            except (EditConflict, NoteExists, NoteNotFound):
                out.left.append(w.path)
                continue
            out.written.append(w.path)
    return out


def file_hash(store: Store, path: str) -> str | None:
    """sha256 hex of the file's bytes now; None when it is missing or not a note file."""
    try:
        return content_hash(store.read_bytes(path))
    except (NoteNotFound, NotText):
        return None
