"""What an agent and a person touch first: CLI start-up, first MCP response, MCP result size.

Side by side on the same machine, each the median of N fresh processes:
- `python -c "import numpy"` (the yardstick: goal is each command within 3x of it);
- `rmh --help`, `rmh --version`, `rmh read NOTE` (on the demo vault);
- first MCP response: wall time from launching `rmh serve --no-dense` to the `initialize`
  result, and to the first `tools/call search` result, through the official MCP SDK client;
- the size of a k = 5 MCP `search` on the demo vault: characters of the text content the
  model reads (goal <= 1,200), and of the structured content.

    python bench/bench_startup.py [--runs 7]

The demo vault is written by `rmh demo` into a temporary folder. Prints one JSON document.

    python bench/bench_startup.py --cold VAULT [--query Q] [--no-dense] [--runs 5]

measures instead a cold search against a warm one on VAULT, in the same run (issue 33 item 5):
cold is `rmh --vault VAULT search Q --json` in a new process each time (wall seconds and the
child's CPU seconds, user + system, from its rusage); warm is the same search answered by one
`rmh serve` through the official MCP client after its first search (each later call's wall
seconds). Medians of `--runs`; `hits_identical` says whether every cold run returned the same
notes with the same scores, and the warm server the same (its scores rounded to 4 places).
    python bench/bench_startup.py --cold VAULT --after-edit [--runs 5]

alternates instead: a note edited outside rmh, a new `rmh search` (the first process after
the edit), another (steady); medians of each kind's CPU seconds.
The vault is searched as it is: run `rmh index` on it first (a pending embedding is filled by
the first cold run, outside the timed runs: one untimed cold run comes first).
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

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import TextContent

REPO = Path(__file__).resolve().parents[1]
QUERY = "who owns the billing service?"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env["PYTHONPATH"] = str(REPO)
    return env


def timed(argv: list[str], runs: int) -> float:
    """Median wall seconds of `runs` fresh processes running `argv` (output discarded)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, env=_env(), cwd=REPO, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True, timeout=300)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


async def first_mcp(vault: Path) -> dict[str, Any]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "harness", "--vault", str(vault), "serve", "--no-dense"],
        env=_env(), cwd=str(REPO))
    start = time.perf_counter()
    async with stdio_client(params) as (rx, tx), ClientSession(rx, tx) as session:
        await session.initialize()
        initialized = time.perf_counter() - start
        result = await session.call_tool("search", {"query": QUERY, "k": 5})
        searched = time.perf_counter() - start
    block = result.content[0]
    assert isinstance(block, TextContent)
    return {"initialize_s": initialized, "first_search_s": searched,
            "search_k5_text_chars": len(block.text),
            "search_k5_structured_chars": len(json.dumps(result.structured_content,
                                                         ensure_ascii=False)),
            "hits": len((result.structured_content or {}).get("hits", []))}


def cold_search(argv: list[str]) -> tuple[float, float, list[Any]]:
    """Wall and CPU seconds (user + system) of one new process running `argv`, and the
    (note, score) pairs of its JSON hits."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(argv, env=_env(), cwd=REPO, capture_output=True, check=True,
                         timeout=900)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    hits = [(h["note"], h["score"]) for h in json.loads(out.stdout)["hits"]]
    return wall, cpu, hits


async def warm_search(vault: Path, query: str, dense: bool, runs: int
                      ) -> tuple[float, list[float], list[Any]]:
    """One `rmh serve`: its first search's wall seconds, then `runs` more (warm), and the
    (note, score) pairs of the last."""
    args = ["-m", "harness", "--vault", str(vault), "serve"] + ([] if dense else ["--no-dense"])
    params = StdioServerParameters(command=sys.executable, args=args, env=_env(),
                                   cwd=str(REPO))
    times: list[float] = []
    async with stdio_client(params) as (rx, tx), ClientSession(rx, tx) as session:
        await session.initialize()
        for _ in range(runs + 1):
            start = time.perf_counter()
            result = await session.call_tool("search", {"query": query, "k": 10})
            times.append(time.perf_counter() - start)
    hits = [(h["note"], h["score"]) for h in (result.structured_content or {}).get("hits", [])]
    return times[0], times[1:], hits


def edit_outside(vault: Path, k: int) -> None:
    """Append a line to the k-th note (in path order, cycling) as an editor would."""
    notes = sorted(p for p in vault.rglob("*.md") if ".rmh" not in p.parts)
    with open(notes[(k * 7919) % len(notes)], "a", encoding="utf-8") as fh:
        fh.write(f"\nedited outside rmh ({k})\n")


def after_edit(vault: Path, query: str, dense: bool, runs: int) -> dict[str, Any]:
    """`runs` rounds of: one note edited outside rmh, a new `rmh search` process (the first
    after the edit: it syncs it), then another (the state is unchanged: steady)."""
    argv = [sys.executable, "-m", "harness", "--vault", str(vault), "search", query, "--json"]
    argv += [] if dense else ["--no-dense"]
    cold_search(argv)  # untimed, as in cold_vs_warm
    first, steady = [], []
    for k in range(runs):
        edit_outside(vault, k)
        first.append(cold_search(argv))
        steady.append(cold_search(argv))
    return {
        "vault": str(vault), "query": query, "dense": dense, "runs": runs,
        "after_edit_cpu_s": round(statistics.median(c[1] for c in first), 3),
        "steady_cpu_s": round(statistics.median(c[1] for c in steady), 3),
        "after_edit_cpu_runs_s": [round(c[1], 3) for c in first],
        "steady_cpu_runs_s": [round(c[1], 3) for c in steady],
        "after_edit_wall_s": round(statistics.median(c[0] for c in first), 3),
        # the process after an edit answers as the next one on the same state does
        "hits_identical": all(a[2] == b[2] for a, b in zip(first, steady, strict=True)),
    }


def cold_vs_warm(vault: Path, query: str, dense: bool, runs: int) -> dict[str, Any]:
    argv = [sys.executable, "-m", "harness", "--vault", str(vault), "search", query, "--json"]
    argv += [] if dense else ["--no-dense"]
    cold_search(argv)  # untimed: fills what `rmh index` left pending, warms the page cache
    cold = [cold_search(argv) for _ in range(runs)]
    first, warm, warm_hits = anyio.run(warm_search, vault, query, dense, runs)
    return {
        "vault": str(vault), "query": query, "dense": dense, "runs": runs,
        "cold_wall_s": round(statistics.median(c[0] for c in cold), 3),
        "cold_cpu_s": round(statistics.median(c[1] for c in cold), 3),
        "cold_wall_runs_s": [round(c[0], 3) for c in cold],
        "warm_wall_s": round(statistics.median(warm), 4),
        "serve_first_search_s": round(first, 3),
        # the cold runs' JSON exactly; the server's MCP hits carry scores to 4 places
        "hits_identical": bool(warm_hits) and all(c[2] == cold[0][2] for c in cold)
        and [(n, round(x, 4)) for n, x in cold[0][2]] == warm_hits,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--cold", type=Path, metavar="VAULT", help="cold against warm search")
    ap.add_argument("--query", default="cardiac progenitor cells develop into heart muscle")
    ap.add_argument("--no-dense", action="store_true")
    ap.add_argument("--after-edit", action="store_true",
                    help="with --cold: each cold process is the first after an outside edit")
    args = ap.parse_args()
    if args.cold is not None and args.after_edit:
        print(json.dumps(after_edit(args.cold, args.query, not args.no_dense, args.runs),
                         indent=1))
        return 0
    if args.cold is not None:
        print(json.dumps(cold_vs_warm(args.cold, args.query, not args.no_dense, args.runs),
                         indent=1))
        return 0
    rmh = [sys.executable, "-m", "harness"]
    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "demo"
        subprocess.run([*rmh, "demo", str(vault), "--no-dense"], env=_env(), cwd=REPO,
                       check=True, stdout=subprocess.DEVNULL, timeout=300)
        numpy = timed([sys.executable, "-c", "import numpy"], args.runs)
        rows = {
            "python -c 'import numpy'": numpy,
            "rmh --help": timed([*rmh, "--help"], args.runs),
            "rmh --version": timed([*rmh, "--version"], args.runs),
            "rmh read": timed([*rmh, "--vault", str(vault), "read", "Alice"], args.runs),
        }
        mcp = [anyio.run(first_mcp, vault) for _ in range(max(3, args.runs // 2))]
    report: dict[str, Any] = {
        "runs": args.runs,
        "startup_s": {k: round(v, 3) for k, v in rows.items()},
        "startup_x_numpy": {k: round(v / numpy, 2) for k, v in rows.items()},
        "mcp": {key: round(statistics.median(m[key] for m in mcp), 3)
                for key in ("initialize_s", "first_search_s")},
        "mcp_search_k5": {key: mcp[0][key] for key in
                          ("search_k5_text_chars", "search_k5_structured_chars", "hits")},
    }
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
