"""folder_view.py `_hidden_files` (the stale-temp sweep's walk): exactly the hidden
non-folder entries of the folders `_walk` lists, on generated trees with hidden folders,
folder symlinks, dotted folder names and temp-named folders."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

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
