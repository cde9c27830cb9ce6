"""The index kept in step with the folder, and the snapshot of its current generation.

Contract: with `auto_sync`, `fresh()` (called by the facade before every read, search and
write) reconciles the index with the folder — through the watcher's changed paths when one
runs and the last sync had no errors, else by a full scan — so an edit made in Obsidian is
seen by the next call. `snapshot()` changes only when the index generation changes: when every
change since the last snapshot came through this object's syncs, it is advanced from the last
one (storage/increment.py: the cost of the changed and removed notes, with `corpus.delta` set;
a rename is an update at the new path, a removal passes the removed ids); after another
process's write, or past `in_place` changed notes, it is rebuilt (from the saved base and the
catch-up record when they lead here, else from every row; `delta` None). Inside
`batch()` nothing is re-synced and the snapshot taken when the batch began is kept (ingest of
many notes pays for one sync and one snapshot). Every note id a sync finds removed is passed
to `on_removed` (learning forgets it), inside a batch too.
"""

from __future__ import annotations

import logging
import os
import stat as st
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from ..errors import (
    DiskFull,
    NoteNotFound,
    NoteSkipped,
    PathRefused,
    PermissionDenied,
    VaultError,
)
from ..full_disk import is_disk_full
from ..notes.rows import LinkRow
from . import catch_up
from .anchored import open_dir
from .corpus import BaseRef
from .folders import wrap64
from .increment import advance
from .index import Index
from .paths import printable
from .snapshot import Snapshot, build_snapshot
from .store import Store
from .sync import SyncReport, sync
from .watch import Watcher

log = logging.getLogger("rmh.vault")


def in_place(notes: int) -> int:
    """Notes changed or removed since the last snapshot that the next one is still advanced
    over, with `notes` in the last one: max(1000, n / 4) (past it a rebuild costs less)."""
    return max(1000, notes // 4)


class LiveIndex:
    """One folder's index, its watcher and its current snapshot (module docstring)."""

    def __init__(
        self,
        store: Store,
        index: Index,
        watcher: Watcher | None,
        on_removed: Callable[[int], None],
        auto_sync: bool = True,
    ) -> None:
        self.store = store
        self.index = index
        self.watcher = watcher
        self.auto_sync = auto_sync
        self._on_removed = on_removed
        self._batch = 0
        self._rescan = False
        self._warned = False  # a postponed sync's warning logged (once, until one succeeds)
        # Leftover temporaries of interrupted writes are removed once per open vault, by its
        # first full sync: its scan reads every folder anyway and names them (SyncReport.
        # temps); a vault closed before any full sync walks its folders for them at close.
        self._unswept = not store.read_only
        self._snap: Snapshot | None = None
        # Paths added or updated since `_snap`, valid while every generation since was ours
        # (`_seen` is the last one accounted for); None: rebuild from every row. `_gone`:
        # the ids of the notes removed since `_snap`.
        self._pending: list[str] | None = []
        self._gone: list[int] = []
        self._seen: int | None = None
        # Called before a snapshot is built from every row, so its owner can let go of what it
        # derived from the last one first (the facade: its corpus and the engine's structures).
        self.on_rebuild: Callable[[], None] | None = None
        # Called before every call reads the index or the snapshot (`check`): raises when the
        # vault may not be served now (the facade: an erasure pending, vault/erasure.py).
        self.guard: Callable[[], None] | None = None
        # How the index stands to the last saved state (catch_up.py); looked up before this
        # process's first sync changes anything, then kept by every sync.
        self._chain: catch_up.Chain | None = None
        self._started = self._unrecorded = False

    @property
    def in_batch(self) -> bool:
        return self._batch > 0

    def sync(self) -> SyncReport:
        """Reconcile the whole index with the folder now (the first: and sweep, above)."""
        self._start()
        report = sync(self.store, self.index)
        if self._unswept:
            self._unswept = False
            self.store.clean_stale_temps(report.temps)
        self._after(report)
        self._rescan = bool(report.errors)
        return report

    def sync_paths(self, paths: Iterable[str]) -> None:
        """Re-index just these vault-relative paths (after a write, move or delete here)."""
        self._start()
        self._after(sync(self.store, self.index, only=list(paths)))

    def check(self) -> None:
        """The `guard`'s verdict (an exception it raises passes through), once the vault's
        path still names its folder (Store.check_root)."""
        self.store.check_root()
        if self.guard is not None:
            self.guard()

    def fresh(self) -> None:
        """Bring the index up to date before a call (no-op inside a batch or without auto_sync),
        once the `guard` let it through (`check`, also without auto_sync).

        On a full disk (the index cannot take the changes) the call goes on with the index as
        it is, with a warning, and the next call scans again: a read or a search needs no
        space."""
        self.check()
        try:
            self._fresh()
        except Exception as exc:
            self._postpone(exc)

    def opening_sync(self) -> SyncReport:
        """A full sync postponed on a full disk as `fresh` is (the open's, doctor's): a note
        edited elsewhere or an index owing a re-parse (reparse.py) is written at the first
        call that finds room; meanwhile the index is read as it is, and the report says so
        (its `errors`)."""
        try:
            return self.sync()
        except Exception as exc:
            return SyncReport(generation=self.index.generation(), errors=[self._postpone(exc)])

    def _postpone(self, exc: Exception) -> str:
        """On a full disk (`exc`), warn, scan again at the next call and return the warning;
        any other error is raised again. Warned once until a sync goes through (a command's
        every call said the same line: three times for one `rmh fact supersede`)."""
        if not is_disk_full(exc):
            raise exc
        self._rescan = True
        warning = f"index not brought up to date: {DiskFull('index.sqlite')}"
        if not self._warned:
            log.warning("%s", warning)
        self._warned = True
        return warning

    def _fresh(self) -> None:
        if not self.auto_sync or self._batch:
            return
        changed = self.watcher.drain() if self.watcher is not None else None
        if changed is None or self._rescan:
            self.sync()
        elif changed:
            self._start()
            try:
                report = sync(self.store, self.index, only=self._with_links(changed))
            except VaultError:  # a name the store refuses: let the full scan report it
                self.sync()
                return
            self._after(report)
            self._rescan = bool(report.errors)  # a failed read is retried by a full scan

    def _with_links(self, changed: Iterable[str]) -> list[str]:
        """`changed` and the other indexed names of those files that have several (hard
        links): a write through one name changes them all, and inotify names only the one
        written, so the others would keep their old text in the index until a full scan."""
        paths = set(changed)
        inodes = set()
        for path in paths:
            try:  # a hint only (the sync reads through the store): which rows to look at
                info = os.stat(self.store.root / path, follow_symlinks=False)
            except (OSError, ValueError):
                continue
            if info.st_nlink > 1 and st.S_ISREG(info.st_mode):
                inodes.add(wrap64(info.st_ino))
        if inodes:
            paths.update(p for p, row in self.index.stats().items() if row.inode in inodes)
        return sorted(paths)

    @contextmanager
    def batch(self) -> Iterator[None]:
        """One sync at the start, then the snapshot of that moment until the batch ends."""
        self.fresh()
        self.snapshot()
        self._batch += 1
        try:
            yield
        finally:
            self._batch -= 1  # the next snapshot() advances over the batch's writes
            if (not self._batch and self._unrecorded and self._chain is not None
                    and not self.store.read_only):
                self._unrecorded = False  # one catch-up record for the batch's syncs
                catch_up.save(self._chain, self.index, self.store.state,
                              self.store.count_op)

    def snapshot(self) -> Snapshot:
        """The current snapshot (inside a batch: the one taken when the batch began), once
        the `guard` let it through."""
        self.check()
        if self._snap is not None and (self._batch or self._snap.corpus.generation
                                       == self.index.generation()):
            return self._snap
        snap = None
        gen = self.index.generation()
        prev, pending = self._snap, self._pending
        if prev is not None and pending is not None and gen == self._seen \
                and len(set(pending)) + len(self._gone) <= in_place(len(prev.corpus)):
            snap = advance(prev, self.index, pending, self._gone)
            if snap is not None and snap.corpus.generation != gen:  # a write slipped in
                snap = None
        if snap is None:
            self._snap = prev = None  # the old snapshot is not held while the new is built
            if self.on_rebuild is not None:
                self.on_rebuild()
            snap = self._rebuilt()
        self._snap = snap
        self._pending, self._gone, self._seen = [], [], self._snap.corpus.generation
        return self._snap

    def _rebuilt(self) -> Snapshot:
        """The snapshot of the index now from the saved base and the catch-up record when
        they lead here, else from every row (saved: the new base)."""
        folder = self.store.state
        got = catch_up.snapshot(self.index, folder, self._chain, self.store.count_op)
        if got is not None:
            snap, self._chain = got
            return snap
        snap = build_snapshot(self.index, folder)  # note_store.py
        c = snap.corpus
        self._chain = None if c.stamp is None else catch_up.Chain(
            BaseRef(c.stamp, c.generation, len(c)), frozenset(), c.generation, c.stamp)
        return snap

    def _start(self) -> None:
        self.store.check_root()  # a vault moved away is not synced as every note deleted
        if not self._started:
            self._started = True
            self._chain = catch_up.start(self.index, self.store.state)

    def resolve(self, note: str, as_link: bool = True) -> int:
        """A vault path (`.md` optional) or a title/alias -> note id (NoteNotFound, Ambiguous);
        `as_link`: a title several notes share as `[[note]]` resolves (`Resolver.by_title`)."""
        if not isinstance(note, str) or not note.strip():
            raise NoteNotFound(str(note))
        res = self.snapshot().resolver
        found = res.by_path(note)
        if found is None and self._batch:  # written earlier in this batch: its exact path
            try:
                found = self.index.note_id(self.store.check(note.strip()))
                found = found or self.index.note_id(self.store.check(note.strip() + ".md"))
            except VaultError:
                found = None
        found = found if found is not None else res.by_title(note, as_link)
        if found is None:
            raise self.not_found(note)
        return found

    def not_found(self, note: str) -> NoteNotFound | PermissionDenied | PathRefused:
        """Why `note` (`.md` optional), which names no note by path, title or alias, cannot be
        read: NoteSkipped with the index's reason when it is a file of the vault the scan
        skipped (a name no path may be: still the file's answer); PathRefused when the store
        refuses it as a path (traversal, absolute, a backslash, NUL, ...: `Store.check`) or a
        symlink on the way leaves the vault (a skipped link, or a linked folder: one answer
        whatever lies outside, so nothing tells what exists there) or is a folder linked
        inside it ("symlink inside the vault", as a listing of that folder and a write through
        it say: the scan follows no link, so no note has that path); PermissionDenied when it
        is a file this process may not read (a sync could not index it); else NoteNotFound."""
        raw = note.strip()
        for path in (printable(raw), printable(raw + ".md")):  # as the scan stored them
            reason = self.index.skipped_reason(path)
            if reason == "symlink outside vault":
                return PathRefused(note, "symlink leaves the vault")
            if reason is not None:  # a file of the vault the scan skipped (its name: any)
                return NoteSkipped(note, path, reason)
        try:
            self.store.check(raw)
        except PathRefused as exc:
            return PathRefused(note, exc.reason)
        for path in (raw, raw + ".md"):
            try:
                if self.store.stat(path) is not None:
                    self.store.read_bytes(path)
            except (PermissionDenied, PathRefused) as exc:
                return exc if isinstance(exc, PermissionDenied) else PathRefused(note, exc.reason)
            except VaultError:
                continue
        parts = [p for p in raw.split("/")[:-1] if p not in ("", ".")]
        try:  # a folder on the way that is a symlink: what a listing of it says
            os.close(open_dir(str(self.store.root), parts, note))
        except PathRefused as exc:
            return PathRefused(note, exc.reason)
        except OSError:
            pass
        moved = [str(o["new"]) for o in self.store.recovered  # this open finished a killed move
                 if o.get("op") == "move" and o.get("state") == "rolled forward"
                 and o.get("old") in (raw, raw + ".md")]
        return NoteNotFound(note, moved[-1] if moved else None)

    def links_of(self, note_id: int) -> list[tuple[LinkRow, int | None]]:
        """A note's links in text order, each with the id it resolves to (None: dangling).

        Inside a batch a note written since the snapshot is read from the index and resolved
        against the batch's snapshot."""
        snap = self.snapshot()
        if not self._batch:
            return snap.links.get(note_id, [])
        row = self.index.note(note_id)
        if row is None:
            return []
        return [(ln, snap.resolver.resolve(ln, row.path)) for ln in self.index.links_of(note_id)]

    def _after(self, report: SyncReport) -> None:
        self._warned = False  # a sync went through: a later full disk is warned of again
        for note_id in report.removed_ids:
            self._on_removed(note_id)
        if not report.changed:  # a touch may have changed the stamp: the record follows it
            self._chain = catch_up.restamp(self._chain, self.index, self.store.state,
                                           self.store.count_op, write=not self.store.read_only)
            return
        self._chain = catch_up.extend(self._chain, report, self.index,
                                      self.store.state, self.store.count_op,
                                      write=not self.store.read_only and not self._batch)
        self._unrecorded = self._batch > 0 and self._chain is not None
        if (self._pending is None or self._seen is None
                or report.generation != self._seen + 1):  # not only ours: rebuild
            self._pending = None
        else:  # a renamed note is an update at its new path (storage/increment.py)
            self._pending.extend(report.added + report.updated + [n for _, n in report.renamed])
            self._gone.extend(report.removed_ids)
        self._seen = report.generation

    def close(self) -> None:
        try:
            if self._unswept:
                self._unswept = False
                self.store.clean_stale_temps()
            if not self.store.read_only:  # this process's own writes patched the stat rows:
                # saved (when provably the rows, index.py) so the next process does not read
                # every row (5 s at 10^6 notes after one `Vault.write`; BENCHMARKS.md)
                self.index.persist_stats(self.store.count_op)
        finally:
            if self.watcher is not None:
                self.watcher.close()
            try:
                self.index.close()
            finally:
                self.store.anchor.close()
