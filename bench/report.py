"""What the benchmark scripts print: latency percentiles, process memory and CPU, markdown
tables."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np


def latency_ms(seconds: Sequence[float], digits: int | None = None) -> dict[str, float]:
    """p50, p95 and max of timings given in seconds, in milliseconds (rounded to `digits`)."""
    a = np.asarray(seconds) * 1000
    out = {"p50_ms": float(np.percentile(a, 50)), "p95_ms": float(np.percentile(a, 95)),
           "max_ms": float(a.max())}
    return out if digits is None else {k: round(v, digits) for k, v in out.items()}


def status_kb(field: str) -> int:
    """A field of /proc/self/status in kB (VmRSS now, VmHWM the peak); 0 where absent."""
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def children_cpu() -> dict[int, tuple[float, float]]:
    """(user, system) CPU seconds of each live child process, by pid (Linux /proc: the scan's
    worker processes are children); empty elsewhere."""
    out: dict[int, tuple[float, float]] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for task in Path("/proc/self/task").glob("*/children"):
        for pid in task.read_text().split():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            out[int(pid)] = (int(fields[11]) / tick, int(fields[12]) / tick)
    return out


def print_table(rows: Sequence[Mapping[str, object]]) -> None:
    """Rows as a markdown table, the first row's keys as the header, floats to 3 places."""
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for r in rows:
        print("| " + " | ".join(f"{r[k]:.3f}" if isinstance(r[k], float) else str(r[k])
                                for k in keys) + " |")
