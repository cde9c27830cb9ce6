"""A deleted index.sqlite, rebuilt, must not give what was learned about one note to another
(storage/id_floor.py): its ids start above every id the learning log holds."""

from __future__ import annotations

import random
import sqlite3
import time
from pathlib import Path

import pytest

from vault import LEDGER_FILE, Ledger, Vault
from vault.learning.read_only import highest_note_id


def _open(root: Path) -> Vault:
    usage = Ledger.open(Vault.state_dir(root, create=True) / LEDGER_FILE, clock=time.time)
    return Vault.open(root, usage=usage)


@pytest.mark.parametrize("seed", range(6))
def test_a_rebuilt_index_gives_no_note_another_notes_learned_ids(tmp_path: Path,
                                                                 seed: int) -> None:
    rng = random.Random(seed)
    root = tmp_path / "v"
    Vault.state_dir(root, create=True)
    names = [f"n{i:02d}" for i in range(rng.randint(2, 9))]
    rng.shuffle(names)  # ids are handed out in writing order; a rebuild takes path order
    with _open(root) as v:
        for name in names:
            v.write(name, f"{name} kiwi {rng.choice(['pear', 'fig'])}\n")
        for name in rng.sample(names, rng.randint(1, len(names))):
            v.read(name, session=f"s{rng.randint(0, 2)}")
        old = {name: v.resolve(name) for name in names}
    learned = highest_note_id(Vault.state_dir(root) / LEDGER_FILE)
    assert learned == max(old.values())
    (Vault.state_dir(root) / "index.sqlite").unlink()
    if rng.random() < 0.5:  # a command without learning may be the one that rebuilds it
        Vault.open(root).close()
    with _open(root) as v:
        new = {name: v.resolve(name) for name in names}
    assert min(new.values()) > learned, (old, new)


def test_the_floor_of_a_missing_or_damaged_log_is_zero(tmp_path: Path) -> None:
    assert highest_note_id(tmp_path / LEDGER_FILE) == 0
    (tmp_path / LEDGER_FILE).write_bytes(b"not a database" * 100)
    assert highest_note_id(tmp_path / LEDGER_FILE) == 0
    root = tmp_path / "v"
    Vault.state_dir(root, create=True)
    (Vault.state_dir(root) / LEDGER_FILE).write_bytes(b"\0" * 4096)
    (root / "a.md").write_text("a\n", encoding="utf-8")
    with Vault.open(root) as v:  # a damaged log does not stop the index: ids from 1
        assert v.resolve("a") == 1


@pytest.mark.parametrize("huge", [2**62, 2**63 - 2**20, 2**63 - 2, 2**63 - 1])
def test_a_log_holding_an_id_no_index_reaches_leaves_ids_to_hand_out(tmp_path: Path,
                                                                      huge: int) -> None:
    root = tmp_path / "v"
    Vault.state_dir(root, create=True)
    names = [f"n{i}" for i in range(3)]
    with _open(root) as v:
        for name in names:
            v.write(name, f"{name} kiwi\n")
            v.read(name, session="s")
        learned = max(v.resolve(name) for name in names)
    ledger = sqlite3.connect(Vault.state_dir(root) / LEDGER_FILE)  # damaged or edited
    with ledger:
        ledger.execute("INSERT INTO gone(note) VALUES (?)", (huge,))
    ledger.close()
    assert highest_note_id(Vault.state_dir(root) / LEDGER_FILE) == learned
    (Vault.state_dir(root) / "index.sqlite").unlink()
    with _open(root) as v:  # was: "disk full" (AUTOINCREMENT past 2**63 - 1), no index
        for i in range(3):
            v.write(f"new{i}", "fig\n")
        ids = [v.resolve(name) for name in [*names, "new0", "new1", "new2"]]
    assert min(ids) > learned and max(ids) < 2**62 and len(set(ids)) == len(ids)
