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
"""

from __future__ import annotations

import argparse
import json
import os
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
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
