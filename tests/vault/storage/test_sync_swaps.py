"""vault/storage/sync.py: an entry that is no note any more (a FIFO, a symlink, its folder a
symlink) leaves the index as a fresh build leaves it out, and one that
changes kind between the scan and the read (an editor, a sync tool, `ln -sf`) costs that
entry, never the whole sync and the command around it. Only an unreadable folder keeps the
rows below it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from vault.storage.index import Index
from vault.storage.store import Store
from vault.storage.sync import sync

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[tuple[Store, Index, Path]]:
    root = tmp_path / "v"
    root.mkdir()
    for name in ("a", "b", "c"):
        (root / f"{name}.md").write_text(f"note {name}\n")
    (tmp_path / "outside.md").write_text("outside the vault\n")
    index = Index.open(tmp_path / "index.sqlite")
    yield Store(root), index, root
    index.close()


def test_a_note_swapped_for_a_link_out_of_the_vault_while_read_is_no_failed_sync(
        vault: tuple[Store, Index, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """The scan saw `b.md` a regular file; by its read it was a symlink leaving the vault:
    PathRefused ended the sync, so `rmh search`, `read` or `write` of any other note failed
    ("path refused: 'b.md'") for as long as the swaps went on. It is an error of that entry,
    read again by the next sync, as a note that vanished meanwhile is."""
    store, index, root = vault
    sync(store, index)
    (root / "a.md").write_text("note a, edited\n")
    (root / "b.md").write_text("note b, edited\n")
    original = Store.read_text

    def swapped(self: Store, path: str) -> str:
        if path == "b.md" and not (root / "b.md").is_symlink():
            (root / "b.md").unlink()
            (root / "b.md").symlink_to(root.parent / "outside.md")
        return original(self, path)

    monkeypatch.setattr(Store, "read_text", swapped)
    report = sync(store, index)
    assert [e for e in report.errors if e.startswith("b.md: ")], report.errors
    row = index.note(index.note_id("a.md") or -1)
    assert row is not None and row.body == "note a, edited\n"  # the rest was synced
    monkeypatch.setattr(Store, "read_text", original)
    report = sync(store, index)  # the next sync sees the link as the scan does: skipped
    assert "b.md" in report.skipped and index.note_id("b.md") is None


def _fresh(store: Store, tmp_path: Path) -> list[tuple[str, str]]:
    index = Index.open(tmp_path / "fresh.sqlite")
    try:
        sync(store, index)
        return sorted((r.path, r.content_hash) for r in index.notes())
    finally:
        index.close()


@pytest.mark.parametrize("kind", ["fifo", "link-out", "link-in", "dangling", "folder-link-out"])
def test_a_note_that_is_no_note_any_more_leaves_the_index(
        vault: tuple[Store, Index, Path], tmp_path: Path, kind: str) -> None:
    """A note replaced by what the scan skips (a FIFO, a symlink; its folder by a symlink) kept
    its row: `rmh search` still found the text it held, though a fresh index of the same files
    has no such note. (An unreadable folder keeps the rows below it: its mode can change back;
    a note grown over the size cap keeps its row until it shrinks: test_folders.py.)"""
    store, index, root = vault
    (root / "sub").mkdir()
    (root / "sub" / "s.md").write_text("note s\n")
    sync(store, index)
    victim = root / ("sub" if kind == "folder-link-out" else "b.md")
    if kind == "folder-link-out":
        victim.rename(tmp_path / "moved-out")
        victim.symlink_to(tmp_path / "moved-out")
    else:
        victim.unlink()
        if kind == "fifo":
            os.mkfifo(victim)
        else:
            victim.symlink_to({"link-out": str(tmp_path / "outside.md"), "link-in": "a.md",
                               "dangling": "nowhere.md"}[kind])
    report = sync(store, index)
    assert report.errors == []
    assert sorted((r.path, r.content_hash) for r in index.notes()) == _fresh(store, tmp_path)
    assert index.note_id("sub/s.md" if kind == "folder-link-out" else "b.md") is None


def test_the_notes_below_an_unreadable_folder_keep_their_rows(
        vault: tuple[Store, Index, Path], tmp_path: Path) -> None:
    store, index, root = vault
    (root / "locked").mkdir()
    (root / "locked" / "n.md").write_text("note n\n")
    sync(store, index)
    index.close()  # the fixture's close again is harmless
    code = ("import sys; from pathlib import Path; from vault.storage.index import Index;"
            "from vault.storage.store import Store; from vault.storage.sync import sync;"
            "i = Index.open(Path(sys.argv[2])); r = sync(Store(sys.argv[1]), i);"
            "print(sorted(r.skipped.values()), i.note_id('locked/n.md') is not None)")
    cmd = [sys.executable, "-c", code, str(root), str(tmp_path / "index.sqlite")]
    if os.geteuid() == 0:  # root ignores permissions unless its capabilities are dropped
        setpriv = shutil.which("setpriv")
        assert setpriv, "root needs util-linux setpriv to test unreadable folders"
        cmd = [setpriv, "--bounding-set", "-all", "--inh-caps", "-all", *cmd]
    (root / "locked").chmod(0)
    try:
        out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
    finally:
        (root / "locked").chmod(0o755)
    assert out.stdout.strip() == "['unreadable folder (EACCES)'] True", out.stderr
