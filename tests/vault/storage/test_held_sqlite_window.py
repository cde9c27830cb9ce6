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
