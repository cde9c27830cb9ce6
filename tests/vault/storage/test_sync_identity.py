"""A note's identity in sync: its ctime, and git's racily clean rule (storage/folders.py).

An edit that keeps the size and sets the mtime back changes only the ctime; an edit in the
same file-system clock tick as the sync that read the file changes no stat at all, which the
rule covers by storing folders.RACY for a file whose ctime was recent, so the next sync reads
it again. A coarse file system is simulated by truncating the listing's times to a tick. An
index from before ctimes were kept adopts them without reading the files again.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from vault.storage import folders
from vault.storage.index import Index
from vault.storage.migrations import migrate
from vault.storage.schema import MIGRATIONS
from vault.storage.store import Store
from vault.storage.sync import sync

TICK = 10**9  # the simulated file system's timestamp granularity (ns): ext3's, below SETTLED_NS


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths every Store.read_text call read, in order."""
    seen: list[str] = []
    original = Store.read_text

    def counted(self: Store, path: str) -> str:
        seen.append(path)
        return original(self, path)

    monkeypatch.setattr(Store, "read_text", counted)
    return seen


def _settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """The clock an hour ahead: every file on disk is SETTLED_NS old."""
    monkeypatch.setattr(folders, "_clock", lambda: time.time_ns() + 3600 * 10**9)


def _at_the_writing(monkeypatch: pytest.MonkeyPatch, root: Path, tick: int = 1) -> None:
    """This process's clock at the oldest note's ctime (floored to `tick`, as a listing
    shows it), for good: every note is younger than SETTLED_NS then, however long the test
    has run. (On the real clock a sync that began SETTLED_NS after the notes were written
    stored their true ctimes, and a test that wants them RACY failed on a loaded machine.)"""
    oldest = min(p.stat().st_ctime_ns for p in root.rglob("*.md")) // tick * tick
    monkeypatch.setattr(folders, "_clock", lambda: oldest)


def _coarse(monkeypatch: pytest.MonkeyPatch) -> None:
    """Listings whose mtimes and ctimes are truncated to TICK (a coarse file system), through
    the Python stat loops (os.lstat)."""
    monkeypatch.setattr(folders, "_native", None)
    lstat = os.lstat

    class Coarse:
        def __init__(self, info: os.stat_result) -> None:
            self.st_mode, self.st_size, self.st_ino = info.st_mode, info.st_size, info.st_ino
            self.st_mtime_ns = info.st_mtime_ns // TICK * TICK
            self.st_ctime_ns = info.st_ctime_ns // TICK * TICK

    def coarse(name: bytes | str, *, dir_fd: int | None = None) -> Coarse:
        return Coarse(lstat(name, dir_fd=dir_fd))

    monkeypatch.setattr(os, "lstat", coarse)  # what the scan's Python loops call


def two_notes(tmp_path: Path) -> Path:
    """A vault folder of two notes, one in a sub-folder."""
    root = tmp_path / "v"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.md").write_text("alpha zebra\n")
    (root / "b.md").write_text("bravo\n")
    return root


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[tuple[Store, Index, Path]]:
    root = two_notes(tmp_path)
    index = Index.open(tmp_path / "index.sqlite")
    yield Store(root), index, root
    index.close()


def _edit_keeping_stat(path: Path, text: str) -> None:
    """Overwrite in place with same-size text, then set atime and mtime back."""
    st = path.stat()
    assert len(text.encode()) == st.st_size
    with open(path, "r+b") as fh:
        fh.write(text.encode())
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _body(index: Index, path: str) -> str:
    note_id = index.note_id(path)
    assert note_id is not None
    row = index.note(note_id)
    assert row is not None
    return row.body


def test_an_edit_with_its_mtime_set_back_is_seen(
        vault: tuple[Store, Index, Path], monkeypatch: pytest.MonkeyPatch,
        reads: list[str]) -> None:
    store, index, root = vault
    _settled(monkeypatch)
    sync(store, index, workers=1)
    _edit_keeping_stat(root / "sub" / "a.md", "alpha hippo\n")
    reads.clear()
    report = sync(store, index, workers=1)
    assert report.updated == ["sub/a.md"] and reads == ["sub/a.md"]
    assert "hippo" in _body(index, "sub/a.md")


def test_a_no_op_sync_reads_no_settled_file(
        vault: tuple[Store, Index, Path], monkeypatch: pytest.MonkeyPatch,
        reads: list[str]) -> None:
    store, index, _ = vault
    _settled(monkeypatch)
    sync(store, index, workers=1)
    assert sorted(reads) == ["b.md", "sub/a.md"]
    rows = {p: tuple(r) for p, r in index.stats().items()}
    assert all(r.ctime_ns != folders.RACY for r in index.stats().values())
    for _ in range(2):
        reads.clear()
        report = sync(store, index, workers=1)
        assert not report.changed and reads == []
        assert {p: tuple(r) for p, r in index.stats().items()} == rows


def test_a_recent_file_is_read_again_until_it_settles(
        vault: tuple[Store, Index, Path], monkeypatch: pytest.MonkeyPatch,
        reads: list[str]) -> None:
    """The clock decides only whether a file is read again: the rows hold the same note
    either way, and once settled a sync reads nothing."""
    store, index, root = vault
    _at_the_writing(monkeypatch, root)
    sync(store, index, workers=1)  # the files were written just now: RACY
    assert {r.ctime_ns for r in index.stats().values()} == {folders.RACY}
    generation = index.generation()
    reads.clear()
    report = sync(store, index, workers=1)
    assert sorted(reads) == ["b.md", "sub/a.md"] and not report.changed
    assert index.generation() == generation
    _settled(monkeypatch)
    sync(store, index, workers=1)  # read again, the true ctimes stored (no re-parse)
    assert folders.RACY not in {r.ctime_ns for r in index.stats().values()}
    assert index.generation() == generation
    reads.clear()
    assert not sync(store, index, workers=1).changed and reads == []


@pytest.mark.parametrize("rule", [True, False])
def test_an_edit_in_the_same_tick_as_the_read_is_seen_next_sync(
        vault: tuple[Store, Index, Path], monkeypatch: pytest.MonkeyPatch,
        rule: bool) -> None:
    """On a coarse file system an edit right after the sync's read keeps every stat (size,
    mtime, inode, ctime all equal at the tick). With the racy rule the next sync reads the
    file again and sees the edit; without it (`rule` False) the edit is never seen."""
    store, index, root = vault
    _coarse(monkeypatch)
    if not rule:
        monkeypatch.setattr("vault.storage.future.stored_ctime", lambda ctime, now: ctime)
    _at_the_writing(monkeypatch, root, TICK)
    path = root / "sub" / "a.md"
    sync(store, index, workers=1)
    before = folders.list_folder(str(root), "sub", None)[0]
    _edit_keeping_stat(path, "alpha hippo\n")
    after = folders.list_folder(str(root), "sub", None)[0]
    if after != before:
        pytest.skip("the edit crossed a simulated tick")
    sync(store, index, workers=1)
    assert ("hippo" in _body(index, "sub/a.md")) == rule


def test_an_index_from_before_ctimes_adopts_them_without_a_read(
        vault: tuple[Store, Index, Path], monkeypatch: pytest.MonkeyPatch,
        reads: list[str], tmp_path: Path) -> None:
    """Migration 3 gives old rows folders.LEGACY: a file whose size, mtime and inode match
    is trusted as before and its ctime stored without a read; one that changed is read."""
    store, index, root = vault
    _settled(monkeypatch)
    sync(store, index, workers=1)
    other = sqlite3.connect(tmp_path / "index.sqlite", isolation_level=None)
    other.execute("UPDATE notes SET ctime_ns = ?", (folders.LEGACY,))  # as migrated
    other.close()
    (root / "b.md").write_text("bravo charlie\n")
    reads.clear()
    report = sync(store, index, workers=1)
    assert reads == ["b.md"] and report.updated == ["b.md"]
    want = {p: (root / p).stat().st_ctime_ns for p in ("b.md", "sub/a.md")}
    assert {p: r.ctime_ns for p, r in index.stats().items()} == want
    reads.clear()
    assert not sync(store, index, workers=1).changed and reads == []


@pytest.mark.parametrize("read_only", [True, False])
def test_an_index_from_before_migration_3_reads_its_rows_as_legacy(
        tmp_path: Path, read_only: bool) -> None:
    """Migrated, or read as it is where this process may not write it."""
    path = tmp_path / "index.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, MIGRATIONS[:2])
    conn.execute("INSERT INTO notes(path, title, size, mtime_ns, inode, content_hash,"
                 " frontmatter, aliases, tags, body) VALUES ('a.md', 'a', 1, 2, 3, 'ab',"
                 " '{}', '[]', '[]', 'x')")
    conn.close()
    index = Index.open(path, read_only=read_only)
    try:
        row = index.stat_of("a.md")
        assert row is not None and (row.size, row.mtime_ns, row.inode) == (1, 2, 3)
        assert row.ctime_ns == folders.LEGACY
        assert [(n.path, n.ctime_ns) for n in index.iter_notes()] == [("a.md", folders.LEGACY)]
        assert set(index.stats()) == {"a.md"}
    finally:
        index.close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == (2 if read_only else 3)
    conn.close()
