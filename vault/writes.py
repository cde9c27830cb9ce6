"""The write operations of the Vault facade: write, edit, delete, move, and the batches and
journals that group writes (vault/core.py's `Vault` inherits them).

Every write goes through the store's atomic write under the vault's write lock, is indexed
before the call returns, and is logged to the usage recorder; a multi-file operation is
written to the intent journal first (storage/intents.py)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import replace
from functools import partial

from .archive_writes import archive_and_write
from .errors import (
    EditConflict,
    NoteExists,
    NoteNotFound,
    NotText,
    PathRefused,
    QuotaExceeded,
    VaultError,
)
from .full_disk import is_disk_full
from .landing import landed, tolerate_full
from .learning.ledger import Ledger
from .notes import edits
from .notes.canvas_cards import is_canvas, moved_cards
from .notes.hashing import content_hash
from .notes.links import Resolver
from .notes.note import Link, rewrite_links
from .notes.records import CHANGED_MEANWHILE, GONE_MEANWHILE, MoveResult, NoteRecord
from .notes.relinks import moved, names_meaning, relink_plan, retarget, unread
from .parts import VaultParts
from .storage.attachments import attachment_path, is_attachment
from .storage.future import file_system_now
from .storage.generated_record import Entry
from .storage.guard import check_read, check_write
from .storage.intent_writes import WritesIntent, apply_writes, file_hash, set_record
from .storage.intents import Journal, MoveIntent, Rewrite, apply_move
from .storage.removal import temp_name
from .storage.store import BINARY_PROBE_BYTES, MAX_NOTE_BYTES, TRASH_DIR

EDIT_TRIES = 3  # an unguarded edit recomputed on bytes another writer changed meanwhile


class VaultWrites(VaultParts):
    """Writes of one open vault (see the module docstring)."""

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Many writes at once (ingest): one folder sync at the start, no snapshot rebuild
        per write. Inside, names resolve against the snapshot taken when the batch began
        (plus exact paths), and each write's links resolve against it too."""
        with self.live.batch():
            self.corpus()
            yield

    @contextmanager
    def journalled(self, notes: Sequence[tuple[str, str]],
                   trash: Collection[str] = (), whole: bool = False,
                   record: Mapping[str, Entry] | None = None) -> Iterator[None]:
        """Writes of several notes ((vault path ending in .md, text)), made by the block with
        `write`, as one operation: journalled first, so a kill inside leaves the rest to the
        next open (storage/intents.py). Holds the write lock throughout. The notes at paths
        `trash` are put in the trash by the block first (`trash_copy`); the next open makes
        the copies the block did not (a note's copy and its write: both or neither).
        `record`: each path's line of ingest's record (`Write.record`): journalled even for
        one note, the lines set as the writes end, by the next open too (an ingest's).

        `whole`: all or none. A refusal inside the block (any VaultError, a full disk too; an
        interrupt, KeyboardInterrupt or SystemExit, too) marks the intent refused, then takes
        back every note the block wrote (only its own bytes) and raises it: a kill from the
        mark on leaves the take-back to the next open, which never completes the change its
        caller was told was refused; one before the mark is finished by the next open, or
        taken back where a note cannot be written (or has no room)."""
        if not notes or (len(notes) < 2 and not trash and record is None):
            yield
            return
        for path, text in notes:  # refused before any write: the store would refuse it midway,
            _fits(path, text)  # after the notes before it (half a conversation)
        with self.store.lock.held():
            journal = Journal(self.store)
            planned = [(self._new_path(p), text) for p, text in notes]
            lines = None if record is None else {self._new_path(p): e for p, e in record.items()}
            intent = WritesIntent.plan(self.store, planned, {
                self._new_path(p) for p, _ in notes if p in trash}, whole, lines)
            name = journal.record(intent)
            try:
                yield
            except BaseException as exc:
                io_error = is_disk_full(exc) or isinstance(exc, OSError)
                # whole: refused, interrupted (Ctrl-C, SystemExit: not a kill) or out of room
                # -> taken back now (a full disk left it to the next open: half a conversation
                # shown meanwhile, then completed after the caller was told it failed, STORE17)
                if whole:
                    with suppress(VaultError, OSError):  # (no room to write an old text back:
                        self._refused(journal, name, replace(intent, refused=True))  # the
                    # next open takes the rest back: the intent is marked refused)
                # a full disk (an I/O error) after some of the notes landed: the intent stays,
                # so the next open finishes them once there is room (storage/intents.py)
                elif not (io_error and any(file_hash(self.store, w.path) != w.old_hash
                                           for w in intent.writes)):
                    with suppress(VaultError, OSError):  # none landed: the record as before
                        set_record(self.store, intent)
                        journal.finish(name)
                raise
            journal.finish(name)  # reached unless killed: this process knows what it wrote

    def _refused(self, journal: Journal, name: str, intent: WritesIntent) -> None:
        """Take back a refused whole intent (`journalled`): marked first (`Journal.refuse`,
        a rename: where even that fails, the intent as planned, whose replay takes back what
        it cannot write), then undone and indexed, its record lines put back, then finished."""
        with suppress(OSError):
            name = journal.refuse(name)
        back = apply_writes(self.store, intent, name).written
        if back:
            tolerate_full(lambda: self.live.sync_paths(back), "taken back, not yet indexed",
                          "index.sqlite")
        journal.finish(name)

    @contextmanager
    def locked(self) -> Iterator[None]:
        """The vault's write lock, held across several calls: a decision read from the vault
        (and rmh's own state) and the writes it makes, with no other rmh writer between."""
        with self.store.lock.held():
            yield

    def trash_copy(self, path: str) -> str:
        """Put the bytes of the note at vault path `path` in `.rmh/trash/` as `delete` would,
        leaving the note where it is; returns the trash path (`.rmh/trash/...`). The copy is a
        hard link (the next write replaces the note by rename, so the link keeps these bytes);
        where the file system has no hard links the note is moved there instead, and a guarded
        write of it then fails (EditConflict) rather than lose them."""
        self.live.fresh()
        return f"{TRASH_DIR}/{self.store.trash(path, keep=True)}"

    def write(self, note: str, content: str, *, session: str | None = None,
              overwrite: bool = True, expected_hash: str | None = None) -> NoteRecord:
        """Create or replace a note atomically; it is indexed before this returns. Without
        `overwrite` an existing note is refused (NoteExists); with `expected_hash` a file
        whose bytes changed since that read is refused (EditConflict; storage.guard)."""
        self.live.fresh()
        note_id = self._write_target(note)
        path = self.path_of(note_id) if note_id is not None else self._new_path(note, create=True)
        check_write(self.store, path, exists=note_id is not None, overwrite=overwrite,
                    expected_hash=expected_hash)
        stat = self.store.write_text(path, content, create_only=note_id is None and not overwrite,
                                     expected_hash=expected_hash)  # checked again under the lock
        unindexed = tolerate_full(lambda: self.live.sync_paths([path]),  # landing.py
                                  "written, not yet indexed", "index.sqlite")
        if unindexed:
            return landed(self.resolver(), stat, content, note_id, unindexed)
        new_id = self.index.note_id(path)
        if new_id is None:  # written but not indexable (e.g. the store refused it as text)
            raise self.live.not_found(path)
        record = self._record(new_id)
        linked = sorted({dst for _, dst in self.live.links_of(new_id) if dst is not None})
        graph = self._snapshot().corpus.graph
        warning = self._learn(lambda: self.usage.on_write(session, new_id, note_id is None,
                                                          linked, graph))
        return replace(record, warning=warning) if warning else record

    @contextmanager
    def indexed_together(self) -> Iterator[Callable[[str, str, str | None, bool], None]]:
        """A writer of many notes (an ingest's): each call (`note`, `content`, `expected_hash`,
        `overwrite`) writes one as `write` does, refused alike, but the notes are indexed and
        their learning events recorded when the block ends, in one sync (one transaction, each
        folder's digest once), not one per note. Whatever the block raises, the notes written
        are indexed before it propagates; a kill midway leaves them to the next sync (their
        stat differs from the index's), as a full disk does (landing.py)."""
        written: list[tuple[str, bool]] = []

        def put(note: str, content: str, expected_hash: str | None, overwrite: bool) -> None:
            self.live.fresh()
            note_id = self._write_target(note)
            path = (self.path_of(note_id) if note_id is not None
                    else self._new_path(note, create=True))
            check_write(self.store, path, exists=note_id is not None, overwrite=overwrite,
                        expected_hash=expected_hash)
            self.store.write_text(path, content, create_only=note_id is None and not overwrite,
                                  expected_hash=expected_hash)
            written.append((path, note_id is None))

        try:
            yield put
        finally:
            if written:
                self._indexed([p for p, _ in written], [c for _, c in written])

    def _indexed(self, paths: Sequence[str], created: Sequence[bool]) -> None:
        """Index the notes just written at `paths` and record their learning events."""
        if tolerate_full(lambda: self.live.sync_paths(paths), "written, not yet indexed",
                         "index.sqlite"):
            return
        graph = self._snapshot().corpus.graph
        for path, new in zip(paths, created, strict=True):
            new_id = self.index.note_id(path)
            if new_id is None:  # written but not indexable
                continue
            linked = sorted({dst for _, dst in self.live.links_of(new_id) if dst is not None})
            self._learn(partial(self.usage.on_write, None, new_id, new, linked, graph))

    def _write_target(self, note: str) -> int | None:
        """The note a write replaces: a name ending in `.md` is a file path, that file only
        (writing `Sib.md` must not replace `sub/Sib.md` because its title is Sib); any other
        name resolves as everywhere (path, else title or alias). None: a new note."""
        if not note.strip().lower().endswith(".md"):
            try:
                return self._resolve(note, False)
            except NoteNotFound:
                return None
        return self.index.note_id(self._new_path(note))

    def edit(self, note: str, change: edits.Edit, *, session: str | None = None,
             expected_hash: str | None = None, max_bytes: int | None = None) -> NoteRecord:
        """Apply one edit (notes.edits: every byte outside its span kept), guarded like
        `write`, always against the bytes the edit was computed from. The note's size after
        the edit is computed first (`edits.size_after`, no text built): over MAX_NOTE_BYTES,
        or over `max_bytes` (a caller's write quota), it is QuotaExceeded and nothing is built
        or written. Without `expected_hash` the caller asked for no guard: when the note
        changes between the read and the write (another process's edit), the edit is
        computed again on the new bytes, up to `EDIT_TRIES` times, instead of refusing."""
        self.live.fresh()
        path = self.path_of(self._resolve(note, False))
        for tries_left in range(EDIT_TRIES - 1, -1, -1):
            text = self.store.read_text(path)
            current = check_read(path, text, expected_hash)
            size = edits.size_after(text, change)
            if size > MAX_NOTE_BYTES:
                raise QuotaExceeded(f"note size after the edit ({size} bytes)", MAX_NOTE_BYTES)
            if max_bytes is not None and size > max_bytes:
                raise QuotaExceeded(
                    f"bytes written: the note would be {size} bytes after the edit", max_bytes)
            try:
                return self.write(path, edits.apply(text, change), session=session,
                                  expected_hash=current)
            except EditConflict as exc:
                if expected_hash is not None or not tries_left or exc.current is None:
                    raise
        raise AssertionError("unreachable")  # the last try returns or raises

    def delete(self, note: str) -> str:
        """Move a note to `.rmh/trash/` (never a hard delete); returns its vault-relative trash
        path (`.rmh/trash/...`)."""
        self.live.fresh()
        path = self.path_of(self._resolve(note, False))
        trashed = self.store.trash(path)
        tolerate_full(lambda: self.live.sync_paths([path]),  # reports the removal
                      "deleted, not yet out of the index", "index.sqlite")
        return f"{TRASH_DIR}/{trashed}"

    def archive_and_write(self, ledger: Ledger, writes: Sequence[tuple[str, str]],
                          read: Mapping[str, str | None], archive: Sequence[tuple[int, str]],
                          now: float) -> list[str]:
        """Archive each (note id, reason) in `ledger` at `now` and write each (vault path, text)
        over the bytes whose hash `read` gives, as one operation: a kill anywhere leaves all or
        none once the next process opens the vault (vault/archive_writes.py). EditConflict,
        nothing changed, when a note changed since `read`; the notes written are indexed
        before it returns. Returns the notes an editor changed between the check and their
        write (left as they are; the rest is made)."""
        self.live.fresh()
        for path, text in writes:
            _fits(path, text)
        out = archive_and_write(self.store, ledger, writes, read, archive, now)
        if out.written:
            tolerate_full(lambda: self.live.sync_paths(out.written), "written, not yet indexed",
                          "index.sqlite")
        return out.left

    def move(self, old: str, new: str) -> MoveResult:
        """Rename a note, keeping its id, and rewrite every link to it as Obsidian does.

        The whole plan (the rename, each referrer's text now and after) is written to the
        intent journal before the first change, under the vault's write lock, so a process
        killed midway leaves a move the next open finishes (storage/intents.py). Inside a
        batch the links are rewritten too (resolved against the batch's snapshot)."""
        with self.store.lock.held():  # the referrers are read under the lock: a referrer
            # another process wrote while this one waited is rewritten too; a note an editor
            # (no lock) saves from here on, with a link to the old name, has a ctime at or
            # after `since` and is rewritten before the move ends (storage/intent_added.py)
            since = file_system_now(str(self.store.state))
            self.live.fresh()
            note_id = self._resolve(old, False)
            old_path = self.path_of(note_id)
            new_path = self._new_path(new, create=True)
            if new_path == old_path:
                return MoveResult(new_path, old_path, ())
            if self.store.stat(new_path) is not None:
                raise NoteExists(new_path)
            intent = self._move_intent(note_id, old_path, new_path)
            journal = Journal(self.store)
            name = journal.record(intent)
            try:
                outcome = apply_move(self.store, intent, name, after_rename=lambda: (
                    self.live.sync_paths([old_path, new_path])),
                    since_ns=journal.recorded_ns(name) if since is None else since)
            except VaultError:
                old_now, new_now = self.store.stat(old_path), self.store.stat(new_path)
                if old_now is None or (new_now is not None and new_now.inode == old_now.inode):
                    raise  # something changed (the rename's link made, its unlink refused:
                    # PermissionDenied): the next open finishes or undoes the plan
                journal.finish(name)  # the rename was refused: nothing changed
                raise
            journal.finish(name)
            if outcome.state == "rolled back":  # the note went, or a file took `new`, after
                # the plan was read (another program: no lock): nothing moved, none rewritten
                if self.store.stat(new_path) is not None:
                    raise NoteExists(new_path)
                raise NoteNotFound(old_path)
            left = tuple((p, GONE_MEANWHILE if self.store.stat(p) is None else CHANGED_MEANWHILE)
                         for p in outcome.left)
        # the moved note last, after the notes the unlisted-notes pass wrote (stable sort)
        written = sorted(outcome.written, key=lambda p: p == new_path)
        if notes := [p for p in written if not is_canvas(p)]:
            self.live.sync_paths(notes)
        return MoveResult(new_path, old_path, tuple(written), left, tuple(outcome.replaced))

    def _move_intent(self, note_id: int, old_path: str, new_path: str) -> MoveIntent:
        before = self.resolver()
        after = moved(before, note_id, new_path)
        text = self.store.read_text(old_path)
        plan = relink_plan(lambda p: text if p == new_path else self.store.read_text(p),
                           self._snapshot().referrers(note_id), note_id, before, after,
                           old_path, new_path, self._reach())
        if lost := unread(plan, before, after, note_id, new_path):
            raise PathRefused(new_path, "a link to it would be read as code, math or a "
                              f"comment in {', '.join(lost[:3])}" + (" ..." if lost[3:] else ""))
        for path, _, new_text in plan:  # before any change: the store would refuse such a
            _fits(path, new_text, " after the move rewrites its links")  # rewrite after the
            # rename, which left the move half made
        # each file's names of the note then: a link an editor adds to one before the plan's
        # rewrite is made over their save is rewritten too (storage/intents.py `_merged`)
        return MoveIntent(old_path, new_path, content_hash(text), (*(
            Rewrite(p, now, new_text,
                    names_meaning(before, note_id, old_path if p == new_path else p))
            for p, now, new_text in plan), *self._canvas_rewrites(
                note_id, before, after, old_path, new_path)),
            after.link_text(note_id), temp_name(old_path.rpartition("/")[2], "tmp-aside"))

    def _canvas_rewrites(self, note_id: int, before: Resolver, after: Resolver, old_path: str,
                         new_path: str) -> Iterator[Rewrite]:
        """The vault's canvases whose file cards show the note moving from `old_path`, each
        rewritten to show `new_path` (notes/canvas_cards.py), as Obsidian does, and whose text
        cards link to it, those links rewritten as a referrer's are (resolved from the
        canvas's path); a canvas that cannot be read (no text, too large, refused) is left as
        it is. Each carries the names that meant the note from there (a recovery's relink)."""
        wiki = after.link_text(note_id)
        for path in self.store.attachments():
            if not is_canvas(path):
                continue
            try:
                text = self.store.read_text(path)
            except (VaultError, OSError):
                continue
            relink = partial(_relinked, retarget(before, after, path, note_id, wiki))
            if (new_text := moved_cards(text, old_path, new_path, relink)) is not None:
                _fits(path, new_text, " after the move rewrites its cards")
                yield Rewrite(path, text, new_text, names_meaning(before, note_id, path))


    def _reach(self) -> Callable[[str, str], str | None]:
        """The file an attachment link reaches from a note (storage/attachments.py), the
        vault's files listed once, at the first attachment link asked about."""
        files: list[str] | None = None

        def reach(target: str, source: str) -> str | None:
            nonlocal files
            if not is_attachment(target):
                return None
            if files is None:
                files = self.store.attachments()
            return attachment_path(target, source, files)

        return reach


def _relinked(rewrite: Callable[[Link], str | None], text: str) -> str:
    return rewrite_links(text, rewrite)


def _fits(path: str, text: str, when: str = "") -> None:
    """QuotaExceeded when `text` is over MAX_NOTE_BYTES, NotText when it cannot be UTF-8
    (a lone surrogate) or would be binary (a NUL in its first 8 KiB), as the store's write
    would refuse it, checked before a change of several files begins."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise NotText(path, "not utf-8 encodable") from exc
    size = len(data)
    if b"\x00" in data[:BINARY_PROBE_BYTES]:
        raise NotText(path, "a NUL byte in the first 8 KiB: binary")
    if size > MAX_NOTE_BYTES:
        raise QuotaExceeded(f"note size of {path}{when} ({size} bytes)", MAX_NOTE_BYTES)
