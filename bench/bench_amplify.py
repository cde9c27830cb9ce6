"""The supervisor under two denials of service (issue 26 items 4 and 5), through real commands.

`amplify`: `rmh serve` on a vault holding a note of 1,000 "x"; a cell tries the amplifying
edit (`replace` of "x" by 300,000 characters, expected_count=1000: a 300-million-character
note) and the issue's 9,000 x 1,000. Reports the server's peak RSS (VmHWM) before and after
the cell, the error types, and whether the note is unchanged.

`deadline`: a generated vault of `--notes` notes (default 20,000; its index is built once by
a warm-up command), then `--runs` times `rmh exec --deadline 2 -c "len(search('hello'))"`: the
cold search builds its in-memory structures for many seconds. Reports the cell's duration,
the time from the command's start to its answer and to its exit (median and max).

`next`: `rmh serve` on the same generated vault; `--runs` times: cell 1 `search('hello')` with
a 2 s deadline (abandoned while the cold build runs), then at once cell 2
`read('n00001')['note']` (deadline 600 s). Reports cell 2's duration and outcome: how long
the next cell's host call is held by the abandoned search. Every run starts cold: the lexical
structures a finished search saved (`.rmh/lexical-index.bin`) are removed before it.

Run from the repository root: `python -m bench.bench_amplify [amplify|deadline|next|both]
[--repo PATH] [--runs N] [--notes N] [--json]`; `--repo` runs another checkout's code (the
code before a change) with this script.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

AMPLIFY_CELL = """
out = []
for text in ('y' * 300_000, 'y' * 9_000):
    try:
        edit('Big', 'replace', find='x', text=text, expected_count=1000)
        out.append('written')
    except Exception as exc:
        out.append(type(exc).__name__)
out
"""


def _env(repo: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(repo)
    return env


def _vm_kb(pid: int, field: str) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(ln for ln in status.splitlines() if ln.startswith(field)).split()[1])


def amplify(repo: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "v"
        (root / ".rmh").mkdir(parents=True)
        (root / "Big.md").write_text("x" * 1000, "utf-8")
        proc = subprocess.Popen(
            [sys.executable, "-m", "harness", "--vault", str(root), "serve", "--no-dense"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            cwd=repo, env=_env(repo))
        assert proc.stdin is not None and proc.stdout is not None

        def call(rid: str, code: str) -> dict[str, Any]:
            frame = {"jsonrpc": "2.0", "id": rid, "method": "repl.exec",
                     "params": {"code": code, "deadline_s": 120}}
            proc.stdin.write(json.dumps(frame).encode() + b"\n")  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
            answer: dict[str, Any] = json.loads(proc.stdout.readline())  # type: ignore[union-attr]
            return answer

        try:
            call("warm", "edit('Big', 'append', text='')")
            before = _vm_kb(proc.pid, "VmHWM")
            answer = call("amp", AMPLIFY_CELL)
            after = _vm_kb(proc.pid, "VmHWM")
        finally:
            proc.stdin.close()
            proc.wait(timeout=120)
        result = answer.get("result", {})
        return {"peak_rss_before_mb": round(before / 1024, 1),
                "peak_rss_after_mb": round(after / 1024, 1),
                "peak_rss_growth_mb": round((after - before) / 1024, 1),
                "outcomes": result.get("value") or result.get("error"),
                "note_bytes_after": (root / "Big.md").stat().st_size}


def _big_vault(root: Path, notes: int) -> None:
    (root / ".rmh").mkdir(parents=True)
    rnd = random.Random(7)
    words = [f"w{i}" for i in range(5000)] + ["hello", "world", "atlas"]
    for i in range(notes):
        text = " ".join(rnd.choice(words) for _ in range(120))
        (root / f"n{i:05d}.md").write_text(f"{text}\n[[n{rnd.randrange(notes):05d}]]\n", "utf-8")


def _exec(repo: Path, root: Path, code: str, deadline: str) -> tuple[dict[str, Any], float, float]:
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "--vault", str(root), "exec", "--no-dense", "--json",
         "--deadline", deadline, "-c", code],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=repo, env=_env(repo))
    assert proc.stdout is not None
    line = proc.stdout.readline()
    answered = time.monotonic() - t0
    proc.stdout.read()
    proc.wait()
    return json.loads(line), answered, time.monotonic() - t0


def deadline(repo: Path, runs: int, notes: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "v"
        _big_vault(root, notes)
        _exec(repo, root, "1", "600")  # builds the index (on open), once
        cells, answers, exits, types = [], [], [], []
        for _ in range(runs):
            doc, answered, exited = _exec(repo, root, "len(search('hello'))", "2")
            cells.append(doc["duration_s"])
            answers.append(answered)
            exits.append(exited)
            types.append((doc.get("error") or {}).get("type", "ok"))
    return {"notes": notes, "runs": runs, "outcomes": sorted(set(types)),
            "cell_s_median": round(statistics.median(cells), 2), "cell_s_max": round(max(cells), 2),
            "answer_s_median": round(statistics.median(answers), 2),
            "exit_s_median": round(statistics.median(exits), 2), "exit_s_max": round(max(exits), 2)}


def next_cell(repo: Path, runs: int, notes: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "v"
        _big_vault(root, notes)
        _exec(repo, root, "1", "600")  # builds the index (on open), once
        seconds, outcomes = [], []
        for _ in range(runs):
            (root / ".rmh" / "lexical-index.bin").unlink(missing_ok=True)
            proc = subprocess.Popen(
                [sys.executable, "-m", "harness", "--vault", str(root), "serve", "--no-dense"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                cwd=repo, env=_env(repo))
            assert proc.stdin is not None and proc.stdout is not None
            answers = []
            for rid, code, limit in (("start", "1", 600), ("cold", "search('hello')", 2),
                                     ("next", "read('n00001')['note']", 600)):
                frame = {"jsonrpc": "2.0", "id": rid, "method": "repl.exec",
                         "params": {"code": code, "deadline_s": limit}}
                proc.stdin.write(json.dumps(frame).encode() + b"\n")
                proc.stdin.flush()
                answers.append(json.loads(proc.stdout.readline())["result"])
            proc.kill()
            proc.wait()
            seconds.append(answers[2]["duration_s"])
            outcomes.append("ok" if answers[2]["ok"] else answers[2]["error"]["type"])
    return {"notes": notes, "runs": runs, "outcomes": sorted(set(outcomes)),
            "next_cell_s": [round(s, 2) for s in seconds],
            "next_cell_s_median": round(statistics.median(seconds), 2),
            "next_cell_s_max": round(max(seconds), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("mode", nargs="?", default="both",
                        choices=["amplify", "deadline", "next", "both"])
    parser.add_argument("--repo", type=Path, default=Path.cwd())
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--notes", type=int, default=20_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report: dict[str, Any] = {"repo": str(args.repo)}
    if args.mode in ("amplify", "both"):
        report["amplify"] = amplify(args.repo.resolve())
    if args.mode in ("deadline", "both"):
        report["deadline"] = deadline(args.repo.resolve(), args.runs, args.notes)
    if args.mode == "next":
        report["next"] = next_cell(args.repo.resolve(), args.runs, args.notes)
    print(json.dumps(report, indent=None if args.json else 2))


if __name__ == "__main__":
    main()
