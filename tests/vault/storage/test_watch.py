"""Change notification: queries after external edits see them without scanning the folder."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from vault import Vault
from vault.storage.folders import Listing

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux")


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    v = Vault.init(tmp_path / "v")
    v.write("a/Alpha.md", "alpha links [[Beta]]\n")
    v.write("Beta.md", "beta text\n")
    assert v.watcher is not None
    return v


def forbid_scan(vault: Vault, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    scans: list[int] = []
    real = vault.store.listings

    def counted(*args: Any, **kwargs: Any) -> list[Listing]:
        scans.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(vault.store, "listings", counted)
    return scans


def test_file_edits_are_seen_without_a_scan(vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    scans = forbid_scan(vault, monkeypatch)
    assert vault.search("beta").hits
    (vault.root / "Beta.md").write_text("a zebra now\n", encoding="utf-8")
    assert vault.search("zebra").hits[0].note == "Beta.md"
    (vault.root / "a" / "Gamma.md").write_text("gamma zebra\n", encoding="utf-8")
    assert {h.note for h in vault.search("gamma").hits} == {"a/Gamma.md"}
    beta = vault.resolve("Beta")
    os.rename(vault.root / "Beta.md", vault.root / "a" / "Delta.md")
    assert vault.resolve("Delta") == beta  # renamed outside rmh: same id
    (vault.root / "a" / "Gamma.md").unlink()
    assert [h.note for h in vault.search("gamma").hits] == []
    assert scans == []


def test_an_edit_with_its_mtime_set_back_is_seen(vault: Vault) -> None:
    """Same size, written in place, atime and mtime restored (touch -r, rsync -t): only the
    ctime says it changed (storage/folders.py)."""
    path = vault.root / "Beta.md"
    assert vault.search("beta").hits and not vault.search("hippo").hits
    st = path.stat()
    with open(path, "r+b") as fh:
        fh.write(b"hippo tex")  # "beta text" -> "hippo tex", same size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    assert vault.search("hippo").hits[0].note == "Beta.md"


def test_new_and_removed_folders_trigger_a_full_scan(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    scans = forbid_scan(vault, monkeypatch)
    (vault.root / "new").mkdir()
    (vault.root / "new" / "Epsilon.md").write_text("epsilon\n", encoding="utf-8")
    assert vault.search("epsilon").hits[0].note == "new/Epsilon.md"
    assert len(scans) == 1
    # The new folder is watched from now on: an edit inside it needs no scan.
    (vault.root / "new" / "Epsilon.md").write_text("epsilon walrus\n", encoding="utf-8")
    assert vault.search("walrus").hits[0].note == "new/Epsilon.md"
    assert len(scans) == 1
    shutil.rmtree(vault.root / "new")
    assert vault.search("walrus").hits == ()
    assert len(scans) == 2


def test_our_own_writes_need_no_scan(vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    scans = forbid_scan(vault, monkeypatch)
    vault.write("Omega", "omega\n")
    vault.move("Omega", "a/Omega")
    assert vault.search("omega").hits[0].note == "a/Omega.md"
    assert scans == []


def test_without_watching_every_query_scans(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    v = Vault.init(tmp_path / "w", watch=False)
    assert v.watcher is None
    scans = forbid_scan(v, monkeypatch)
    v.search("anything")
    v.search("anything")
    assert len(scans) == 2
