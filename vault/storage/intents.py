"""The intent journal: multi-file operations that finish after a crash.

A move renames one note and rewrites the N notes that link to it: N + 1 files that no single
rename can change together. Before its first change, the operation writes its whole plan to
`.rmh/intents/NNNNNNNN.json` (temp file, fsync, rename, fsync the folder): the rename (`old`,
`new`, the moved file's hash) and each rewrite (path after the move, the hash it must have
now, its text now and its new text). The steps are then made in order, each one checked
against the plan, and the intent file is removed last. A process killed anywhere in between
leaves the intent behind; the next rmh process that opens the vault (`Journal.recover`, under
the vault's write lock, before anything else) makes the same steps again:

- the rename, when `old` is there and `new` is not; already made when `new` is there and
  `old` is not (or `new` holds the moved note's bytes, planned or not); the rename removes
  `old` by renaming it aside (the name the plan records) and checking it is the file linked
  at `new` there; an aside a kill left is settled first (Removal.settle_relocation);
- once the rename is made, a file at `old` again is the moved note saved under the name its
  editor knows (or a copy): while `new` holds what the move put there, it is renamed over
  `new` in one step (intent_merge.fold_old), what `new` held kept in the trash first
  (its trash path reported: Outcome.replaced);
  checked before the rewrites (a kill left it) and after them (saved while they were made);
- each rewrite, when the file still has the hash it had when planned (compare-and-swap under
  the lock); already made when it has the new text's hash; when it changed since (an editor
  saved it), made over their text where they did not change the same lines (a three-way
  merge, notes/merge3.py: a killed move's links no longer dangle because an editor saved the
  referrer before the next process recovered it), then the links to the moved note they
  wrote meanwhile rewritten too (one to the old name, written while the note was there, meant
  the note that moved: notes/relinks.py `relinked`); a referrer's plan is its links alone,
  so where both changed its lines their text is relinked all the same; the moved note's
  lines changed both ways are left as they are, and reported (their bytes win); a note the
  plan did not list, saved since with a link to the old name, is rewritten too
  (intent_added.py);
- when the rename cannot be made (the note is gone, `new` holds another file, or, recovering,
  `new` is on another file system than `old`, a mount point, or holds a folder or a symlink),
  it is rolled back instead: every rewrite already made is undone the same guarded way; a
  planned file that is no note now (a symlink, a folder) is left as it is, and reported.

Every step is idempotent, so a crash during recovery is recovered the same way. Intents of a
live process are never touched (it holds the write lock throughout; none listed: no lock).

A `WritesIntent` (an ingest's notes) is a set of writes, each with the hash its file has now
(None: a new note) and its new text: recovery writes each one still at its old hash, keeps
each already written, and leaves (and reports) one changed since. A whole one (a fact's
supersede, an ingest's conversation: all or none) that cannot make one of its writes (nor
find room) takes back the others; one its process refused (renamed `N.refused.json` before
it took back what it wrote: `Journal.refuse`) is only taken back, never completed. Each
write's record line (`Write.record`) is set as the write ends (generated_record.py).

A `ForgetIntent` (an erasure's plan) and an `ArchiveWritesIntent` (vault/archive_writes.py)
are finished by the facade, which has the parts they need (the index, the ledger): an erasure
is made again from its first step, every step idempotent, so after a kill the next open
leaves everything of the plan erased.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from typing import Any

from ..errors import DiskFull, NoteExists, PathRefused, VaultError
from ..full_disk import is_disk_full
from . import intent_fields as fields
from .fileops import create_temp, drop_temps, fsync_dir, open_regular
from .intent_added import relink_added
from .intent_fields import VERSION
from .intent_left import LEFT_NAME, keep_left, read_left
from .intent_merge import Rewrite as Rewrite  # re-exported: a plan's part
from .intent_merge import fold_old, folded_before, rewrite_once, twins
from .intent_writes import (
    ArchiveWritesIntent,
    Outcome,
    WritesIntent,
    apply_writes,
    load_writes,
    step_hash,
)
from .store import STATE_DIR, Store

INTENTS_NAME = "intents"  # in the held `.rmh/` (Store.state)
INTENTS_DIR = f"{STATE_DIR}/{INTENTS_NAME}"
TRIES = 32  # a rewrite made again over a racing save (`_rewrite`): a bound (8 lost once under load)
REFUSED = ".refused.json"  # a refused whole intent's name ends so (`Journal.refuse`)


def journal_stamp(root: str | os.PathLike[str]) -> tuple[int, int, int] | None:
    """(inode, mtime_ns, ctime_ns) of the vault's intent journal folder, None without one:
    it changes whenever an intent is recorded, replaced or finished (an entry added, renamed
    or removed), so a process waiting for another's erasure to finish (`rmh serve` started
    while one was pending) opens the vault again only when it may have (one stat per call)."""
    try:
        info = os.stat(os.path.join(root, INTENTS_DIR))
    except OSError:
        return None
    return info.st_ino, info.st_mtime_ns, info.st_ctime_ns


@dataclass(frozen=True)
class MoveIntent:
    """A move's plan: rename `old` (whose bytes hash to `moved_hash`) to `new`, then the
    rewrites."""

    old: str
    new: str
    moved_hash: str
    rewrites: tuple[Rewrite, ...]
    wiki: str = ""  # a link's target to the note after the move ("": an older plan's)
    aside: str = ""  # the old name's aside before its unlink (Store.move; "": an older plan's)

    def to_json(self) -> dict[str, Any]:
        return {"version": VERSION, "op": "move", **asdict(self)}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> MoveIntent:
        if doc.get("version") != VERSION or doc.get("op") != "move":
            raise ValueError(f"unknown intent: version {doc.get('version')}, op {doc.get('op')}")
        t = fields.text
        return cls(t(doc["old"]), t(doc["new"]), t(doc["moved_hash"]),
                   tuple(Rewrite(t(r["path"]), t(r["text"]), t(r["new_text"]),
                                 fields.texts(r.get("names", [])))
                         for r in fields.objects(doc["rewrites"])), t(doc.get("wiki", "")),
                   t(doc.get("aside", "")))


@dataclass(frozen=True)
class ForgetIntent:
    """An erasure's plan (`Vault.forget`): its fields are `ErasurePlan`'s, as JSON, and the
    shared cache files. Not applied here: finishing it needs the index and the learning
    ledger, so `Journal.recover` leaves it pending and `Vault.open` finishes it (every step
    of an erasure is idempotent). It holds the erased strings until it is removed, right
    before the proof scan."""

    plan: dict[str, Any]
    extra_files: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"version": VERSION, "op": "forget", "plan": self.plan,
                "extra_files": list(self.extra_files)}


Intent = MoveIntent | WritesIntent | ForgetIntent | ArchiveWritesIntent


def load_intent(doc: object) -> Intent:
    """An intent from its JSON (ValueError, KeyError or TypeError when it is not one, down to
    each field's type: a damaged or forged file is then reported unreadable by `recover`
    instead of failing every open of the vault half-way through its steps)."""
    if not isinstance(doc, dict):
        raise TypeError("an intent is a JSON object")
    if doc.get("version") == VERSION and doc.get("op") == "forget":
        if not isinstance(doc["plan"], dict):
            raise TypeError("a forget intent's plan is an object")
        return ForgetIntent(dict(doc["plan"]), fields.texts(doc["extra_files"]))
    writes = load_writes(doc)
    return MoveIntent.from_json(doc) if writes is None else writes


def _rename_state(store: Store, intent: MoveIntent) -> str:
    """"todo", "done" or "impossible" for the plan's rename (module docstring)."""
    old_hash, new_hash = step_hash(store, intent.old), step_hash(store, intent.new)
    if old_hash is not None and new_hash is not None and twins(store, intent.old, intent.new):
        return "todo"
    if new_hash is None:
        return "todo" if old_hash is not None else "impossible"
    return "done" if old_hash in (None, new_hash) or new_hash in _planned(intent) else (
        "impossible")


def _planned(intent: MoveIntent) -> frozenset[str]:
    """The hashes the moved note has at `new` as the move leaves it (before and after its own
    relative links are rewritten)."""
    return frozenset({intent.moved_hash,
                      *(r.new_hash for r in intent.rewrites if r.path == intent.new)})


def apply_move(store: Store, intent: MoveIntent, name: str = "",
               after_rename: Callable[[], None] | None = None,
               since_ns: int | None = None) -> Outcome:
    """Make (or finish) the plan's steps; idempotent. `after_rename` runs once the rename is
    made here (the facade re-indexes the moved note then, so it keeps its id); without it
    (recovery) a rename refused (`path_refused`, `note_exists`) rolls the plan back. With
    `since_ns` (the recovery: the intent file's mtime; the live move: the file system's clock
    before its plan was read), links to the old name written since in notes the plan did not
    list are rewritten too (intent_added.py)."""
    out = Outcome(name, "move", intent.old, intent.new)
    with store.lock.held():
        if intent.aside:  # a run killed with the old name aside: settled before it is read
            store.settle_relocation(intent.old, intent.new, intent.aside)
        state = _rename_state(store, intent)
        if state == "todo":
            try:
                store.move(intent.old, intent.new, aside=intent.aside)
            except (PathRefused, NoteExists):  # recovering a move onto what is now a mount
                # point, a folder or a symlink (no note, so `new` hashed None): no rename ever
                # makes it (the live move raises: nothing changed, journal closed)
                if after_rename is not None:
                    raise
                state = "impossible"
            else:
                if after_rename is not None:
                    after_rename()
        if state == "done":  # the moved note saved under its old name since the rename
            _follow_old(store, intent, out)
            if after_rename is None and not out.replaced:  # folded by a run that died
                out.replaced.extend(folded_before(store, intent.new, _planned(intent)))
        for rw in intent.rewrites:
            _rewrite(store, intent, rw, state == "impossible", out)
        if state != "impossible":  # saved there while the rewrites were made (a live move)
            _follow_old(store, intent, out)
        out.written = list(dict.fromkeys(out.written))  # once each, in first-written order
        if state == "impossible":
            out.state = "rolled back"
        elif since_ns is not None and intent.wiki:
            relink_added(store, intent.old, intent.new, intent.wiki,
                         frozenset(rw.path for rw in intent.rewrites), since_ns, out)
    return out


def _rewrite(store: Store, intent: MoveIntent, rw: Rewrite, undo: bool, out: Outcome) -> None:
    """Make (or, `undo`, take back) one planned rewrite, guarded (module docstring). Left
    because the file changed again while it was made (a save racing the swap), or refused
    while another program held it open for writing ("busy": an appender between its open and
    its write), it is made again, up to `TRIES` times (session 41: an appending editor left
    links; session 42: one that held the file open at the try left it after that one try)."""
    for _ in range(TRIES):
        now = step_hash(store, rw.path)
        done = rewrite_once(store, rw, undo, now, intent.old, intent.new, intent.wiki)
        if done != "busy" and (done != "left" or step_hash(store, rw.path) == now):
            break
    if done == "busy":  # still held open at the last try: left as a refused try is
        done = None if undo else "left"
    if done is not None:
        (out.written if done == "written" else out.left).append(rw.path)


def _follow_old(store: Store, intent: MoveIntent, out: Outcome) -> None:
    """A save of the moved note under its old name, made after the rename, follows the note
    (intent_merge.fold_old), its own relative links then rewritten over that text as the
    plan rewrites them (a three-way merge); the note is reported written."""
    if (kept := fold_old(store, intent.old, intent.new, _planned(intent))) is None:
        return
    if kept:  # what the note held before: reported (doctor; the move's answer)
        out.replaced.append(kept)
    for rw in intent.rewrites:
        if rw.path == intent.new:
            _rewrite(store, intent, rw, False, out)
    out.written.append(intent.new)


class Journal:
    """The intent files of one vault's store (module docstring)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.folder = os.path.join(store.state, INTENTS_NAME)

    def pending(self) -> list[str]:
        """Names of the intent files present now, in order."""
        return _intent_names(_listing(self.folder))

    def record(self, intent: Intent) -> str:
        """Write `intent` durably (fsynced file and folder) and return its name. Call with
        the write lock held, before the operation's first change."""
        if not os.path.isdir(self.folder):
            os.makedirs(self.folder, exist_ok=True)
            fsync_dir(os.path.dirname(self.folder), done=self.store.count_op)
        taken = self.pending()
        name = f"{_number(taken[-1]) + 1 if taken else 1:08d}.json"
        tmp = os.path.join(self.folder, f".{name}.tmp")
        try:
            with create_temp(tmp) as fh:
                fh.write(json.dumps(intent.to_json(), ensure_ascii=False).encode("utf-8"))
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:  # the first file an ingest writes: a full disk names it
            drop_temps(tmp)
            if is_disk_full(exc):
                raise DiskFull(f"{INTENTS_DIR}/{name}") from exc
            raise
        self.store.count_op()
        os.replace(tmp, os.path.join(self.folder, name))
        self.store.count_op()
        fsync_dir(self.folder, done=self.store.count_op)
        return name

    def refuse(self, name: str) -> str:
        """Mark whole writes intent `name` refused (the next open only takes it back) by a
        rename to `NNNNNNNN.refused.json`: no room needed (a copy written again left the plan
        on a full disk, completed by an open once there was room). Returns the new name."""
        refused = f"{name[:-5]}{REFUSED}"
        os.replace(os.path.join(self.folder, name), os.path.join(self.folder, refused))
        self.store.count_op()
        fsync_dir(self.folder, done=self.store.count_op)
        return refused

    def finish(self, name: str) -> None:  # remove a completed intent (the operation's last step)
        os.unlink(os.path.join(self.folder, name))
        self.store.count_op()
        fsync_dir(self.folder, done=self.store.count_op)

    def recorded_ns(self, name: str) -> int:  # when `name` was recorded: its file's mtime
        return os.stat(os.path.join(self.folder, name)).st_mtime_ns

    def load(self, name: str) -> Intent:
        """The intent in file `name` (OSError, ValueError, KeyError, TypeError or
        RecursionError, for JSON nested past the stack, when it is unreadable)."""
        with open_regular(os.path.join(self.folder, name)) as fh:
            intent = load_intent(json.loads(fh.read()))
        if name.endswith(REFUSED):  # `refuse`: only a whole writes intent is ever renamed so
            if not isinstance(intent, WritesIntent) or not intent.whole:
                raise ValueError(f"{name}: refused, but no whole writes intent")
            return replace(intent, refused=True)
        return intent

    def recover(self) -> list[Outcome]:
        """Finish every intent left by a process that died (module docstring); the outcomes,
        in order. An intent file that cannot be read ("unreadable"), or whose steps fail
        ("failed: why"), is kept (pending) and reported; the vault opens all the same."""
        outcomes: list[Outcome] = []
        if not self.store.lock.is_held and not any(  # none left (a whole or half-recorded
                n.endswith((".json", ".json.tmp")) for n in _listing(self.folder)):  # intent):
            return outcomes  # no lock taken, so an open waits for no writer (SBX9)
        with self.store.lock.held():  # one listing: no other process records meanwhile
            listed = _listing(self.folder)  # (at every lock taken from free: finish_left)
            for leftover in listed:  # an intent killed while recorded
                if leftover.startswith(".") and leftover.endswith(".json.tmp"):
                    os.unlink(os.path.join(self.folder, leftover))
            for name in _intent_names(listed):
                try:
                    intent = self.load(name)
                    since = self.recorded_ns(name)
                except (OSError, ValueError, KeyError, TypeError, RecursionError):
                    outcomes.append(Outcome(name, "?", "", "", state="unreadable"))
                    continue
                if isinstance(intent, ForgetIntent | ArchiveWritesIntent):
                    continue  # finished by the facade, which has the index and the ledger
                try:
                    outcome = (apply_writes(self.store, intent, name)
                               if isinstance(intent, WritesIntent)
                               else apply_move(self.store, intent, name, since_ns=since))
                except (VaultError, OSError) as exc:  # the vault still opens; doctor shows it
                    op = "writes" if isinstance(intent, WritesIntent) else "move"
                    outcomes.append(Outcome(name, op, "", "", state=f"failed: {exc}"))
                    continue
                outcomes.append(outcome)
                if outcome.left or outcome.replaced:  # kept before the intent goes: a kill
                    # between lost the report (FIX37)
                    keep_left(self.store, self.folder, [outcome.to_json()])
                self.finish(name)
        return outcomes

    def report(self) -> dict[str, list[Any]]:
        """Doctor's `intents`: the intent files pending, and the intents recovered, by this
        process's open (`store.recovered`) and, where they left files, by earlier commands
        since the last report (intent_left.py, emptied here: each shown once)."""
        if self.store.read_only:
            return {"pending": self.pending(), "recovered": list(self.store.recovered)}
        with self.store.lock.held():
            earlier = [o for o in read_left(self.store) if o not in self.store.recovered]
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(self.store.state, LEFT_NAME))
            return {"pending": self.pending(), "recovered": [*earlier, *self.store.recovered]}


def _listing(folder: str) -> list[str]:
    try:
        return os.listdir(folder)
    except FileNotFoundError:
        return []


def _intent_names(names: Iterable[str]) -> list[str]:
    """The intent files among a listing of the intents folder (`NNNNNNNN.json`, and
    `NNNNNNNN.refused.json`: `Journal.refuse`), in order."""
    return sorted((n for n in names if (stem := n.split(".")[0]).isascii() and stem.isdigit()
                   and n[len(stem):] in (".json", REFUSED)), key=_number)


def _number(name: str) -> int:
    return int(name.split(".")[0])


def finish_left(store: Store) -> None:
    """Finish the intents a dead process left, from a live one (the write lock's `on_acquire`,
    set by Vault.open): an intent found when the lock is taken from free has no live holder,
    since every journalled operation holds the lock throughout. Without this a process that
    opened the vault before the kill wrote over the half-made move, and its change made the
    recovery leave that referrer's link dangling. Outcomes join `store.recovered` once."""
    for outcome in Journal(store).recover():
        if (entry := outcome.to_json()) not in store.recovered:
            store.recovered.append(entry)
