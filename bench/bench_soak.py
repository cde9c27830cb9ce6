"""Soak test of `rmh serve`: many searches and execs over one connection.

Measures, on one long-lived server process: RSS after warm-up vs at the end, of the server and
of its whole process tree (sandbox worker included); each must grow <= 10 %. And p50/p95
latency of the first and last windows of searches and execs (p95 must be stable: last
window's p95 within 1.5x the first's + 2 ms). Requests are sent one at a time, so latency is
the full round trip through the pipe.

    python bench/bench_soak.py [--searches 10000] [--execs 1000] [--notes 300] [--dense]

Prints one JSON document; exit code 1 when a bound is violated.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
_VOCAB = ("auth rewrite monday tuesday lunch hiking project atlas budget review deploy "
         "kernel sandbox memory vault search index graph link note meeting travel paris "
         "berlin design plan risk owner team alpha beta gamma delta release bug fix")
WORDS = tuple(_VOCAB.split())


def make_vault(root: Path, notes: int, rng: random.Random) -> None:
    (root / ".rmh").mkdir(parents=True)
    for i in range(notes):
        body = " ".join(rng.choice(WORDS) for _ in range(60))
        links = " ".join(f"[[Note {rng.randrange(notes)}]]" for _ in range(3))
        (root / f"Note {i}.md").write_text(f"# Note {i}\n{body}\n{links}\n", encoding="utf-8")


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1])
    return 0


def tree_rss_kb(pid: int) -> int:
    """RSS of `pid` and all its descendants (the sandbox worker runs under the server)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    total, todo = 0, [pid]
    while todo:
        cur = todo.pop()
        try:
            total += rss_kb(cur)
        except OSError:
            continue
        todo.extend(children.get(cur, []))
    return total


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def window(values: list[float]) -> dict[str, float]:
    return {"p50_ms": round(1000 * percentile(values, 0.5), 3),
            "p95_ms": round(1000 * percentile(values, 0.95), 3)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--searches", type=int, default=10_000)
    ap.add_argument("--execs", type=int, default=1_000)
    ap.add_argument("--notes", type=int, default=300)
    ap.add_argument("--dense", action="store_true", help="load the ONNX embedder too")
    args = ap.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "vault"
        make_vault(vault, args.notes, rng)
        env = dict(os.environ, PYTHONPATH=str(REPO))
        cmd = [sys.executable, "-m", "harness", "--vault", str(vault), "serve"]
        if not args.dense:
            cmd.append("--no-dense")
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, cwd=REPO, env=env)
        assert proc.stdin is not None and proc.stdout is not None
        next_id = 0

        def call(method: str, params: dict[str, Any]) -> float:
            nonlocal next_id
            next_id += 1
            frame = json.dumps({"jsonrpc": "2.0", "method": method, "params": params,
                                "id": next_id}).encode() + b"\n"
            t0 = time.perf_counter()
            proc.stdin.write(frame)  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
            reply = json.loads(proc.stdout.readline())  # type: ignore[union-attr]
            dt = time.perf_counter() - t0
            if reply.get("id") != next_id or "error" in reply:
                raise SystemExit(f"bad reply: {reply}")
            return dt

        def query() -> str:
            return " ".join(rng.choice(WORDS) for _ in range(3))

        # warm-up: build the index, start the REPL worker, fill caches
        for _ in range(200):
            call("vault.search", {"query": query(), "k": 10})
        for _ in range(20):
            call("repl.exec", {"code": "x = search('auth')\nlen(x)"})
        rss_start = rss_kb(proc.pid)
        tree_start = tree_rss_kb(proc.pid)
        t_start = time.perf_counter()
        search_t: list[float] = []
        exec_t: list[float] = []
        per_exec = max(1, args.searches // max(1, args.execs))
        for i in range(args.searches):
            search_t.append(call("vault.search", {"query": query(), "k": 10}))
            if i % per_exec == 0 and len(exec_t) < args.execs:
                code = f"hits = search({query()!r}, k=5)\n[h['note'] for h in hits][:2]"
                exec_t.append(call("repl.exec", {"code": code}))
        while len(exec_t) < args.execs:
            exec_t.append(call("repl.exec", {"code": "1 + 1"}))
        wall = time.perf_counter() - t_start
        rss_end = rss_kb(proc.pid)
        tree_end = tree_rss_kb(proc.pid)
        proc.stdin.close()
        exit_code = proc.wait(timeout=60)
    w_s = max(1, len(search_t) // 10)
    w_e = max(1, len(exec_t) // 10)
    first_s, last_s = window(search_t[:w_s]), window(search_t[-w_s:])
    first_e, last_e = window(exec_t[:w_e]), window(exec_t[-w_e:])
    growth = (rss_end - rss_start) / rss_start
    stable = all(last["p95_ms"] <= 1.5 * first["p95_ms"] + 2.0
                 for first, last in ((first_s, last_s), (first_e, last_e)))
    report = {
        "searches": len(search_t), "execs": len(exec_t), "notes": args.notes,
        "dense": args.dense, "wall_s": round(wall, 1), "exit_code": exit_code,
        "rss_start_kb": rss_start, "rss_end_kb": rss_end, "rss_growth": round(growth, 4),
        "tree_rss_start_kb": tree_start, "tree_rss_end_kb": tree_end,
        "tree_rss_growth": round((tree_end - tree_start) / tree_start, 4),
        "search": {"all": window(search_t), "first_10pct": first_s, "last_10pct": last_s},
        "exec": {"all": window(exec_t), "first_10pct": first_e, "last_10pct": last_e},
        "ok": growth <= 0.10 and tree_end <= 1.10 * tree_start and stable and exit_code == 0,
    }
    print(json.dumps(report, indent=1))
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
