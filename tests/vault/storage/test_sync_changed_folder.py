"""A full sync looks at the notes of every folder whose listing differs from the index; the
notes there whose stats equal their rows are found unchanged by one comparison of arrays per
folder (stat_cache.py `same_stats`), not one stat row built and compared per note (after 50
notes added to 50 folders of ~1,000, that cost the first process's sync ~0.2 s of its ~0.5 s).

Attacked from outside: generated sequences of changes made to the files (adds, appends,
same-size edits with the mtime set back, touches, deletes, renames within and across folders,
a file replaced by a new inode with the same bytes) on real SQLite indexes; after each, the
sync's report and every stat row equal those of a twin index synced one note at a time, and
the rows are the files' own stats."""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import pytest

from vault.storage import folders
from vault.storage import stat_cache as stat_cache_mod
from vault.storage import sync as sync_mod
from vault.storage.index import Index
from vault.storage.store import Store
from vault.storage.sync import SyncReport, sync

FOLDERS = ("a", "b", "b/c")


def _settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """The clock an hour ahead: every file on disk is settled (no racily clean rows)."""
    monkeypatch.setattr(folders, "_clock", lambda: time.time_ns() + 3600 * 10**9)


def _one_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sync_mod, "same_stats", lambda *_: set(), raising=False)


def _report(r: SyncReport) -> tuple[object, ...]:
    return (sorted(r.added), sorted(r.updated), sorted(r.removed), sorted(r.renamed),
            r.skipped)


def _rows(index: Index) -> dict[str, tuple[object, ...]]:
    return {p: tuple(r) for p, r in index.stats().items()}


def _change(root: Path, rng: random.Random, step: int) -> None:
    notes = sorted(p for p in root.rglob("*.md"))
    for _ in range(rng.randint(1, 6)):
        kind = rng.randrange(8)
        if kind == 0 or not notes:
            folder = root / rng.choice(FOLDERS)
            (folder / f"new{step}-{rng.randrange(10**6)}.md").write_text(
                f"added {step} {rng.random()}\n")
            continue
        note = rng.choice(notes)
        if not note.exists():
            continue
        st = note.stat()
        if kind == 1:
            with open(note, "a", encoding="utf-8") as fh:
                fh.write(f"more {step}\n")
        elif kind == 2:  # same size, mtime set back: only the ctime tells
            data = bytearray(note.read_bytes())
            data[0] = ord("Z") if data[0] != ord("Z") else ord("Y")
            note.write_bytes(bytes(data))
            os.utime(note, ns=(st.st_atime_ns, st.st_mtime_ns))
        elif kind == 3:
            os.utime(note, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
        elif kind == 4:
            note.unlink()
        elif kind == 5:
            note.rename(note.with_name(f"moved{step}-{note.name}"))
        elif kind == 6:
            note.rename(root / rng.choice(FOLDERS) / f"across{step}-{note.name}")
        else:  # the same bytes in a new inode
            tmp = note.with_name(".swap")
            tmp.write_bytes(note.read_bytes())
            tmp.replace(note)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_changed_folders_sync_as_one_note_at_a_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    _settled(monkeypatch)
    rng = random.Random(seed)
    root = tmp_path / "v"
    for f in FOLDERS:
        (root / f).mkdir(parents=True)
        for i in range(40):
            (root / f / f"n{i:03d}.md").write_text(f"note {f} {i}\n" + "x" * rng.randrange(9))
    store = Store(root)
    fast, slow = Index.open(tmp_path / "fast.sqlite"), Index.open(tmp_path / "slow.sqlite")
    try:
        for step in range(12):
            got = sync(store, fast, workers=1)
            with monkeypatch.context() as m:
                _one_at_a_time(m)
                want = sync(store, slow, workers=1)
            assert _report(got) == _report(want)
            rows = _rows(fast)
            assert rows == _rows(slow)
            on_disk = {str(p.relative_to(root)): p.stat() for p in root.rglob("*.md")}
            assert set(rows) == set(on_disk)
            for path, st in on_disk.items():
                r = fast.stats()[path]
                assert (r.size, r.mtime_ns, r.inode, r.ctime_ns) == (
                    st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)
            _change(root, rng, step)
    finally:
        fast.close()
        slow.close()


def test_one_added_note_builds_no_row_of_its_folders_other_notes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _settled(monkeypatch)
    root = tmp_path / "v"
    (root / "big").mkdir(parents=True)
    for i in range(3000):
        (root / "big" / f"n{i:05d}.md").write_text(f"note {i}\n")
    store, index = Store(root), Index.open(tmp_path / "index.sqlite")
    try:
        sync(store, index, workers=1)
        index.close()
        index = Index.open(tmp_path / "index.sqlite")  # a new process: the rows as columns
        (root / "big" / "added.md").write_text("one more\n")
        built: list[int] = []
        original = stat_cache_mod._Table.row

        def counted(self: stat_cache_mod._Table, k: int) -> stat_cache_mod.StatRow:
            built.append(k)
            return original(self, k)

        monkeypatch.setattr(stat_cache_mod._Table, "row", counted)
        report = sync(store, index, workers=1)
        assert report.added == ["big/added.md"]
        assert len(built) < 30, len(built)  # main: one per note of the folder (3,000)
    finally:
        index.close()
