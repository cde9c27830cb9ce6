"""Does learning from use help where agents are? LoCoMo through a real `rmh serve` and the
official MCP SDK client (issue 13; the idealised in-process simulation it replaces cited every
evidence note and never went through a server).

Per conversation (bench/datasets.py, written to a real vault folder: one note per turn with
speaker/date frontmatter and [[links]] to the speaker and the previous turn), questions of
categories 1-4 are shuffled (fixed seed) and split in half: training and held-out. Held-out
questions are *related* when they share an evidence turn with some training question (the
same information need, worded differently) and *unrelated* otherwise.

Training: simulated agents work through the training questions, `--per-session` per session,
every question `--repeats` times in different sessions. A session is one MCP connection: a
fresh `rmh serve --no-dense` subprocess driven by `mcp.ClientSession` over stdio, with no
session call (the connection is the session; it ends at EOF). Per question the agent calls
the `search` tool (k = 10), `read`s the hits it uses (the evidence turns among them), and
`write`s an answer note that links only some of them (each with probability `--link-p`, at
least one). Nothing is simulated inside the server: its wall clock, its ledger, its rewards.

Evaluation, in one more MCP connection after training: each held-out question is searched
with `learn: false` (live learned state, nothing recorded) and with `as_of` the time training
began (the state replayed from no events: the learning-free ranking of the same vault, answer
notes included). Not `as_of: 0`: the clock's day places the times a question names
(vault/retrieval/when.py), so at 0 the baseline ranked "in August 2023" against 1 January
1970 and every dated question's change was the clock's, not learning's (until session 20 this
inflated the unrelated lift by +0.037 on four conversations).
MRR@10 of the first evidence turn, paired bootstrap 95 % intervals (10,000 draws) of
on - off for related and unrelated questions. Then `rmh learning --json` gives
`exposure_q_pearson` and `replay_matches`, and `rmh replay --check` that every stored learned
number equals its replay.

Run:  python -m bench.bench_learning --conversations 2 --json out.json
      (`--ask-twice`: the agent then asks each related held-out question once and all are
      evaluated again, `*_second`; `--pages`: answer notes left out of the ranking; NOTES-LRN20)
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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import numpy as np
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent

from bench.datasets import Haystack, Question, load_locomo
from bench.metrics import paired_bootstrap
from vault import LEARNING_VERSION, LearningParams

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / ".." / "shared" / "data" / "locomo" / "locomo10.json"
SERVE_FLAGS = ["--no-dense"]  # `--dense`: [] (the MiniLM channel, and the asked channel's encoder)
PAGES: list[bool] = []  # `--pages`: [True], the gold ranked among the conversation's own notes


def write_vault(hay: Haystack, root: Path) -> dict[int, str]:
    """The haystack as markdown files; returns corpus position -> vault path."""
    c = hay.corpus
    (root / ".rmh").mkdir(parents=True)
    links: dict[int, list[int]] = {}
    for a, b in c.edges:
        links.setdefault(a, []).append(b)
    for pos, path in enumerate(c.paths):
        front = "".join(f"{k}: {json.dumps(v)}\n" for k, v in sorted(c.frontmatter[pos].items()))
        body = c.bodies[pos]
        extra = [c.titles[b] for b in sorted(links.get(pos, []))
                 if f"[[{c.titles[b]}]]" not in body]
        if extra:
            body += "\n\n" + " ".join(f"[[{t}]]" for t in extra)
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"---\n{front}---\n{body}\n", encoding="utf-8")
    return dict(enumerate(c.paths))


def rmh(root: Path, *args: str) -> Any:
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env["PYTHONPATH"] = str(REPO)
    out = subprocess.run([sys.executable, "-m", "harness", "--vault", str(root), *args, "--json"],
                         capture_output=True, text=True, env=env, cwd=REPO, timeout=600,
                         check=False)
    if out.returncode not in (0, 1):
        raise RuntimeError(out.stderr)
    return json.loads(out.stdout)


def server(root: Path) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    env["PYTHONPATH"] = str(REPO)
    return StdioServerParameters(command=sys.executable, cwd=str(REPO), env=env,
                                 args=["-m", "harness", "--vault", str(root), "serve",
                                       *SERVE_FLAGS])


def payload(result: CallToolResult) -> Any:
    block = result.content[0]
    assert isinstance(block, TextContent)
    if result.is_error:
        raise RuntimeError(block.text)
    return json.loads(block.text)


def rr(paths: Sequence[str], evidence: set[str]) -> float:
    for rank, p in enumerate(paths[:10]):
        if p in evidence:
            return 1.0 / (rank + 1)
    return 0.0


async def train_session(root: Path, work: list[tuple[int, Question]], where: dict[int, str],
                        rng: random.Random, link_p: float) -> dict[str, int]:
    counts = {"searches": 0, "reads": 0, "writes": 0}
    async with stdio_client(server(root)) as (rx, tx), ClientSession(rx, tx) as s:
        await s.initialize()
        for n, q in work:
            hits = payload(await s.call_tool("search", {"query": q.text, "k": 10}))["hits"]
            counts["searches"] += 1
            evidence = {where[p] for p in q.evidence}
            used = [h["note"] for h in hits if h["note"] in evidence]
            for note in used:
                payload(await s.call_tool("read", {"note": note}))
                counts["reads"] += 1
            if used:
                linked = [u for u in used if rng.random() < link_p] or used[:1]
                text = f"Q: {q.text}\n\nFrom " + ", ".join(
                    f"[[{u.removesuffix('.md')}]]" for u in linked) + ".\n"
                payload(await s.call_tool("write", {"note": f"answers/a{n}.md", "content": text}))
                counts["writes"] += 1
    return counts


async def evaluate(root: Path, questions: list[Question], where: dict[int, str], before: float
                   ) -> tuple[list[float], list[float]]:
    """MRR@10 per question, live and as of `before` (a time before any learned event, on the
    same day as the live clock: module docstring)."""
    on: list[float] = []
    off: list[float] = []
    k = 40 if PAGES else 10

    def top(hits: list[dict[str, Any]]) -> list[str]:  # PAGES: the agent's answers left out
        return [h["note"] for h in hits if not (bool(PAGES) and h["note"].startswith("answers/"))]

    async with stdio_client(server(root)) as (rx, tx), ClientSession(rx, tx) as s:
        await s.initialize()
        for q in questions:
            evidence = {where[p] for p in q.evidence}
            live = payload(await s.call_tool("search", {"query": q.text, "k": k,
                                                        "learn": False}))
            none = payload(await s.call_tool("search", {"query": q.text, "k": k,
                                                        "as_of": before}))
            on.append(rr(top(live["hits"]), evidence))
            off.append(rr(top(none["hits"]), evidence))
    return on, off


def split(hay: Haystack, rng: random.Random, max_train: int = 0
          ) -> tuple[list[Question], list[Question], list[Question]]:
    """The conversation's questions shuffled by `rng` and halved: training (the first
    `max_train` of them when > 0), related held-out (sharing an evidence turn with a training
    question) and unrelated held-out."""
    qs = list(hay.questions)
    rng.shuffle(qs)
    train, held = qs[: len(qs) // 2], qs[len(qs) // 2:]
    if max_train:
        train = train[:max_train]
    trained = set().union(*(q.evidence for q in train)) if train else set()
    return (train, [q for q in held if q.evidence & trained],
            [q for q in held if not q.evidence & trained])


def run_conversation(hay: Haystack, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    root = tmp / hay.name
    where = write_vault(hay, root)
    if args.config is not None:  # e.g. [search] weights, to see which learned input moves MRR
        (root / "rmh.toml").write_text(args.config.read_text(encoding="utf-8"), encoding="utf-8")
    rmh(root, "init")
    rng = random.Random(f"{args.seed}:{hay.name}")
    train, related, unrelated = split(hay, rng, args.max_train)
    schedule: list[Question] = []
    for _ in range(args.repeats):
        order = train[:]
        rng.shuffle(order)
        schedule.extend(order)
    numbered = list(enumerate(schedule))
    counts = {"searches": 0, "reads": 0, "writes": 0, "sessions": 0}
    t0 = time.time()  # before any learned event: the baseline's `as_of`
    for start in range(0, len(numbered), args.per_session):
        got = anyio.run(train_session, root, numbered[start:start + args.per_session], where,
                        rng, args.link_p)
        for key, value in got.items():
            counts[key] += value
        counts["sessions"] += 1
    train_s = time.time() - t0
    rel_on, rel_off = anyio.run(evaluate, root, related, where, t0)
    unr_on, unr_off = anyio.run(evaluate, root, unrelated, where, t0)
    again: dict[str, Any] = {}
    if args.ask_twice:  # the agent asked each related held-out question once (NOTES-LRN20.md)
        asked = list(enumerate(related, start=len(numbered)))
        for start in range(0, len(asked), args.per_session):
            anyio.run(train_session, root, asked[start:start + args.per_session], where, rng,
                      args.link_p)
        again = {"related_second": anyio.run(evaluate, root, related, where, t0),
                 "unrelated_second": anyio.run(evaluate, root, unrelated, where, t0)}
    audit = rmh(root, "learning")
    replay = rmh(root, "replay", "--check")
    print(f"{hay.name}: {counts} in {train_s:.0f} s; related {len(related)}, "
          f"unrelated {len(unrelated)}", file=sys.stderr)
    return {"name": hay.name, "counts": counts, "train_s": round(train_s, 1),
            "related": (rel_on, rel_off), "unrelated": (unr_on, unr_off),
            "exposure_q_pearson": audit["exposure_q_pearson"],
            "use_rate_q_pearson": audit["use_rate_q_pearson"],
            "rewards": audit["rewards"], "sessions": audit["sessions"],
            "replay_matches": bool(audit["replay_matches"]) and bool(replay["matched"]),
            "missing_rows": audit["missing_rows"], **again}


def summary(runs: list[dict[str, Any]], key: str, per_question: bool = False) -> dict[str, Any]:
    on = [x for r in runs for x in r[key][0]]
    off = [x for r in runs for x in r[key][1]]
    out: dict[str, Any] = {"n": len(on), "mrr_on": float(np.mean(on)) if on else None,
                           "mrr_off": float(np.mean(off)) if off else None,
                           "delta": paired_bootstrap(on, off, draws=10_000)}
    if per_question:  # to pair two runs' `on` values (NOTES-F3.md, bench/pair_runs.py)
        out["on"] = on
        out["off"] = off
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--first", type=int, default=0, help="skip this many conversations")
    ap.add_argument("--conversations", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--per-session", type=int, default=5)
    ap.add_argument("--max-train", type=int, default=0, help="cap training questions (0: all)")
    ap.add_argument("--link-p", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--config", type=Path, default=None,
                    help="an rmh.toml copied into every benchmark vault (ablations)")
    ap.add_argument("--per-question", action="store_true",
                    help="also store each held-out question's MRR (bench/pair_runs.py)")
    ap.add_argument("--keep", type=Path, default=None,
                    help="build the vaults in this (new) folder and keep them (NOTES-L6.md)")
    ap.add_argument("--dense", action="store_true",
                    help="serve with the dense channel (MiniLM; needed by weights.asked)")
    ap.add_argument("--pages", action="store_true",
                    help="rank the evidence among the conversation's notes (answers/ left out)")
    ap.add_argument("--ask-twice", action="store_true",
                    help="after the first evaluation the agent is asked each related held-out "
                         "question once, then all are evaluated again (`_second`)")
    args = ap.parse_args(argv)
    SERVE_FLAGS[:] = [] if args.dense else ["--no-dense"]
    PAGES[:] = [True] if args.pages else []
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) if args.keep is None else args.keep
        for i, hay in enumerate(load_locomo(args.data)):
            if i < args.first:
                continue
            if i >= args.first + args.conversations:
                break
            runs.append(run_conversation(hay, args, where))
    report = {
        "learning_version": LEARNING_VERSION,
        "params": LearningParams().__dict__,
        "setup": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "conversations": [r["name"] for r in runs],
        "related": summary(runs, "related", args.per_question),
        "unrelated": summary(runs, "unrelated", args.per_question),
        "per_conversation": [{k: r[k] for k in ("name", "counts", "train_s",
                                                 "exposure_q_pearson", "use_rate_q_pearson",
                                                 "sessions", "rewards", "replay_matches",
                                                 "missing_rows")} for r in runs],
        "replay_matches": all(r["replay_matches"] for r in runs),
        **({key: summary(runs, key, args.per_question)
            for key in ("related_second", "unrelated_second")} if args.ask_twice else {}),
    }
    text = json.dumps(report, indent=2, sort_keys=True)
    if args.json is not None:
        args.json.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
