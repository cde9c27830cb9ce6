"""What an agent pays, in characters, for rmh's MCP answers: `tools/list` and k = 5 searches.

    python -m bench.bench_wire [--questions N] [--out FILE.json]

Over the official MCP SDK client (the `mcp` package) against a real `rmh serve --no-dense`,
on two vaults built here: the `rmh demo` vault (9 notes) and the bench/knowledge.py vault
(seed 15: ~600 generated notes of people, organisations, places and works), each queried with
its own questions (the demo's six, the first N knowledge questions). Sizes, in characters:
- "text": a result's text content (the mirror of structuredContent the MCP spec asks for);
- "structured": structuredContent as compact JSON (the server's own serialisation);
- "wire": the bytes of the server's whole response frame for the same call (both copies and
  the JSON-RPC envelope), read from a second `rmh serve` driven with raw frames.
Reported per vault: median and max over the questions, and tools/list's wire size.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from . import knowledge

REPO = Path(__file__).resolve().parents[1]
DEMO_QUESTIONS = ("who owns billing", "who owns the billing service?", "what broke on Monday",
                  "who rotated the certificate", "how are retries made safe",
                  "when are invoices generated")


def compact(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def knowledge_vault(root: Path) -> list[str]:
    """The knowledge haystack as markdown files under `root`; its question texts."""
    hay = knowledge.generate(15)
    corpus = hay.corpus
    for path, body in zip(corpus.paths, corpus.bodies, strict=True):
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body, encoding="utf-8")
    return [q.text for q in hay.questions]


def rmh(*args: str) -> None:
    """Run `rmh ARGS` (as a user would; bench imports nothing of the harness)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-m", "harness", *args], check=True, capture_output=True,
                   env=env, timeout=1800)


def raw_frames(root: Path, questions: list[str]) -> list[int]:
    """The length of each k = 5 search's response line, from a raw stdio session."""
    frames = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}}]
    frames += [{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                "params": {"name": "search", "arguments": {"query": q, "k": 5}}}
               for i, q in enumerate(questions)]
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "--vault", str(root), "serve", "--no-dense"],
        input="".join(json.dumps(f) + "\n" for f in frames), capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=1800, check=True)
    sizes = {json.loads(line)["id"]: len(line) for line in proc.stdout.splitlines()}
    return [sizes[i + 1] for i in range(len(questions))]


async def measure(root: Path, questions: list[str]) -> dict[str, Any]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "harness", "--vault", str(root), "serve",
                                      "--no-dense"],
        env={**{k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")},
             "PYTHONPATH": str(REPO)}, cwd=str(REPO))
    rows: list[dict[str, int]] = []
    async with stdio_client(params) as (rx, tx), ClientSession(rx, tx) as session:
        await session.initialize()
        tools = await session.list_tools()
        tools_wire = compact(tools.model_dump(mode="json", by_alias=True, exclude_none=True))
        for q in questions:
            result = await session.call_tool("search", {"query": q, "k": 5})
            text = "".join(getattr(b, "text", "") for b in result.content)
            rows.append({"text": len(text), "structured": compact(result.structured_content)})
    for row, frame in zip(rows, raw_frames(root, questions), strict=True):
        row["wire"] = frame
    out: dict[str, Any] = {"tools_list_wire": tools_wire, "tools": len(tools.tools),
                           "questions": len(rows)}
    for key in ("text", "structured", "wire"):
        values = [r[key] for r in rows]
        out[key] = {"median": statistics.median(values), "max": max(values)}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=50)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        demo = Path(tmp) / "demo"
        rmh("demo", str(demo), "--no-dense")
        report["demo"] = anyio.run(measure, demo, list(DEMO_QUESTIONS))
        kv = Path(tmp) / "knowledge"
        questions = knowledge_vault(kv)[: args.questions]
        rmh("init", str(kv), "--no-dense")
        report["knowledge"] = anyio.run(measure, kv, questions)
        report["knowledge"]["notes"] = sum(1 for _ in kv.rglob("*.md"))
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
