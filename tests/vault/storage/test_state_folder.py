"""vault/storage/state_folder.py: `.rmh` found or made, and never outside the vault."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault.errors import NotAVault, PathRefused
from vault.storage.state_folder import state_folder


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
