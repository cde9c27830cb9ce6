"""SQLite's `-wal` and `-shm` of a held `.rmh` file, opened by name at the first read
(STORE13, session 38). `connect_held` checked the database file SQLite opened, then read once
(which opens `NAME-wal` and `NAME-shm` by the text SQLite resolved at the connect), then
checked those. `.rmh` swapped for a symlink between the connect and that read: main handed the
connection out unrefused, and its first use failed with "disk I/O error" (SQLite found its
file moved); in the race probe (`STORE13_ledger_loop.py.txt`, real processes) an empty `-wal`
and a `-shm` were made in the folder the symlink named. Now the name is checked to still be
the held folder right before the read: PathRefused, nothing made there. The swap is made
inside the real first check, the moment it stands for. (A `-shm` SQLite opens after its own
moved-file check still can reach it: NOTES-STORE13.md.)"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import pytest

from vault import PathRefused, Vault
from vault.storage import held_sqlite, migrations
from vault.storage.state_anchor import StateAnchor


def test_a_swap_after_the_connect_is_refused_before_sqlite_opens_its_wal_there(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, outside = tmp_path / "v", tmp_path / "outside"
    outside.mkdir()
    Vault.init(root).close()  # index.sqlite in WAL mode, its -wal removed at the close
    anchor = StateAnchor(str(root.resolve()), ".rmh", required=True)
    real_check = held_sqlite._check
    calls: list[int] = []

    def check(*args: Any) -> None:  # the real check, then `.rmh` swapped (the first time)
        real_check(*args)
        if not calls:
            os.rename(root / ".rmh", root / ".rmh-away")
            os.symlink(outside, root / ".rmh")
        calls.append(1)

    monkeypatch.setattr(held_sqlite, "_check", check)
    with pytest.raises(PathRefused):
        migrations.connect(Path(anchor.path) / "index.sqlite").close()
    assert sorted(os.listdir(outside)) == []  # main: index.sqlite-shm, index.sqlite-wal
    anchor.close()


def test_the_id_floor_never_reads_the_ledger_of_a_folder_swapped_in(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The index's id floor read `learned.sqlite` by the name `resolve` gave: `.rmh` swapped
    for a symlink to another vault's between that and SQLite's open, it read that vault's
    ledger (its highest note id, and a `-shm` made there)."""
    import sqlite3

    from vault.learning.ledger import Ledger
    from vault.learning.read_only import highest_note_id

    root, other = tmp_path / "v", tmp_path / "other"
    for folder, note in ((root, 5), (other, 1000)):
        Vault.init(folder).close()
        Ledger.open(folder / ".rmh" / "learned.sqlite", clock=lambda: 0.0).close()
        with contextlib.closing(sqlite3.connect(folder / ".rmh" / "learned.sqlite")) as conn, conn:
            conn.execute("INSERT INTO gone(note) VALUES (?)", (note,))  # a note it knew
    anchor = StateAnchor(str(root.resolve()), ".rmh", required=True)
    real_connect = sqlite3.connect

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:  # swapped at the open
        if not os.path.islink(root / ".rmh"):
            os.rename(root / ".rmh", root / ".rmh-away")
            os.symlink(other / ".rmh", root / ".rmh")
        conn: sqlite3.Connection = real_connect(*args, **kwargs)
        return conn

    before = sorted(os.listdir(other / ".rmh"))
    monkeypatch.setattr(sqlite3, "connect", connect)
    try:
        floor: int | None = highest_note_id(Path(anchor.path) / "learned.sqlite")
    except PathRefused:
        floor = None
    monkeypatch.undo()
    assert floor in (None, highest_note_id(root / ".rmh-away" / "learned.sqlite"))
    assert sorted(os.listdir(other / ".rmh")) == before  # main: learned.sqlite-shm made there
    anchor.close()
