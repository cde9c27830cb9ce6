"""The days `rmh lifecycle` and `rmh conversation note` read off the clock are the clock's UTC
day, whatever TZ says: the same instant gives the same bytes (README "same bytes out"). Both
used the local wall clock (date.today(), datetime.now()): TZ changed the lifecycle decisions'
`today` and a working note's date, and a pinned time.time did not pin them."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.forks import run_cli, run_python

# instants whose UTC day differs from the local day in one of the zones below
INSTANTS = [datetime(2024, 5, 1, 23, 30, tzinfo=UTC), datetime(2024, 12, 31, 0, 15, tzinfo=UTC),
            datetime(2025, 2, 28, 11, 59, tzinfo=UTC)]
ZONES = ["UTC", "Pacific/Kiritimati", "Pacific/Pago_Pago", "Asia/Kolkata"]
REPO = Path(__file__).resolve().parents[3]


def rmh(vault: Path, now: float, tz: str, *argv: str) -> str:
    """stdout of `rmh --vault VAULT ARGV` in a process whose time.time is `now`, under `tz`
    (a real process forked from the shared server, which reads TZ again: tests/forks.py)."""
    pin = (f"import sys, time; time.time = lambda: {now!r}; "
           "from harness.entry import main; sys.exit(main(sys.argv[1:]))")
    env = {**os.environ, "TZ": tz, "PYTHONPATH": str(REPO)}
    done = run_python(pin, ["--vault", str(vault), *argv], env=env, cwd=REPO)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture()
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    root.mkdir()
    (root / "a.md").write_text("A note.\n", encoding="utf-8")
    done = run_cli(["init", "--no-dense", str(root)], env={**os.environ, "PYTHONPATH": str(REPO)},
                   cwd=REPO)
    assert done.returncode == 0, done.stderr
    return root


@pytest.mark.parametrize("instant", INSTANTS, ids=lambda d: d.isoformat())
def test_lifecycle_today_is_the_clocks_utc_day(vault: Path, instant: datetime) -> None:
    days = {tz: json.loads(rmh(vault, instant.timestamp(), tz, "lifecycle", "--json"))["today"]
            for tz in ZONES}
    assert set(days.values()) == {instant.date().isoformat()}, days


@pytest.mark.parametrize("instant", INSTANTS, ids=lambda d: d.isoformat())
def test_working_note_date_is_the_clocks_utc_time(vault: Path, instant: datetime) -> None:
    texts = {}
    for n, tz in enumerate(ZONES):
        path = json.loads(rmh(vault, instant.timestamp(), tz, "conversation", "note", "--json",
                              "c1", "s1", f"scratch {n}", "Met Ana at the harbour."))["note"]
        texts[tz] = (vault / path).read_text(encoding="utf-8").replace(f"scratch {n}", "T")
    assert len(set(texts.values())) == 1, texts
    stamp = instant.replace(tzinfo=None).isoformat()
    assert stamp[:16] in texts["UTC"], texts["UTC"]
