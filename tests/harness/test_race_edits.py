"""Compare-and-swap across processes (issue 27 item 1), through real `rmh serve` processes.

Two servers read one note (one hash) and append with that hash at the same moment: exactly one
is acknowledged per round, the other gets edit_conflict (-32013) with current_hash, and every
acknowledged append is in the file (before the vault's write lock: 53 of 60 rounds lost one).
An editor saving the note atomically in a tight loop while rmh edits it: the store's identity
re-check right before its rename catches its saves (bench/bench_race.py: the long runs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.race import make_vault, race_editor, race_edits

pytestmark = pytest.mark.slow


def test_two_servers_racing_one_expected_hash_lose_no_acknowledged_append(
        tmp_path: Path) -> None:
    result = race_edits(make_vault(tmp_path / "v"), 100)
    assert result.rounds == 100
    assert result.anomalies == 0, result
    assert result.acknowledged == 100 and result.conflicts == 100
    assert result.lost == 0, result


def test_an_editor_saving_atomically_is_not_overwritten_by_rmh(tmp_path: Path) -> None:
    result = race_editor(make_vault(tmp_path / "v"), 200, pause_s=0.0)
    assert result.rmh_edits == 200 and result.editor_saves > 200  # they did overlap
    assert result.rmh_acknowledged + result.rmh_conflicts == 200
    assert result.rmh_conflicts > 0  # the editor's saves were seen and refused
    # What remains is the stat-to-rename gap the editor does not share a lock across
    # (README "Storage"): a save landing there is overwritten. Measured 0 in the CI size
    # (bench/bench_race.py: the longer runs); 2 allows for a loaded machine's preemption.
    assert result.editor_lost <= 2, result
