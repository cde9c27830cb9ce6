"""vault/storage/state_folder.py: `.rmh` found or made, and never outside the vault."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from vault.errors import NotAVault, PathRefused
from vault.storage.state_folder import foreign, state_folder


def test_made_with_create_and_found_without(tmp_path: Path) -> None:
    root = tmp_path / "v"
    with pytest.raises(NotAVault, match="no such folder"):
        state_folder(root, ".rmh")
    root.mkdir()
    with pytest.raises(NotAVault, match=r"no \.rmh folder"):
        state_folder(root, ".rmh")
    assert state_folder(root, ".rmh", create=True) == root / ".rmh"
    assert state_folder(root, ".rmh") == root / ".rmh"


@pytest.mark.parametrize("create", [False, True])
def test_a_link_leaving_the_vault_is_refused_before_anything_is_made(
        tmp_path: Path, create: bool) -> None:
    root, outside = tmp_path / "v", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / ".rmh").symlink_to(outside)
    with pytest.raises(PathRefused, match="leaves the vault"):
        state_folder(root, ".rmh", create=create)
    (root / ".rmh").unlink()
    (root / ".rmh").symlink_to(outside / "gone")  # dangling: mkdir would raise EEXIST
    with pytest.raises(PathRefused, match="leaves the vault"):
        state_folder(root, ".rmh", create=create)
    assert list(outside.iterdir()) == []


def test_a_link_inside_the_vault_is_followed(tmp_path: Path) -> None:
    root = tmp_path / "v"
    (root / "state").mkdir(parents=True)
    (root / ".rmh").symlink_to(root / "state")
    assert state_folder(root, ".rmh") == root / ".rmh"


@pytest.mark.parametrize("create", [False, True])
def test_a_file_in_its_place_is_no_vault_said_as_such(tmp_path: Path, create: bool) -> None:
    root = tmp_path / "v"
    root.mkdir()
    (root / ".rmh").write_text("x")
    with pytest.raises(NotAVault, match=r"\.rmh is not a folder"):
        state_folder(root, ".rmh", create=create)
    assert (root / ".rmh").read_text() == "x"


@pytest.mark.parametrize("made", ["write.lock", "index.sqlite", "learned.sqlite",
                                  "dense-rows-ab12.npy"])
def test_a_file_of_rmh_made_by_another_process_while_it_looks_is_no_foreign_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, made: str) -> None:
    """Processes opening a fresh vault at once (tests/vault/storage/test_concurrent_open.py,
    which failed so once in CI): the other process makes its first file in the empty `.rmh`
    after this one found none of rmh's names and before it lists the folder. The file is made
    for real at that moment (the listing is the seam); the folder is still the vault's."""
    root = tmp_path / "v"
    (root / ".rmh").mkdir(parents=True)
    real_scandir = os.scandir

    def scandir_after_the_other_made_its_file(path: Any) -> Any:
        (Path(path) / made).write_bytes(b"")
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir_after_the_other_made_its_file)
    assert foreign(root / ".rmh") is None
    assert state_folder(root, ".rmh") == root / ".rmh"

