"""Folder -> index reconciliation.

Incremental: a file whose (size, mtime_ns, inode, ctime_ns) match the index is not read at
all (in a folder whose listing changed, those files are found by one comparison of arrays
per folder, stat_cache.py `same_stats`, not a row built per note: after 50 notes added to 50
folders of ~1,000, the sync's CPU 0.53 -> 0.32 s, session41/NOTES-PERF43.md); a file whose
stat changed is read and hashed, and re-parsed only when its content hash changed. A file
whose ctime was recent when the sync began is indexed with folders.RACY for its ctime
(`folders.stored_ctime`: git's racily clean rule), so the next sync reads it again. A file
whose ctime is ahead of the file system's clock is read once, then trusted until that clock
comes near it (storage/future.py). A row indexed before ctimes were kept (folders.LEGACY)
whose other stats match is trusted as it was then, and its ctime stored without a read.
A new
file whose hash equals that of a note that disappeared in the same pass is the same note,
renamed outside rmh: it keeps its stable id. A file that cannot be read for a transient reason
(an I/O error, a permission change) keeps its row: only a file that is really gone is removed.
A full sync of an index parsed by another parser version reads and re-parses every note
(storage/reparse.py), writing the rows of those it now parses differently.
"""

from __future__ import annotations

import os
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass, field

from ..errors import NoteNotFound, NotText, PathRefused, PermissionDenied, QuotaExceeded
from ..notes.hashing import content_hash
from ..notes.link_keys import title_of
from ..notes.note import parse
from ..notes.rows import LinkRow, NoteRow
from . import reparse
from .folders import LEGACY, now
from .future import FileSystemClock, stored, unchanged
from .index import Index, StatRow
from .stat_cache import same_stats
from .store import FileStat, Store


@dataclass
class SyncReport:
    """What one sync changed. Lists are sorted by path."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    removed_ids: list[int] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    generation: int = 0
    reparsed: int = 0  # notes read again for a parser change (reparse.py); not in to_json
    # a full sync: the vault paths of hidden entries its scan saw named like the temporary
    # of an interrupted write (folders.TEMP_MARK), for Store.clean_stale_temps; not reported
    temps: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed or self.renamed)

    def to_json(self) -> dict[str, object]:
        return {
            "added": self.added,
            "updated": self.updated,
            "removed": self.removed,
            "renamed": [list(p) for p in self.renamed],
            "skipped": self.skipped,
            "errors": self.errors,
            "generation": self.generation,
        }


def note_row(
    note_id: int, st: FileStat, text: str, digest: str
) -> tuple[NoteRow, list[LinkRow]]:
    """Parse one note's text (whose `content_hash` is `digest`) into its row and raw links."""
    parsed = parse(text)
    row = NoteRow(
        id=note_id,
        path=st.path,
        title=title_of(st.path),
        size=st.size,
        mtime_ns=st.mtime_ns,
        inode=st.inode,
        ctime_ns=st.ctime_ns,
        content_hash=digest,
        frontmatter=dict(parsed.frontmatter),
        frontmatter_error=parsed.frontmatter_error,
        aliases=tuple(parsed.aliases),
        tags=tuple(parsed.tags),
        body=parsed.body,
    )
    links = [
        LinkRow(ln.target, ln.heading, ln.block, ln.alias, ln.embed, ln.kind) for ln in parsed.links
    ]
    return row, links


def _read(store: Store, st: FileStat, report: SyncReport) -> str | None:
    """Read a note's text; None (with the reason recorded) when it is not a readable note."""
    try:
        return store.read_text(st.path)
    except (NotText, QuotaExceeded) as exc:
        report.skipped[st.path] = str(exc)
    except NoteNotFound:
        report.errors.append(f"{st.path}: vanished during sync")
    except PathRefused as exc:  # a link swapped in since the scan: read again next sync
        report.errors.append(f"{st.path}: {exc.reason} during sync")
    except PermissionDenied:  # kept (a mode can change back); reading it says why
        report.errors.append(f"{st.path}: permission denied")
    except OSError as exc:
        report.errors.append(f"{st.path}: {exc.strerror or exc}")
    return None


class _Either(Container[str]):
    """A path in either of two containers (the listed notes found unchanged, the index)."""

    __slots__ = ("_a", "_b")

    def __init__(self, a: Container[str], b: Container[str]) -> None:
        self._a, self._b = a, b

    def __contains__(self, path: object) -> bool:
        return path in self._a or path in self._b


def _same_stat(a: StatRow, b: FileStat) -> bool:
    return (a.size == b.size and a.mtime_ns == b.mtime_ns and a.inode == b.inode
            and a.ctime_ns == b.ctime_ns)


def _still_ahead(old: StatRow, st: FileStat, fs_clock: FileSystemClock) -> bool:
    """A row storing FUTURE (storage/future.py) whose file is listed with that ctime and the
    same other stats, while the file system's clock is still well before it: unchanged."""
    return (old.ctime_ns < LEGACY and _same_stat(old, st._replace(ctime_ns=-st.ctime_ns))
            and unchanged(old.ctime_ns, st.ctime_ns, fs_clock))


def _stored(st: FileStat, clock: int, fs_clock: FileSystemClock) -> FileStat:
    """`st` as the index stores it when its file was read after the clock said `clock`."""
    ctime = stored(st.ctime_ns, clock, fs_clock)
    return st if ctime == st.ctime_ns else st._replace(ctime_ns=ctime)


PARALLEL_SCAN_ABOVE = 50_000  # indexed notes from which the scan is split over processes
MAX_SCAN_WORKERS = 4


def scan_workers(notes: int) -> int:
    """Processes a full scan uses for an index of `notes` notes (1: this one only)."""
    if notes < PARALLEL_SCAN_ABOVE:
        return 1
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(MAX_SCAN_WORKERS, cpus or 1))


class Vanished:
    """The notes gone from their paths, by content hash: a new file with a gone note's content
    is that note renamed, paired with the first gone path of that content (path order). Each
    take is O(1): with list.pop(0) a folder of 4*10^5 alike notes (empty ones, say) renamed on
    disk paired in 22 s of CPU, quadratic (docs/measurements/session27/NOTES-SHAPES.md)."""

    def __init__(self, rows: Iterable[StatRow]) -> None:
        self._by_hash: dict[str, list[StatRow]] = {}
        for row in sorted(rows, key=lambda r: r.path, reverse=True):  # the first path last
            self._by_hash.setdefault(row.content_hash, []).append(row)

    def take(self, digest: str) -> StatRow | None:
        """The gone note with content `digest` and the first path, taken; None when none."""
        pool = self._by_hash.get(digest)
        return pool.pop() if pool else None


class _Stale(Exception):
    """Another process changed the index between this sync's reading and its writing."""


SYNC_ATTEMPTS = 8


def sync(store: Store, index: Index, only: Iterable[str] | None = None,
         workers: int | None = None) -> SyncReport:
    """Reconcile the index with the folder; with `only`, just those paths (after a write, or
    reported by the watcher): PathRefused when one of those is a name `Store.check` refuses
    (the caller then syncs in full, which reports it as skipped).

    A full sync compares each folder's listing with the digest of the index's rows there
    (storage/folders.py): the files of a folder whose digest matches are not looked at one by
    one. `workers` (default `scan_workers`) splits the scan over processes; the report is the
    same whatever the split. The changes are written in one transaction, and only when the
    index generation is still the one the sync started from: when another process synced in
    between (two servers opening a fresh vault at once), the sync starts again from its rows."""
    for _ in range(SYNC_ATTEMPTS - 1):
        try:
            return _sync(store, index, only, workers)
        except _Stale:
            continue
    return _sync(store, index, only, workers, check=False)


def _sync(store: Store, index: Index, only: Iterable[str] | None, workers: int | None,
          check: bool = True) -> SyncReport:
    report = SyncReport()
    clock = now()  # before any file is stat'ed or read (folders.stored_ctime)
    fs_clock = FileSystemClock(None if store.read_only else str(store.state))
    start = index.generation()
    again = only is None and reparse.stale(index)  # every note is read and parsed again
    owed = reparse.owed(index) if only is None else frozenset()  # unread at a re-parse
    unread: set[int] = set()  # notes this re-parse could not read: owed to the next
    only = None if only is None else sorted(set(only))
    known: Mapping[str, StatRow]
    files: dict[str, FileStat]
    same: set[str] = set()  # listed notes whose stats equal their rows: unchanged (below)
    if only is None:
        known, folders = index.stat_folders()
        listings = store.listings(folders, scan_workers(len(known)) if workers is None
                                  else workers)
        files, skipped, looked = {}, [], []
        for listing in listings:
            report.temps.extend(f"{listing.folder}/{t}" if listing.folder else t
                                for t in listing.temps)
            if not (again or owed) and listing.names:  # the unchanged notes at once
                same |= same_stats(known, listing.folder, listing.names, (
                    listing.sizes, listing.mtimes, listing.inodes, listing.ctimes))
            notes, skips = store.notes_in(listing, _Either(same, known))
            files.update((f.path, f) for f in notes)
            skipped.extend(skips)
            if not listing.same:
                looked.append(listing.folder)
        for s in sorted(skipped, key=lambda s: (s.path, s.reason)):
            report.skipped[s.path] = s.reason
        # unreadable folders (or entries): never delete below them, a mode can change back;
        # nor a note over the size cap (kept as it was until it shrinks: test_folders.py). A
        # note now a FIFO or a symlink (its folder a symlink) is no note: gone, as a fresh
        # index leaves it out (it kept its row, and search its old text)
        blocked = [s.path for s in skipped if s.reason.startswith(("unreadable", "larger"))]
        listed = {listing.folder for listing in listings}
        candidates = [p for f in (*looked, *(f for f in folders if f not in listed))
                      if f in folders for p in folders[f][1]]  # a same folder loses none
        gone = {
            p
            for p in candidates
            if p not in files and not any(p == b or p.startswith(b + "/") for b in blocked)
        }
    else:
        rows: dict[str, StatRow] = {}
        known, files, gone = rows, {}, set()
        for path in only:
            st = store.stat(path)  # first: PathRefused for a name the index cannot hold
            stat_row = index.stat_of(path)
            if stat_row is not None:
                rows[path] = stat_row
            if st is not None:
                files[path] = st
            elif stat_row is not None:
                gone.add(path)

    changes: list[tuple[bool, NoteRow, list[LinkRow]]] = []  # (is a new note, row, links)
    restats: list[tuple[int, FileStat]] = []  # touched but unchanged content: no re-parse
    new_texts: dict[str, tuple[FileStat, str]] = {}
    paths = sorted(files.keys() - same) if not (again or owed) else sorted(set(files) | {
        p for p in known if p not in gone and (again or known[p].id in owed)})  # unlisted
    for path in paths:
        old = known.get(path)
        st = files.get(path)
        if st is None:  # a note of a folder whose listing matched its rows (a re-parse)
            kept = known[path]
            st = FileStat(path, kept.size, kept.mtime_ns, kept.inode, kept.ctime_ns)
        redo = old is not None and (again or old.id in owed)
        if redo:
            report.reparsed += 1
        elif old is not None and (_same_stat(old, st) or _still_ahead(old, st, fs_clock)):
            continue
        elif old is not None and old.ctime_ns == LEGACY and _same_stat(old, st._replace(
                ctime_ns=LEGACY)):  # trusted as before ctimes were kept: its ctime adopted
            restats.append((old.id, _stored(st, clock, fs_clock)))
            continue
        text = _read(store, st, report)
        if text is None and redo and path not in report.skipped:
            unread.add(known[path].id)
        if text is None:
            if path in report.skipped and old is not None:
                gone.add(path)  # the note became binary or oversized: it is no longer a note
            continue
        st = _stored(st, clock, fs_clock)
        if old is None:
            new_texts[path] = (st, text)
            continue
        digest = content_hash(text)
        if digest == old.content_hash and not redo:
            if not _same_stat(old, st):  # not when it stays RACY: no write
                restats.append((old.id, st))
            continue
        row, links = note_row(old.id, st, text, digest)
        if digest != old.content_hash or not reparse.same_parse(index, row, links):
            changes.append((False, row, links))
            report.updated.append(path)
        elif not _same_stat(old, st):
            restats.append((old.id, st))

    # Renames outside rmh: a vanished note and a new file with the same content hash.
    vanished = Vanished(known[path] for path in gone)
    for path in sorted(new_texts):
        st, text = new_texts.pop(path)  # parsed rows replace the texts (memory at 10^6 notes)
        digest = content_hash(text)
        old = vanished.take(digest)
        if old is not None:
            gone.discard(old.path)
            changes.append((False, *note_row(old.id, st, text, digest)))
            report.renamed.append((old.path, path))
        else:
            changes.append((True, *note_row(0, st, text, digest)))
            report.added.append(path)
    report.removed = sorted(gone)
    report.removed_ids = [known[p].id for p in report.removed]

    skipped_changed = only is None and report.skipped != index.skipped()
    only_paths = [] if only is None else only
    partial_skips = any(  # a partial sync keeps the skipped rows of its paths current
        index.skipped_reason(p) != report.skipped.get(p) for p in only_paths
    )
    settle = again or unread != owed  # the version, or the notes owed a re-parse, change
    if changes or restats or gone or skipped_changed or partial_skips or settle:
        with index.atomic():
            if check and (index.generation() != start or (again and not reparse.stale(index))
                          or (only is None and reparse.owed(index) != owed)):
                raise _Stale  # another process synced, or re-parsed (reparse.py), meanwhile
            if settle:
                reparse.record(index, unread)
            for path in report.removed:
                index.delete_note(known[path].id)
            for note_id, st in restats:
                index.update_stat(note_id, st.size, st.mtime_ns, st.inode, st.ctime_ns)
            for is_new, row, links in changes:
                if is_new:
                    index.insert_note(row, links)
                else:
                    index.update_note(row, links)
            if skipped_changed:
                index.set_skipped(report.skipped)
            if partial_skips:
                index.set_skipped_paths(only_paths, report.skipped)
            if report.changed:
                index.bump_generation()
    if only is None:  # rows read, or a mapped file and this sync's own commits spliced in,
        index.persist_stats()  # are saved for the next process (stat_store.py, stat_splice.py)
    report.generation = index.generation()
    report.updated.sort()
    report.renamed.sort()
    return report
