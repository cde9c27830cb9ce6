"""Pair two runs of bench/bench_learning.py or bench/bench_learning_agents.py made with
`--per-question` on the same questions (e.g. a learned channel on, and off): the paired
bootstrap 95 % interval (10,000 draws) of the difference of their learned MRR (and recall@5,
where stored), per agent or pooled, related and unrelated.

Run:  python -m bench.pair_runs ON.json OFF.json
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.metrics import paired_bootstrap


def groups(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """{name: {"related": summary, "unrelated": summary}} of either benchmark's report."""
    if "agents" in doc:
        return {a["agent"]: a for a in doc["agents"]}
    return {"locomo": doc}


def pair(on: dict[str, Any], off: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, a in sorted(groups(on).items()):
        b = groups(off)[name]
        for split in ("related", "unrelated"):
            x, y = a[split], b[split]
            if "on" not in x or "on" not in y or len(x["on"]) != len(y["on"]):
                raise SystemExit(f"{name} {split}: run both with --per-question")
            row = {"n": len(x["on"]), "mrr": paired_bootstrap(x["on"], y["on"], draws=10_000)}
            if "r5" in x and "r5" in y:
                row["recall5"] = paired_bootstrap(x["r5"], y["r5"], draws=10_000)
            out[f"{name} {split}"] = row
    return out


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    docs = [json.loads(Path(p).read_text(encoding="utf-8")) for p in args]
    print(json.dumps(pair(docs[0], docs[1]), indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
