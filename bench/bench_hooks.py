"""Hook latency: each hook is a new `rmh hook ...` process, so its time includes start-up.

On an initialised vault (e.g. `python -m bench.gen_vault /tmp/v10k --notes 10000 && rmh
--vault /tmp/v10k init --no-dense`), fresh processes fed the client's JSON on stdin, timed
from launch to exit (wall) with their CPU (user + sys):

- `session-start (first)`: builds the hooks' FTS5 index (once per vault);
- `session-start`: the brief from that index;
- `prompt`: the default prompt hook (the hooks' index, no vault opened);
- `prompt (engine, no dense)`: `[hooks] engine = true`: the vault opened and the full search
  engine prepared in the process, as `rmh search --no-dense` does (`--engine-runs` runs);
- `prompt (engine, dense)`: the same with `dense = true` (only with `--dense`; the vault's
  embeddings must exist: `rmh index`);
- `session-end`: a 6-turn Claude Code transcript ingested, then the same again (nothing new).

    python bench/bench_hooks.py --vault /tmp/v10k [--runs 20] [--engine-runs 3] [--dense]

Prints one JSON document (p50, p95, max wall seconds and mean CPU seconds per step).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PROMPTS = (
    "who reviews the billing invoices migration?", "what broke the cache cluster on Monday?",
    "how do we deploy the search ranking?", "budget for the marathon travel",
    "which team owns the auth tokens?", "latency of the vector index",
    "kernel scheduler outage review", "espresso camera lens recipe",
)


def _run(vault: Path, event: str, payload: dict[str, Any],
         config: Path | None = None) -> tuple[float, float]:
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env["PYTHONPATH"] = str(REPO)
    if config is not None:
        env["RMH_CONFIG"] = str(config)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "harness", "--vault", str(vault), "hook", event],
                         input=json.dumps(payload), capture_output=True, text=True, env=env,
                         timeout=900)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0 or "Error" in out.stderr:
        raise SystemExit(f"hook {event} failed: {out.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _stats(samples: list[tuple[float, float]]) -> dict[str, float]:
    walls = sorted(w for w, _ in samples)
    p95 = walls[min(len(walls) - 1, round(0.95 * (len(walls) - 1)))]
    return {"runs": len(walls), "p50_s": round(statistics.median(walls), 3),
            "p95_s": round(p95, 3), "max_s": round(walls[-1], 3),
            "cpu_mean_s": round(statistics.mean(c for _, c in samples), 3)}


def _transcript(path: Path) -> None:
    """A 6-turn Claude Code session JSONL (written here, copied from nowhere)."""
    said = [("user", "I'm trying to get the nightly build to pass on the CI server."),
            ("assistant", "Try clearing the build cache first."),
            ("user", "I cleared the build cache first but the build still failed."),
            ("assistant", "The runner upgraded the compiler. Pin the compiler to version 12."),
            ("user", "Pinning the compiler to version 12 worked, the build passes now."),
            ("assistant", "Lesson learned: always pin the compiler version in CI.")]
    lines = [json.dumps({"type": role, "sessionId": "bench-session", "uuid": f"u{i}",
                         "timestamp": f"2025-03-04T09:0{i}:00Z", "cwd": "/repo",
                         "message": {"role": role, "content": text}})
             for i, (role, text) in enumerate(said)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vault", required=True, type=Path)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--engine-runs", type=int, default=3)
    ap.add_argument("--dense", action="store_true")
    args = ap.parse_args(argv)
    vault: Path = args.vault.absolute()
    report: dict[str, Any] = {"vault": str(vault)}
    index = vault / ".rmh" / "hooks.sqlite"
    if index.exists():
        index.unlink()
    base = {"session_id": "bench", "cwd": str(vault / "billing")}
    report["session-start (first)"] = _stats([_run(vault, "session-start", base)])
    report["session-start"] = _stats([_run(vault, "session-start", base)
                                      for _ in range(args.runs)])
    report["prompt"] = _stats([_run(vault, "prompt", {**base, "prompt": PROMPTS[i % 8]})
                               for i in range(args.runs)])
    with tempfile.TemporaryDirectory() as tmp:
        for name, dense in (("prompt (engine, no dense)", False),
                            ("prompt (engine, dense)", True)):
            if dense and not args.dense:
                continue
            cfg = Path(tmp) / f"{name[-8:].strip(' ,()')}.toml"
            cfg.write_text(f"[hooks]\nengine = true\ndense = {'true' if dense else 'false'}\n",
                           encoding="utf-8")
            report[name] = _stats([_run(vault, "prompt", {**base, "prompt": PROMPTS[i % 8]},
                                        cfg) for i in range(args.engine_runs)])
        transcript = Path(tmp) / "bench-session.jsonl"
        _transcript(transcript)
        end = {**base, "session_id": "bench-session", "transcript_path": str(transcript)}
        report["session-end (new transcript)"] = _stats([_run(vault, "session-end", end)])
        report["session-end (unchanged)"] = _stats([_run(vault, "session-end", end)])
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
