"""vault/storage/state_anchor.py: `.rmh` held open from the open, so no state file follows a
`.rmh` swapped afterwards (SBX12, session 37), and the swap refused with a clear error."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import pytest

from vault import Vault
from vault.errors import NotAVault, PathRefused
from vault.storage.store import Store


def _swap(root: Path, to: Path) -> None:
    os.rename(root / ".rmh", root / ".rmh-away")
    os.symlink(to, root / ".rmh")


def _restore(root: Path) -> None:
    os.unlink(root / ".rmh")
    os.rename(root / ".rmh-away", root / ".rmh")


def test_state_paths_reach_the_folder_opened_and_the_check_refuses_the_swap(
        tmp_path: Path) -> None:
    root, outside = tmp_path / "v", tmp_path / "outside"
    (root / ".rmh").mkdir(parents=True)
    outside.mkdir()
    store = Store(root)
    _swap(root, outside)
    with pytest.raises(PathRefused, match=r"\.rmh.*took its place while open"):
        store.check_root()
    (store.state / "probe.bin").write_bytes(b"x")  # what a save made after the check does
    with pytest.raises(PathRefused, match="leaves the vault"), store.lock.held():
        pass
    assert os.listdir(outside) == []
    assert sorted(os.listdir(root / ".rmh-away")) == ["probe.bin", "write.lock"]
    os.unlink(root / ".rmh")
    with pytest.raises(PathRefused, match="moved or removed while open"):
        store.check_root()
    os.rename(root / ".rmh-away", root / ".rmh")
    store.check_root()  # back: serves again
    store.anchor.close()


def test_a_vault_closed_while_swapped_saves_nothing_outside(tmp_path: Path) -> None:
    """The close saves the stat columns the writes patched (live.py): before, into the
    folder the symlink named."""
    root, outside = tmp_path / "v", tmp_path / "outside"
    outside.mkdir()
    vault = Vault.init(root)
    vault.write("one.md", "# One\nfirst [[two]]\n")
    vault.search("first", k=3)
    vault.write("two.md", "# Two\nsecond\n")
    _swap(root, outside)
    with pytest.raises(PathRefused, match=r"\.rmh"):
        vault.search("second", k=3)
    vault.close()
    assert os.listdir(outside) == []
    _restore(root)
    with Vault.open(root) as again:
        assert [h.note for h in again.search("second", k=3).hits][:1] == ["two.md"]


def test_a_state_folder_of_a_third_user_is_refused(tmp_path: Path) -> None:
    """As root over a vault of rmhtest's, a `.rmh` owned by neither (rmh-sandbox) is no
    folder of the vault's: refused at the open."""
    if os.geteuid() != 0:
        pytest.skip("needs root to give files to other users")
    try:
        owner, third = pwd.getpwnam("rmhtest"), pwd.getpwnam("rmh-sandbox")
    except KeyError:
        pytest.skip("no users rmhtest and rmh-sandbox (.ci/run creates them)")
    root = tmp_path / "v"
    (root / ".rmh").mkdir(parents=True)
    os.chown(root, owner.pw_uid, owner.pw_gid)
    os.chown(root / ".rmh", third.pw_uid, third.pw_gid)
    with pytest.raises(PathRefused, match="neither the vault's owner"):
        Store(root)
    os.chown(root / ".rmh", owner.pw_uid, owner.pw_gid)
    Store(root).anchor.close()


def test_sqlite_sent_through_a_swap_at_its_connect_writes_nothing_there(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite resolves the held folder's name itself: a swap between that and its open is
    the window (held_sqlite.py). Made deterministic by handing SQLite the name as it was
    before the swap (the one stand-in: the moment of the swap); the outside folder holds a
    database of that name, which is opened and refused before any read or write of it."""
    import sqlite3

    from vault.storage.migrations import connect

    root, outside = tmp_path / "v", tmp_path / "outside"
    (root / ".rmh").mkdir(parents=True)
    outside.mkdir()
    theirs = sqlite3.connect(outside / "index.sqlite")
    theirs.execute("PRAGMA journal_mode = WAL")
    theirs.execute("CREATE TABLE precious (x)")
    theirs.execute("INSERT INTO precious VALUES (1)")
    theirs.commit()
    theirs.close()
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in outside.iterdir()}
    store = Store(root, held=True)
    _connect_through_a_swap(root, outside, store, monkeypatch)
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in outside.iterdir()} == before
    conn = connect(store.state / "index.sqlite")  # the held folder's own, made there
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    assert (root / ".rmh-away" / "index.sqlite").stat().st_size > 0
    store.anchor.close()


def test_a_swap_at_a_second_connect_is_refused_beside_a_held_connection(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same swap while this process already holds a connection to the held folder's
    file (so one of its descriptors is that file's, and another descriptor, the probe's
    listing's, comes and goes): the new descriptor to the outside file is still found
    (held_sqlite.py reads the names of only the descriptors new since the connect began)."""
    import sqlite3

    from vault.storage.migrations import connect

    root, outside = tmp_path / "v", tmp_path / "outside"
    (root / ".rmh").mkdir(parents=True)
    outside.mkdir()
    sqlite3.connect(outside / "index.sqlite").close()  # an empty file
    store = Store(root, held=True)
    first = connect(store.state / "index.sqlite")
    first.execute("CREATE TABLE t (x)")
    first.commit()
    _connect_through_a_swap(root, outside, store, monkeypatch)
    first.close()
    assert (outside / "index.sqlite").stat().st_size == 0
    store.anchor.close()


def test_the_lock_of_a_held_folder_renamed_away_makes_none_at_its_name(tmp_path: Path) -> None:
    """The write lock taken while the held `.rmh` is renamed away (between the call's check
    and its lock) is taken in the held folder; before (HOUSE38), it made an empty `.rmh` at
    the name first, a folder that then stood in the held one's place. A vault root gone
    meanwhile is still NotAVault."""
    root = tmp_path / "v"
    (root / ".rmh").mkdir(parents=True)
    store = Store(root, held=True)
    os.rename(root / ".rmh", root / ".rmh-away")
    with store.lock.held():
        pass
    assert not (root / ".rmh").exists()  # main: an empty folder made there
    os.rename(root / ".rmh-away", root / ".rmh")
    os.rename(root, tmp_path / "gone")
    with pytest.raises(NotAVault, match="moved or removed while open"):
        store.lock.held().__enter__()
    store.anchor.close()


def _connect_through_a_swap(root: Path, outside: Path, store: Store,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    """`.rmh` swapped for a symlink to `outside` at the moment of the connect (SQLite handed
    the name as it was before the swap): the connect is refused (PathRefused)."""
    from vault.storage.migrations import connect

    stale = str(root / ".rmh")
    _swap(root, outside)
    monkeypatch.setattr(os.path, "realpath", lambda p: stale)
    with pytest.raises(PathRefused, match=r"\.rmh/index\.sqlite.*swapped"):
        connect(store.state / "index.sqlite")
    monkeypatch.undo()
