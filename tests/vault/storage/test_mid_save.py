"""leases.mid_save: how a file no lease can be asked of (another user's note) is judged
(test_edit_inplace_other_owner.py races real processes as two users through it)."""

from __future__ import annotations

import os
from pathlib import Path

from vault.storage import folders
from vault.storage.leases import EMPTY_QUIET_NS, QUIET_NS, mid_save


def test_an_empty_or_just_changed_file_may_be_mid_save_a_quiet_one_not(tmp_path: Path) -> None:
    note = tmp_path / "n.md"
    note.write_text("")
    assert mid_save(os.stat(note))  # just emptied: an in-place save truncates first
    old = folders.now() - 10 * QUIET_NS
    os.utime(note, ns=(old, old))
    assert mid_save(os.stat(note))  # empty: the save's write may be stalled a while
    old = folders.now() - 2 * EMPTY_QUIET_NS
    os.utime(note, ns=(old, old))
    assert not mid_save(os.stat(note))  # empty that long: a note left empty, not a save
    note.write_text("# N\nhalf of a save")
    assert mid_save(os.stat(note))  # written this instant: its next write may follow
    os.utime(note, ns=(old, old))
    assert not mid_save(os.stat(note))
    edge = folders.now() - QUIET_NS + QUIET_NS // 2
    os.utime(note, ns=(edge, edge))
    assert mid_save(os.stat(note))
