"""A read-only vault's learned state (vault ReadOnlyUsage): read from a real learned.sqlite
as its writer left it, giving the same learned vectors as the writer's ledger; recording
nothing; refusing an erasure; and None (learning-free) for a file only a writer could
migrate or rebuild."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from vault import LEDGER_FILE, LearningParams, Ledger, ReadOnlyVault, open_read_only_ledger


def shown(*ids: int) -> list[tuple[int, int, float]]:
    return [(n, r, 1.0 / np.log2(r + 2)) for r, n in enumerate(ids)]


def written(path: Path) -> None:
    led = Ledger.open(path, clock=lambda: 1_000_000.0)
    led.start_session("s", 1_000_000.0)
    led.on_search("s", "who owns billing", shown(10, 11, 12))
    led.on_read("s", 11)
    led.on_write("s", 99, True, [11])
    assert led.end_session("s", 1_000_005.0)
    led.close()


def digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}


def test_the_writers_learned_state_read_only(tmp_path: Path) -> None:
    path = tmp_path / LEDGER_FILE
    written(path)
    before = digest(tmp_path)
    usage = open_read_only_ledger(path, clock=lambda: 1_000_100.0)
    assert usage is not None
    writer = Ledger.open(path, clock=lambda: 1_000_100.0)
    ids = [10, 11, 12, 404]
    for as_of in (None, 1_000_050.0):
        mine, theirs = usage.learned(ids, as_of), writer.learned(ids, as_of)
        assert mine.prior.tolist() == theirs.prior.tolist()
        assert mine.warmth.tolist() == theirs.warmth.tolist()
    assert mine.prior[1] > 0.0  # the cited note's learned prior is used
    writer.close()
    after_writer = digest(tmp_path)
    usage.on_search("s2", "billing", shown(11))
    usage.on_read("s2", 11)
    usage.on_write("s2", 5, True, [11])
    usage.on_delete(11)
    with pytest.raises(ReadOnlyVault):
        usage.redact([11], ["billing"])
    usage.close()
    assert digest(tmp_path) == after_writer  # nothing recorded
    assert set(before) <= set(after_writer)


def test_a_file_only_a_writer_could_rebuild_serves_none(tmp_path: Path) -> None:
    path = tmp_path / LEDGER_FILE
    written(path)
    other = replace(LearningParams(), stale_session_s=LearningParams().stale_session_s + 1)
    assert open_read_only_ledger(path, clock=lambda: 0.0, params=other) is None
    assert open_read_only_ledger(tmp_path / "missing.sqlite", clock=lambda: 0.0) is None
    assert not (tmp_path / "missing.sqlite").exists()
