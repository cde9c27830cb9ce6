"""Racing rmh processes (issue 27 item 1): the compare-and-swap table.

    python -m bench.bench_race [--rounds 1000] [--edits 1000]

Prints two markdown tables: two `rmh serve` processes racing `vault.edit` append with the same
expected_hash (rounds, acknowledged, conflicts, lost, anomalies), and rmh editing a note while
an editor saves it atomically in a loop, at three save rates (bench/race.py)."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from .race import make_vault, race_editor, race_edits


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=1000)
    ap.add_argument("--edits", type=int, default=1000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        race = race_edits(make_vault(base / "race"), args.rounds)
        print("| rounds | acknowledged | edit_conflict | lost | anomalies |")
        print("|---|---|---|---|---|")
        print(race.row(), flush=True)
        print()
        print("| editor pause (max) | rmh edits | acknowledged | edit_conflict | editor saves "
              "| editor saves overwritten |")
        print("|---|---|---|---|---|---|")
        for pause in (0.0, 0.002, 0.01):
            res = race_editor(make_vault(base / f"editor-{pause}"), args.edits, pause)
            print(f"| {pause * 1000:g} ms {res.row()}", flush=True)


if __name__ == "__main__":
    main()
