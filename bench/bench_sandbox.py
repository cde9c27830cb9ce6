"""Sandbox latency: warm trivial-cell round trip, cold start, host-function round trip.

Run from the repository root: `python -m bench.bench_sandbox [--tier TIER] [-n N] [--json]`.
Targets (BENCHMARKS.md): warm p50 <= 5 ms, cold start <= 500 ms, host call p50 <= 1 ms.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from bench.bench_soak import percentile
from sandbox import HostFunction, Sandbox, SandboxConfig, probe


def run(tier: str, n: int) -> dict[str, object]:
    functions = {"ping": HostFunction(lambda x=None: x, "Echo.", "(x=None)")}
    config = SandboxConfig(tier=tier, lint=False)
    cold: list[float] = []
    for _ in range(5):
        t0 = time.perf_counter()
        sb = Sandbox(config, functions)
        first = sb.exec("1 + 1")
        cold.append(time.perf_counter() - t0)
        assert first.ok
        sb.close()
    with Sandbox(config, functions) as sb:
        warm = []
        for _ in range(n):
            t0 = time.perf_counter()
            sb.exec("1 + 1")
            warm.append(time.perf_counter() - t0)
        calls = 1000
        res = sb.exec(f"import time\nt0 = time.perf_counter()\nfor i in range({calls}):\n"
                      "    ping(i)\n(time.perf_counter() - t0)")
        assert res.ok and res.value is not None
        per_call = float(res.value) / calls
    return {
        "tier": tier,
        "warm_p50_ms": round(statistics.median(warm) * 1e3, 3),
        "warm_p95_ms": round(percentile(warm, 0.95) * 1e3, 3),
        "cold_start_p50_ms": round(statistics.median(cold) * 1e3, 1),
        "host_call_mean_ms": round(per_call * 1e3, 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tier", default="all", help="a tier name, or all available")
    parser.add_argument("-n", type=int, default=300, help="warm round trips")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    tiers = probe().available if args.tier == "all" else (args.tier,)
    rows = [run(t, args.n) for t in tiers]
    if args.json:
        print(json.dumps(rows))
    else:
        for row in rows:
            print("  ".join(f"{k}={v}" for k, v in row.items()))


if __name__ == "__main__":
    main()
