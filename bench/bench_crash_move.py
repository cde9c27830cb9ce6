"""`rmh move` of a note with 300 referrers killed at >= 200 points (issue 27 item 2).

    python -m bench.bench_crash_move [--referrers 300] [--points 200] [--cli]

Finds the move's file-operation count (an uninterrupted run under RMH_FAULT_AFTER_OPS that is
never reached), then kills it after N operations for `points` values of N spread evenly over
1..total (the first and last ten always included), opens the vault again (`rmh doctor
--json`) and prints a markdown table: kill point, what the next open did, the state (old or
new; anything else is a failure), dangling links, pending intents (bench/crash_move.py). By
default the killed process runs `Vault.move` alone and the next open is in this process
(`kill_at(light=True)`: the same store, journal and fault seam, a third of the start-up
cost); `--cli` runs the real `rmh move` and `rmh doctor --json` at every point."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from .crash_move import kill_at, make_template, reference


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--referrers", type=int, default=300)
    ap.add_argument("--points", type=int, default=200)
    ap.add_argument("--cli", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        template = make_template(base / "template", args.referrers)
        before, after = reference(template, base / "reference")
        total = kill_at(template, base / "work", 10**9, before, after)
        assert not total.killed and total.state == "new", total
        ops = 3 * (args.referrers + 1) + 8  # an upper bound; the run below finds the end
        step = max(1, ops // args.points)
        wanted = sorted({*range(1, 11), *range(1, ops + 1, step), *range(ops - 12, ops + 20)})
        print("| kill after op | process | next open | state | dangling links | "
              "pending intents |")
        print("|---|---|---|---|---|---|")
        bad = killed = 0
        for n in wanted:
            point = kill_at(template, base / "work", n, before, after, light=not args.cli)
            print(point.row(), flush=True)
            killed += point.killed
            bad += point.state not in ("old", "new") or point.dangling > 0 or point.pending > 0
            if not point.killed:
                break
        print(f"\n{killed} kill points, {bad} bad")


if __name__ == "__main__":
    main()
