"""`Vault.doctor` lists rmh's hidden leftovers (storage/leftovers.py) from its full sync's
scan, which already reads every folder (SyncReport.temps now holds kept saves too), instead
of walking every folder of the vault once more (on main: one more walk, `_hidden_files`,
per doctor). The list is the walk's, also after `settle_leftovers` (a read-only vault, which
does not scan, still walks: core.py `doctor`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vault import Vault
from vault.storage.folder_view import FolderView
from vault.storage.leftovers import find

DEAD = 2**22 + 12345  # above the default pid_max: no process has it


def _planted(root: Path) -> dict[str, bytes]:
    (root / "sub").mkdir()
    (root / "kiln.md").write_text("# Kiln\nThe kiln fires at 1200 C.\n")
    (root / "sub" / "glaze.md").write_text("# Glaze\nCeladon.\n")
    planted = {
        f".kiln.md.rmh-kept-{DEAD}-0": b"# Kiln\nThe editor's first save.\n",
        f".kiln.md.rmh-kept-{DEAD}-1": (root / "kiln.md").read_bytes(),
        f"sub/.gone.md.rmh-kept-{DEAD}-2": b"# Gone\nA save of a note deleted since.\n",
        f"sub/.glaze.md.rmh-tmp-aside-{DEAD}-3": b"# Glaze\nAn older save.\n",
        f".kiln.md.rmh-tmp-aside-{os.getpid()}-4": b"# Kiln\nIn flight.\n",  # live: never
        ".kiln.md.swp": b"an editor's own swap file: not rmh's\n",
    }
    for rel, data in planted.items():
        (root / rel).write_bytes(data)
    return planted


def _walks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the folder walks for hidden files (the real walk runs; each call counted)."""
    walks: list[int] = []
    real = FolderView._hidden_files

    def counted(self: FolderView) -> object:
        walks.append(1)
        return real(self)

    monkeypatch.setattr(FolderView, "_hidden_files", counted)
    return walks


def test_doctor_lists_leftovers_without_walking_the_folders_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    Vault.init(tmp_path).close()
    _planted(tmp_path)
    with Vault.open(tmp_path, watch=False) as v:
        walked = [left.to_json() for left in find(v.store, lambda pid: pid == os.getpid())]
        walks = _walks(monkeypatch)
        got = v.doctor()["leftovers"]
        assert got == walked and len(got) == 4
        assert walks == []  # main: [1], the leftovers' own walk
        settled = v.doctor(settle_leftovers=True)
        assert settled["leftovers"] == []
        assert settled["settled"]["removed"] == [f".kiln.md.rmh-kept-{DEAD}-1"]
        assert walks == []
    assert sorted(p.name for p in tmp_path.rglob(".*.rmh-*")) == [
        f".kiln.md.rmh-tmp-aside-{os.getpid()}-4"]

