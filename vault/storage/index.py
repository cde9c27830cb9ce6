"""The derived SQLite index at VAULT/.rmh/index.sqlite; with its schema (schema.py) the only
module that runs SQL on it.

Numbered migrations run in one transaction each (PRAGMA user_version records the last one).
The database runs in WAL mode with a busy timeout, so Obsidian-side readers, the CLI and a
server can share it. Every row is derivable from the folder except the stable note ids, which
survive renames (the move API updates the path in place; sync matches renamed files by hash).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import DiskFull, IndexUnusable, ReadOnlyVault, VaultError
from ..full_disk import is_disk_full
from ..notes.rows import LinkRow, NoteRow
from ..room import no_space
from . import stat_store
from .batches import batches
from .embeddings import delete_embeddings, insert_embeddings, select_embeddings, vacuum
from .folders import FolderDigest
from .id_floor import reserve_ids
from .index_ro import BUSY_TIMEOUT_MS, full_disk_connection, read_only_connection
from .migrations import connect, enter_wal, migrate
from .row_codec import NOTE_COLS, NOTE_FIELDS, STAT_COLS, decode_link, decode_note, encode_note
from .schema import MIGRATIONS as MIGRATIONS
from .schema import install_stat_key, stat_key, stat_key_installed, stat_sample
from .stat_cache import StatCache
from .stat_cache import StatRow as StatRow  # re-exported: sync and tests import it here


class Index:
    """A connection to one vault's index database."""

    def __init__(self, conn: sqlite3.Connection, *, read_only: bool = False,
                 refuse: Callable[[], VaultError] | None = None,
                 state: Path | None = None) -> None:
        self._conn = conn
        self._state = state  # the folder of the persisted stat columns (stat_store.py)
        # Opened to read only: every write raises `refuse` (a full disk: DiskFull; a vault
        # that is not writable: ReadOnlyVault).
        self._refuse = refuse or ((lambda: DiskFull("index.sqlite")) if read_only else None)
        self._read_only_vault = refuse is not None
        self._stats: StatCache | None = None
        self._touched: tuple[set[int], set[str]] | None = None  # ids, old paths (atomic)
        self._read_tx: int | None = None  # in a transaction `reading` began: total_changes

    @classmethod
    def open(cls, path: Path, *, read_only: bool = False,
             id_floor: Callable[[], int] | None = None) -> Index:
        """Open (creating and migrating as needed) the index at `path`; with `read_only` (a
        vault this process may not write) only read it, every write raising ReadOnlyVault.
        An index that has handed out no note id yet starts above `id_floor()` (id_floor.py)."""
        if read_only:  # the stat file only where the key's triggers are there to keep it
            ro = read_only_connection(path)
            try:
                keyed = stat_key_installed(ro)
            except sqlite3.DatabaseError:  # reported by the first read, as before
                keyed = False
            return cls(ro, refuse=lambda: ReadOnlyVault("index.sqlite"),
                       state=path.parent if keyed else None)
        path.parent.mkdir(parents=True, exist_ok=True)
        conn: sqlite3.Connection | None = None
        try:  # connecting fails too: the file is a folder, a FIFO
            conn = connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                           check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            enter_wal(conn, BUSY_TIMEOUT_MS)
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
            migrate(conn, MIGRATIONS)
            reserve_ids(conn, id_floor)
        except sqlite3.DatabaseError as exc:
            if conn is not None:
                conn.close()
            if is_disk_full(exc) or no_space(str(path.parent)):
                return cls(full_disk_connection(path), read_only=True)
            raise IndexUnusable(f"cannot open index {path.name}: {exc}") from exc
        try:
            if install_stat_key(conn):  # a new index, or one written without the key
                stat_store.drop(path.parent)
        except sqlite3.OperationalError:  # locked past the timeout, a full disk: no stat file
            return cls(conn)
        return cls(conn, state=path.parent)

    @property
    def read_only_vault(self) -> bool:
        """Opened for a vault this process may not write (`open(read_only=True)`)."""
        return self._read_only_vault

    def close(self) -> None:
        self._conn.close()

    @contextmanager
    def atomic(self) -> Iterator[None]:
        """One write transaction (BEGIN IMMEDIATE ... COMMIT, rolled back on error)."""
        if self._refuse is not None:
            raise self._refuse()
        self._conn.execute("BEGIN IMMEDIATE")
        self._touched = (set(), set())
        try:
            yield
        except BaseException:
            self._touched = None
            if self._conn.in_transaction:  # SQLITE_FULL rolls back by itself
                self._conn.execute("ROLLBACK")
            raise
        ids, gone = self._touched
        self._touched = None
        self._conn.execute("COMMIT")
        if (ids or gone) and self._stats is not None:
            self._stats.patch(gone, self._stat_rows(ids))

    def _touch(self, note_id: int, moved: bool = True) -> None:
        """Record a note this transaction writes (its old path too when it may move), for
        the stat cache (storage/stat_cache.py); outside `atomic` the cache is dropped."""
        if self._touched is None:
            self._stats = None
            return
        self._touched[0].add(note_id)
        if moved:
            row = self._conn.execute("SELECT path FROM notes WHERE id = ?", (note_id,))
            old = row.fetchone()
            if old is not None:
                self._touched[1].add(old[0])

    def _stat_rows(self, ids: Iterable[int]) -> list[Sequence[Any]]:
        out: list[Sequence[Any]] = []
        for marks, part in batches(ids):
            out.extend(self._conn.execute(
                f"SELECT {STAT_COLS} FROM notes WHERE id IN ({marks})", part))
        return out

    @contextmanager
    def reading(self) -> Iterator[None]:
        """One read transaction: every read inside sees the same committed state (nested in
        `atomic` or another `reading`, it is that transaction)."""
        if self._conn.in_transaction:
            yield
            return
        self._conn.execute("BEGIN")
        self._read_tx = self._conn.total_changes  # rows this connection had written by then
        try:
            yield
        finally:
            self._read_tx = None
            self._conn.execute("COMMIT")

    # -- generation ---------------------------------------------------------------------

    def generation(self) -> int:
        return int(self.meta("generation") or 0)

    def meta(self, key: str) -> str | None:
        """The index's `meta` value under `key` (None when unset: reparse.py's parse version)."""
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        """Set a `meta` value (call inside atomic())."""
        self._conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def bump_generation(self) -> int:
        """Mark the index as changed (call inside atomic()); returns the new generation."""
        self._conn.execute(
            "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'"
        )
        return self.generation()

    # -- notes ----------------------------------------------------------------------------

    def stats(self) -> dict[str, StatRow]:
        """Every note's stat fingerprint, by path (a copy; callers may mutate it)."""
        return dict(self.stat_folders()[0])

    def stat_folders(self) -> tuple[Mapping[str, StatRow], Mapping[str, FolderDigest]]:
        """Every note's stat fingerprint by path (read only), and per folder the digest of
        its notes' stats with their paths (storage/folders.py: what sync compares a folder's
        listing with). Cached (storage/stat_cache.py): reloaded when another connection has
        committed (`PRAGMA data_version`), patched by this connection's own commits; loaded
        from the persisted columns when they are those of the rows' key (stat_store.py)."""
        version = int(self._conn.execute("PRAGMA data_version").fetchone()[0])
        if self._stats is None or self._stats.version != version:
            self._stats = self._load_stats(version)
        return self._stats.rows, self._stats.folders

    def _load_stats(self, version: int) -> StatCache:
        """The stat cache from the persisted columns, else from the rows with their key (read
        in the same transaction; kept for `persist_stats` only with no write pending: outside
        a transaction, or in one `reading` began that has written nothing)."""
        clean = not self._conn.in_transaction or self._read_tx == self._conn.total_changes
        with self.reading():
            key = stat_key(self._conn) if self._state is not None else None
            if key is not None and self._state is not None:
                saved = stat_store.load(self._state, key)
                if saved is not None and stat_store.agrees(
                        saved, lambda ids: stat_sample(self._conn, ids)):
                    return StatCache(version, key=key if clean else None, saved=saved)
            return StatCache(version, self._conn.execute(f"SELECT {STAT_COLS} FROM notes"),
                             key=key if clean else None)

    def persist_stats(self, count_op: Callable[[], None] | None = None) -> bool:
        """Save the stat cache's columns (stat_store.py) under the rows' key now, when they are
        provably those rows: read (rows or file) outside a write, no layer of patched rows
        left (`StatCache.settle` folds or splices it in), and unchanged with the key, or
        changed only by this connection's own commits with no other connection committing
        since (`PRAGMA data_version`, read after the key). True when saved."""
        c = self._stats
        if (c is None or c.from_file or c.key is None or self._state is None
                or self._refuse is not None or self._conn.in_transaction):
            return False
        key = stat_key(self._conn)
        if key is None or (not c.patched and key != c.key) or (c.patched and int(
                self._conn.execute("PRAGMA data_version").fetchone()[0]) != c.version):
            return False
        cols = c.columns() if c.settle() else None
        if cols is None:
            return False
        c.from_file = stat_store.save(self._state, key, cols, count_op)
        return c.from_file

    def stat_of(self, path: str) -> StatRow | None:
        """One note's stat fingerprint (no full-table read: used after single writes)."""
        query = f"SELECT {STAT_COLS} FROM notes WHERE path = ?"
        row = self._conn.execute(query, (path,)).fetchone()
        return StatRow(*row) if row else None

    def insert_note(self, row: NoteRow, links: Sequence[LinkRow]) -> int:
        """Insert a new note (row.id ignored) and its links; returns the new stable id."""
        cur = self._conn.execute(
            f"INSERT INTO notes({', '.join(NOTE_FIELDS)})"
            f" VALUES ({','.join('?' * len(NOTE_FIELDS))})",
            encode_note(row),
        )
        note_id = int(cur.lastrowid or 0)
        self._touch(note_id, moved=False)
        self._set_links(note_id, links)
        return note_id

    def update_note(self, row: NoteRow, links: Sequence[LinkRow]) -> None:
        """Replace every field of note `row.id` (path included) and its links."""
        self._touch(row.id)
        self._conn.execute(
            f"UPDATE notes SET {', '.join(f + '=?' for f in NOTE_FIELDS)} WHERE id=?",
            (*encode_note(row), row.id),
        )
        self._set_links(row.id, links)

    def update_stat(self, note_id: int, size: int, mtime_ns: int, inode: int,
                    ctime_ns: int) -> None:
        """Record a new stat for a file whose content did not change."""
        self._touch(note_id, moved=False)
        self._conn.execute(
            "UPDATE notes SET size=?, mtime_ns=?, inode=?, ctime_ns=? WHERE id=?",
            (size, mtime_ns, inode, ctime_ns, note_id),
        )

    def delete_note(self, note_id: int) -> None:
        self._touch(note_id)
        self._conn.execute("DELETE FROM notes WHERE id = ?", (note_id,))

    def _set_links(self, note_id: int, links: Sequence[LinkRow]) -> None:
        self._conn.execute("DELETE FROM links WHERE src = ?", (note_id,))
        self._conn.executemany(
            "INSERT INTO links(src, ord, target, heading, block, alias, embed, kind)"
            " VALUES (?,?,?,?,?,?,?,?)",
            [
                (note_id, i, ln.target, ln.heading, ln.block, ln.alias, int(ln.embed), ln.kind)
                for i, ln in enumerate(links)
            ],
        )

    def notes(self) -> list[NoteRow]:
        """Every note, by ascending id."""
        return list(self.iter_notes())

    def iter_notes(self) -> Iterator[NoteRow]:
        """Every note, by ascending id, one row at a time (consume it inside `reading()`)."""
        for r in self._conn.execute(f"SELECT {NOTE_COLS} FROM notes ORDER BY id"):
            yield decode_note(r)

    def iter_links(self) -> Iterator[tuple[int, LinkRow]]:
        """(source id, link) of every link, by source id then text order, one at a time."""
        for src, *rest in self._conn.execute(
            "SELECT src, target, heading, block, alias, embed, kind FROM links ORDER BY src, ord"
        ):
            yield src, decode_link(*rest)

    def notes_of(self, ids: Sequence[int]) -> dict[int, NoteRow]:
        """The rows of these note ids (those that exist), by id."""
        out: dict[int, NoteRow] = {}
        for marks, part in batches(ids):
            for r in self._conn.execute(
                    f"SELECT {NOTE_COLS} FROM notes WHERE id IN ({marks})", part):
                out[r[0]] = decode_note(r)
        return out

    def present(self, ids: Iterable[int]) -> set[int]:
        """Which of these note ids the index holds (O(len(ids)), not O(notes))."""
        out: set[int] = set()
        for marks, part in batches(ids):
            out.update(r[0] for r in self._conn.execute(
                f"SELECT id FROM notes WHERE id IN ({marks})", part))
        return out

    def note(self, note_id: int) -> NoteRow | None:
        r = self._conn.execute(f"SELECT {NOTE_COLS} FROM notes WHERE id = ?", (note_id,))
        row = r.fetchone()
        return decode_note(row) if row else None

    def note_id(self, path: str) -> int | None:
        """The stable id of the note at `path`, or None."""
        row = self._conn.execute("SELECT id FROM notes WHERE path = ?", (path,)).fetchone()
        return int(row[0]) if row else None

    def links_of(self, note_id: int) -> list[LinkRow]:
        """One note's links in text order."""
        return [decode_link(*r) for r in self._conn.execute(
            "SELECT target, heading, block, alias, embed, kind FROM links WHERE src = ?"
            " ORDER BY ord", (note_id,))]

    def links(self) -> dict[int, list[LinkRow]]:
        """Every note's links in text order, by source id."""
        out: dict[int, list[LinkRow]] = {}
        for src, link in self.iter_links():
            out.setdefault(src, []).append(link)
        return out

    # -- skipped files ----------------------------------------------------------------------

    def set_skipped(self, skipped: Mapping[str, str]) -> None:
        self._conn.execute("DELETE FROM skipped")
        self._conn.executemany(
            "INSERT INTO skipped(path, reason) VALUES (?, ?)", sorted(skipped.items())
        )

    def set_skipped_paths(self, paths: Iterable[str], skipped: Mapping[str, str]) -> None:
        """Replace the skipped rows of just `paths` (a partial sync): those in `skipped` get
        their reason, the others are no longer skipped."""
        for path in sorted(set(paths)):
            self._conn.execute("DELETE FROM skipped WHERE path = ?", (path,))
            if path in skipped:
                self._conn.execute(
                    "INSERT INTO skipped(path, reason) VALUES (?, ?)", (path, skipped[path])
                )

    def skipped(self) -> dict[str, str]:
        rows = self._conn.execute("SELECT path, reason FROM skipped ORDER BY path").fetchall()
        return {p: r for p, r in rows}

    def skipped_reason(self, path: str) -> str | None:
        """Why the last sync skipped the file at `path`, or None when it did not."""
        row = self._conn.execute("SELECT reason FROM skipped WHERE path = ?", (path,)).fetchone()
        return None if row is None else str(row[0])

    # -- embeddings cache --------------------------------------------------------------------

    def get_embeddings(
        self, model_fp: str, keys: Sequence[str]
    ) -> dict[str, npt.NDArray[np.float32]]:
        """Cached float32 vectors for the keys present (keys: sha256 of the chunk text)."""
        return select_embeddings(self._conn, model_fp, keys)

    def put_embeddings(self, model_fp: str, items: Mapping[str, npt.NDArray[np.float32]]) -> None:
        """Store vectors (float32) for chunk keys under a model fingerprint. The index of a
        read-only vault keeps none (the vectors serve this process from memory)."""
        if self.read_only_vault:
            return
        with self.atomic():
            insert_embeddings(self._conn, model_fp, items)

    def forget_embeddings(self, keys: Sequence[str]) -> int:
        """Erasure: drop the vectors of `keys` under every model (`vacuum` frees the pages)."""
        with self.atomic():
            return delete_embeddings(self._conn, keys)

    def vacuum(self) -> None:
        """Rewrite the file without free pages and empty its WAL, so no deleted row's text
        survives in a freed page or an old WAL frame (erasure)."""
        vacuum(self._conn)

    def counts(self) -> dict[str, int]:
        """Row counts for status reports."""
        return {t: int(self._conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0])
                for t in ("notes", "links", "skipped", "embeddings")}


