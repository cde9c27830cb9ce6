"""Warmth under a pinned clock: the same reads at the same gaps give the same warmth at any
epoch (before 1970, at it, far ahead), twice over, and a clock stepped back never warms a
note. Before, a note first warmed before 1970 kept its warmth undecayed until 1970 (its stamp
started at 0.0 and only moved forward)."""

from __future__ import annotations

import random
from pathlib import Path

from vault import Ledger

DAY = 86400.0
EPOCHS = (-3e9, -1e9, -DAY, 0.0, 1e9, 2.5e11)


def _warmth(tmp: Path, name: str, times: list[float], probes: list[float]) -> list[float]:
    clock = {"now": times[0]}
    led = Ledger.open(tmp / f"{name}.sqlite", clock=lambda: clock["now"])
    try:
        for t in times:
            clock["now"] = t
            led.on_read(None, 1)
        return [float(led.warmth([1], now=p)[0]) for p in probes]
    finally:
        led.close()


def test_warmth_is_the_same_at_every_epoch(tmp_path: Path) -> None:
    rng = random.Random(3)
    for k in range(6):
        gaps = sorted(rng.uniform(-5, 40) * DAY for _ in range(rng.randint(1, 4)))
        probes = sorted(rng.uniform(1, 60) * DAY for _ in range(5))
        seen = []
        for e, epoch in enumerate(EPOCHS):
            got = _warmth(tmp_path, f"{k}-{e}", [epoch + g for g in gaps],
                          [epoch + gaps[-1] + p for p in probes])
            again = _warmth(tmp_path, f"{k}-{e}-again", [epoch + g for g in gaps],
                            [epoch + gaps[-1] + p for p in probes])
            assert got == again
            seen.append(got)
        for got in seen[1:]:
            assert all(abs(a - b) <= 1e-9 for a, b in zip(got, seen[0], strict=True)), seen
        assert seen[0] == sorted(seen[0], reverse=True) and seen[0][-1] < seen[0][0]


def test_a_clock_stepped_back_never_warms_a_note(tmp_path: Path) -> None:
    for e, epoch in enumerate(EPOCHS):
        times = [epoch + 10 * DAY, epoch]  # the second read's clock stepped back ten days
        probes = [epoch + d * DAY for d in (0, 10, 20, 40)]
        got = _warmth(tmp_path, str(e), times, probes)
        assert got == sorted(got, reverse=True)
        assert got[1] > got[3] > 0.0
