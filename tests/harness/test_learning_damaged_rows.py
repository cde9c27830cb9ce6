"""A learned.sqlite row that does not decode, through the real CLI (vault damage.py): a
damaged derived row is rewritten from the log by the next command, whatever it is; a damaged
event makes `rmh doctor` report (not fail) and `rmh replay` a one-line ledger_error. Before
session 30 each was a traceback from every command, `rmh replay` (the remedy) included."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from .test_cli_notes import make_vault, rmh

pytestmark = pytest.mark.slow


def _damage(root: Path, statement: str) -> None:
    conn = sqlite3.connect(root / ".rmh" / "learned.sqlite")
    conn.executescript("DROP TRIGGER IF EXISTS events_no_update; " + statement + ";")
    conn.close()


def test_damaged_rows_are_rewritten_and_a_damaged_event_is_reported(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    v = ("--vault", str(root))
    assert rmh(*v, "search", "billing", "--no-dense", "--session", "one").returncode == 0
    assert rmh(*v, "read", "Billing", "--session", "one").returncode == 0
    assert rmh(*v, "end-session", "one").returncode == 0
    before = json.loads(rmh(*v, "learning", "Billing", "--json").stdout)
    _damage(root, "UPDATE session SET started = 'yesterday'; UPDATE note SET q = 'high'")
    searched = rmh(*v, "search", "billing", "--no-dense", "--json")
    assert searched.returncode == 0 and "Traceback" not in searched.stderr, searched.stderr
    after = json.loads(rmh(*v, "learning", "Billing", "--json").stdout)
    assert (after["q"], after["rewards"]) == (before["q"], before["rewards"])  # not 'high'

    _damage(root, "UPDATE events SET data = '{\"shown\": [[' WHERE kind = 'search'")
    doctor = rmh(*v, "doctor", "--json")
    assert doctor.returncode == 0, doctor.stderr
    learning = json.loads(doctor.stdout)["learning"]
    assert learning["replay_matches"] is False and "is damaged" in learning["replay_error"]
    assert any("does not replay" in w for w in learning["warnings"])
    replay = rmh(*v, "replay", "--json")
    assert replay.returncode != 0 and "Traceback" not in replay.stderr
    assert len(replay.stderr.strip().splitlines()) == 1 and "is damaged" in replay.stderr
