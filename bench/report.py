"""What the benchmark scripts print: latency percentiles, process memory, markdown tables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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


def print_table(rows: Sequence[Mapping[str, object]]) -> None:
    """Rows as a markdown table, the first row's keys as the header, floats to 3 places."""
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for r in rows:
        print("| " + " | ".join(f"{r[k]:.3f}" if isinstance(r[k], float) else str(r[k])
                                for k in keys) + " |")
