"""vault.storage.folders and scan_pool: per-folder digests, the split scan, and sync over them.

Real files, real worker subprocesses. The split must not change a listing, a scan or a sync
report; a folder whose digest matches is not looked at one by one, and every change a stat
can see (size, mtime, inode, a new, gone or renamed file) still makes its folder differ."""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from vault.storage import folders, scan_pool
from vault.storage.index import Index
from vault.storage.store import MAX_NOTE_BYTES, Store
from vault.storage.sync import sync


def test_md_suffix_tuple_matches_lowercasing_over_all_of_unicode() -> None:
    chars = (chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)
    assert [c for c in chars if any(x in c.lower() for x in ".md") and c not in ".mdMD"] == []
    for name in ("a.md", "a.MD", "a.Md", "a.mD", "a.mdx", "md", ".md", "a.m d"):
        assert name.endswith(folders._MD) == name.lower().endswith(".md")


def _vault(root: Path, folders_n: int = 24) -> Store:
    """Enough folders for the scan to reach the workers, and the oddities scans report."""
    for k in range(folders_n):
        sub = root / f"f{k:02d}" / ("deep" if k % 5 == 0 else "")
        sub.mkdir(parents=True, exist_ok=True)
        for j in range(k % 4 + 1):
            (sub / f"n{j}.md").write_text(f"note {k} {j}\n")
    (root / "top.md").write_text("top\n")
    (root / "UPPER.MD").write_text("upper\n")
    (root / "f03" / "notes.txt").write_text("not a note\n")
    (root / "f04" / ".hidden.md").write_text("hidden\n")
    (root / "f05" / ".obsidian").mkdir()
    (root / "f05" / ".obsidian" / "x.md").write_text("hidden\n")
    (root / "f06" / "big.md").write_bytes(b"x" * (MAX_NOTE_BYTES + 1))
    (root / "f07" / "tab\there.md").write_text("refused name\n")
    os.mkfifo(root / "f08" / "fifo.md")
    (root / "f09" / "alias.md").symlink_to("n0.md")
    (root / "f10" / "out").symlink_to("/")
    (root / "f11" / "folder.md").mkdir()
    (root / "f11" / "folder.md" / "inner.md").write_text("inner\n")
    return Store(root)


def test_split_listings_equal_the_one_process_listings(tmp_path: Path) -> None:
    store = _vault(tmp_path / "v")
    one = store.listings()
    assert [x.folder for x in one] == sorted(x.folder for x in one)
    for workers in (2, 3):
        assert store.listings(workers=workers) == one
    assert len(scan_pool._workers) >= 2  # the split really ran in worker processes
    skipped = {s.path: s.reason for x in one for s in store.notes_in(x)[1]}
    assert skipped == {
        "f06/big.md": f"larger than {MAX_NOTE_BYTES} bytes",
        "f07/tab\there.md": "refused name: control character U+0009",
        "f08/fifo.md": "not a regular file",
        "f09/alias.md": "symlink inside vault (not followed)",
        "f10/out": "symlink outside vault",
    }


def test_a_folder_matching_its_digest_lists_no_names(tmp_path: Path) -> None:
    store = _vault(tmp_path / "v")
    index = Index.open(tmp_path / "index.sqlite")
    sync(store, index, workers=1)
    _, expected = index.stat_folders()
    for workers in (1, 2):
        listings = store.listings(expected, workers)
        looked = [x.folder for x in listings if x.folder in expected and not x.same]
        assert looked == ["f07"]  # a refused name is not in the index: looked at each time
        assert all(not x.names for x in listings if x.same)
        assert all(not x.same for x in listings if x.folder not in expected)
    assert expected["f00/deep"][1] == ("f00/deep/n0.md",)


def _edits(root: Path) -> list[tuple[str, Callable[[], object]]]:
    """Changes a stat can see, one at a time: (what, the change)."""
    n1 = root / "f01" / "n1.md"
    n2 = root / "f02" / "n2.md"
    return [
        ("size", lambda: n1.write_text("note 1 1 and more\n")),
        ("mtime only (same size)", lambda: os.utime(n2, ns=(1, 1))),
        ("inode (same size, same mtime)", lambda: _same_stat_new_inode(root / "f03" / "n0.md")),
        ("new file", lambda: (root / "f12" / "new.md").write_text("new\n")),
        ("new folder", lambda: _write(root / "g" / "h" / "x.md", "x\n")),
        ("removed", lambda: (root / "f13" / "n0.md").unlink()),
        ("renamed", lambda: (root / "f14" / "n0.md").rename(root / "f14" / "moved.md")),
        ("folder removed", lambda: shutil.rmtree(root / "f15")),
    ]


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _same_stat_new_inode(path: Path) -> None:
    info = path.stat()
    tmp = path.with_name("tmp.txt")
    tmp.write_bytes(path.read_bytes())
    os.utime(tmp, ns=(info.st_atime_ns, info.st_mtime_ns))
    tmp.replace(path)


@pytest.mark.parametrize("workers", [1, 2])
def test_sync_sees_every_stat_change_and_reports_like_one_process(
        tmp_path: Path, workers: int) -> None:
    root = tmp_path / "v"
    store = _vault(root)
    index = Index.open(tmp_path / "index.sqlite")
    first = sync(store, index, workers=workers)
    assert len(first.added) == sum(k % 4 + 1 for k in range(24)) + 3
    assert sync(store, index, workers=workers).to_json() == {**first.to_json(), "added": [],
                                                              "generation": 1}
    for what, change in _edits(root):
        gen, cache = index.generation(), index._stats
        change()
        report = sync(store, index, workers=workers)
        assert index._stats is cache, what  # patched by the commit, not read again
        assert report.changed or what.startswith("mtime") or what.startswith("inode"), what
        assert index.generation() == gen + report.changed, what
        rows = {p: (r.size, r.mtime_ns, r.inode) for p, r in index.stats().items()}
        now = {f.path: (f.size, f.mtime_ns, f.inode) for f in store.scan().files}
        assert rows == now, what  # the index holds every stat the folder has
        fresh = Index.open(tmp_path / "index.sqlite")  # the cache, patched by each commit,
        assert index.stat_folders() == fresh.stat_folders(), what  # equals a fresh load
        fresh.close()
        assert not sync(store, index, workers=workers).changed, what


def test_a_worker_that_cannot_start_leaves_the_work_here(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _vault(tmp_path / "v")
    one = store.listings()

    class NoExec:
        def __init__(self) -> None:
            raise OSError("exec refused")

    scan_pool.close_workers()
    monkeypatch.setattr(scan_pool, "_Worker", NoExec)
    assert store.listings(workers=2) == one
    assert scan_pool._workers == []


def test_a_settled_folder_is_not_read_again_and_every_change_still_shows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "v"
    store = _vault(root)
    index = Index.open(tmp_path / "index.sqlite")
    monkeypatch.setattr(folders, "_listed", {})
    real_clock, real_listdir = folders._clock, os.listdir
    monkeypatch.setattr(folders, "_clock", lambda: real_clock() + 10 * folders.SETTLED_NS)
    reads: list[int] = []

    def listdir(fd: int) -> list[str]:
        reads.append(fd)
        return real_listdir(fd)

    monkeypatch.setattr(os, "listdir", listdir)
    sync(store, index, workers=1)
    folders_n = len(reads)
    sync(store, index, workers=1)
    assert len(reads) == folders_n  # every folder settled: none read again, all stat'ed
    for what, change in _edits(root):
        time.sleep(0.05)  # past the file-system clock tick of the last listing
        before = len(reads)
        change()
        sync(store, index, workers=1)
        assert len(reads) - before <= 3, what  # only the folders whose entries changed
        rows = {p: (r.size, r.mtime_ns, r.inode) for p, r in index.stats().items()}
        cached = {f.path: (f.size, f.mtime_ns, f.inode) for f in store.scan().files}
        folders._listed.clear()
        truth = {f.path: (f.size, f.mtime_ns, f.inode) for f in store.scan().files}
        assert rows == cached == truth, what


def test_a_folder_changed_as_it_is_listed_is_read_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _vault(tmp_path / "v")
    monkeypatch.setattr(folders, "_listed", {})
    store.listings()
    assert folders._listed == {}  # ctimes of just now are not settled: nothing kept


def test_dead_workers_are_replaced(tmp_path: Path) -> None:
    store = _vault(tmp_path / "v")
    one = store.listings(workers=2)
    for worker in scan_pool._workers:
        worker.proc.kill()
        worker.proc.wait()
    assert store.listings(workers=2) == one
    assert all(w.proc.poll() is None for w in scan_pool._workers)



def _lean(folder: Path, names: list[str]) -> tuple[list[int], list[int], list[int]] | None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        return folders._stat_notes(fd, names)
    finally:
        os.close(fd)


def test_the_lean_path_takes_plain_notes_only(tmp_path: Path) -> None:
    root = tmp_path / "v"
    _vault(root)
    n0 = (root / "f01" / "n0.md").stat()
    assert _lean(root / "f01", ["n0.md"]) == ([n0.st_size], [n0.st_mtime_ns], [n0.st_ino])
    for folder, odd in [("f06", "big.md"), ("f08", "fifo.md"), ("f09", "alias.md"),
                        ("f11", "folder.md"), ("f01", "gone.md")]:
        assert _lean(root / folder, ["n0.md", odd]) is None, odd  # the full rules decide


def test_every_folder_lists_as_the_full_rules_list_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "v"
    _vault(root)
    os.chmod(root / "f02" / "n1.md", 0)  # stat'able still: a note (reading it is sync's job)
    walked = folders.walk(str(root), [""], {})
    assert [x.folder for x in walked if x.names == ("n0.md",)]  # plain folders are there
    monkeypatch.setattr(folders, "_stat_notes", lambda fd, names: None)
    folders._listed.clear()
    assert folders.walk(str(root), [""], {}) == walked


@pytest.mark.parametrize("workers", [1, 2])
def test_a_note_turning_odd_in_a_settled_folder_is_seen(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int) -> None:
    """Growing past the size limit in place leaves the folder's ctime alone: the lean path
    must still hand the note to the full rules, and take it back once it shrinks."""
    root = tmp_path / "v"
    store = _vault(root)
    index = Index.open(tmp_path / "index.sqlite")
    monkeypatch.setattr(folders, "_listed", {})
    monkeypatch.setattr(folders, "SETTLED_NS", -10 * 10**9)  # every listing here is kept
    sync(store, index, workers=workers)
    assert not sync(store, index, workers=workers).changed
    with (root / "f01" / "n0.md").open("r+b") as f:  # in place: the folder's ctime stays
        f.truncate(MAX_NOTE_BYTES + 1)
    report = sync(store, index, workers=workers)
    assert report.skipped["f01/n0.md"] == f"larger than {MAX_NOTE_BYTES} bytes"
    with (root / "f01" / "n0.md").open("r+b") as f:
        f.truncate(0)
        f.write(b"small again\n")
    report = sync(store, index, workers=workers)
    assert report.updated == ["f01/n0.md"] and "f01/n0.md" not in report.skipped
    assert not sync(store, index, workers=workers).changed
