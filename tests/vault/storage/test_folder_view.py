"""folder_view.py `_hidden_files` (the stale-temp sweep's walk): exactly the hidden
non-folder entries of the folders `_walk` lists, on generated trees with hidden folders,
folder symlinks, dotted folder names and temp-named folders."""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vault.storage import folders
from vault.storage.store import Store


def _tree(root: Path, seed: int) -> None:
    rng = random.Random(seed)
    folders = [root]
    for i in range(40):
        parent = rng.choice(folders)
        kind = rng.randrange(6)
        name = [f"d{i}", f".hid{i}", f"n{i}.md", f".x{i}.md.rmh-tmp-1-1", f"d {i}", "é"][kind]
        if kind < 5 or not (parent / name).exists():
            (parent / name).mkdir(exist_ok=True)
            folders.append(parent / name)
    for i in range(120):
        parent = rng.choice(folders)
        name = rng.choice([f"n{i}.md", f".n{i}.md.rmh-tmp-9-{i}", f".dot{i}", f"a{i}.png",
                           f".{i}"])
        (parent / name).write_text("x")
    (root / ".z.md.rmh-tmp-9-0").write_text("x")
    for i in range(4):  # folder and file symlinks: never followed, a link is an entry
        parent = rng.choice(folders)
        os.symlink(rng.choice(folders), parent / f".link{i}")
        os.symlink(rng.choice(folders), parent / f"link{i}")


def _store(tmp_path: Path, seed: int) -> Store:
    """A vault at tmp_path/v holding the generated tree of `seed`."""
    root = tmp_path / "v"
    (root / ".rmh").mkdir(parents=True)
    _tree(root, seed)
    return Store(root)


def _reference(store: Store) -> list[str]:
    return sorted(rel for rel, entry in store._walk()
                  if entry.name.startswith(".") and not entry.is_dir(follow_symlinks=False))


@pytest.mark.parametrize("seed", range(6))
def test_hidden_files_are_the_walks_hidden_entries(tmp_path: Path, seed: int) -> None:
    store = _store(tmp_path, seed)
    got = sorted(store._hidden_files())
    assert got == _reference(store)
    assert len(got) == len(set(got)) and any(".rmh-tmp-" in g for g in got)


def test_an_unreadable_folder_is_skipped(tmp_path: Path) -> None:
    root = tmp_path / "v"
    (root / ".rmh").mkdir(parents=True)
    (root / "a").mkdir()
    (root / "a" / ".t").write_text("x")
    (root / ".t").write_text("x")
    store = Store(root)
    os.chmod(root / "a", 0)
    try:
        if os.access(root / "a", os.R_OK):  # root reads anything: both are seen
            assert sorted(store._hidden_files()) == [".t", "a/.t"]
        else:
            assert sorted(store._hidden_files()) == [".t"]
    finally:
        os.chmod(root / "a", 0o755)


@pytest.mark.parametrize("seed", range(6))
def test_folders_are_the_walks_folders(tmp_path: Path, seed: int) -> None:
    store = _store(tmp_path, seed)
    walked = ["", *sorted(rel for rel, entry in store._walk()
                          if not entry.name.startswith(".")
                          and entry.is_dir(follow_symlinks=False))]
    assert store.folders() == walked and len(walked) > 2


@pytest.mark.parametrize("seed", range(4))
def test_a_scan_names_the_temps_the_sweep_walks_to(tmp_path: Path, seed: int) -> None:
    """The sync's scan (in this process and split over workers) sees the same stale-temp
    candidates as the sweep's own walk, so the sweep can ride on it (live.py); it also names
    folders named like one, which the sweep then leaves (store.py `clean_stale_temps`)."""
    root = tmp_path / "v"
    (root / ".rmh").mkdir(parents=True)
    _tree(root, seed)
    store = Store(root)
    want = sorted(p for p in store._hidden_files() if ".rmh-tmp-" in p)
    for workers in (1, 2):
        listings = store.listings({}, workers)
        got = sorted(f"{x.folder}/{t}" if x.folder else t for x in listings for t in x.temps)
        assert [p for p in got if not (root / p).is_dir() or (root / p).is_symlink()] == want


def _attachments_by_walk(store: Store) -> list[str]:
    """`attachments` as it was before its per-folder cache: the whole walk, every time."""
    return sorted(rel for rel, entry in store._walk()
                  if not entry.name.startswith(".") and not entry.name.lower().endswith(".md")
                  and entry.is_file(follow_symlinks=False))


def _changes(root: Path, rng: random.Random) -> list[tuple[str, Callable[[], object]]]:
    """Changes to attachment files and folders, each in some folder of the tree."""
    dirs = sorted(p for p in root.rglob("*") if p.is_dir() and not p.is_symlink()
                  and ".rmh" not in p.parts and not any(s.startswith(".") for s in
                                                        p.relative_to(root).parts))
    d, f = rng.choice(dirs), root / rng.choice(_attachments_by_walk(Store(root)))
    return [("add a file", lambda: (d / "new.pdf").write_bytes(b"%PDF")),
            ("remove a file", lambda: f.unlink()),
            ("rename a file", lambda: (d / "new.pdf").rename(d / "renamed.pdf")),
            ("a file replaced by a folder", lambda: _then((d / "renamed.pdf").unlink,
                                                           (d / "renamed.pdf").mkdir)),
            ("a file in the new folder", lambda: (d / "renamed.pdf" / "in.png").write_bytes(b"x")),
            ("a folder renamed", lambda: (d / "renamed.pdf").rename(d / "moved")),
            ("a folder removed", lambda: _then((d / "moved" / "in.png").unlink,
                                               (d / "moved").rmdir))]


def _then(*steps: Callable[[], object]) -> None:
    for step in steps:
        step()


@pytest.mark.parametrize("seed", range(4))
def test_attachments_are_listed_again_only_where_a_folder_changed(
        tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """`attachments` (what `read`, `links`, a move and doctor resolve attachment links
    against) lists a folder again only when its ctime changed: an unchanged vault is stat'ed,
    not listed (it listed every folder at each call: `read` of a note with an embed cost
    16 ms CPU at 2x10^4 notes); every change still shows."""
    store = _store(tmp_path, seed)
    real_clock, real_scandir = folders._clock, os.scandir
    monkeypatch.setattr(folders, "_clock", lambda: real_clock() + 10 * folders.SETTLED_NS)
    listed: list[object] = []

    def scandir(path: Any) -> Any:
        listed.append(path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)

    def attachments() -> tuple[list[str], int]:
        listed.clear()
        got = store.attachments()
        return got, len(listed)

    first, folders_n = attachments()
    assert first == _attachments_by_walk(store) and folders_n > 2
    assert attachments() == (first, 0)  # nothing changed: every folder stat'ed, none listed
    for what, change in _changes(tmp_path / "v", random.Random(seed)):
        time.sleep(0.05)  # past the file-system clock tick of the last listing
        change()
        got, n = attachments()
        assert got == _attachments_by_walk(store), what
        assert 1 <= n <= 2, what  # the folder changed (and a folder made in it)
