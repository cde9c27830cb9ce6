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
- `prompt (daemon, no dense|dense)`: the prompt hook answered by the warm daemon
  (harness/hooks_daemon.py) that session start started, measured once it answers, with the
  hooks' own index moved away (every answer is the daemon's); and the daemon's answer alone
  (a socket round trip from this process);
- `session-end`: a 6-turn Claude Code transcript ingested, then the same again (nothing new).
The steps without "daemon" in their name run with `[hooks] daemon = false`.

    python bench/bench_hooks.py --vault /tmp/v10k [--runs 20] [--engine-runs 3] [--dense]
        [--daemon-only [--only-dense]] [--repo CHECKOUT] [--entry module|script] [--burn N]
    python bench/bench_hooks.py --vault V --edit-between [--cold-rounds 6] [--runs 20]
        [--engine-runs 3] [--baseline CHECKOUT --baseline-vault COPY_OF_V]

Each daemon step also times `python -c pass` processes interleaved with its prompt hooks
(the floor under any hook process, under the same load) and session-start hooks the warm
daemon answers. `--repo` runs another checkout's rmh (a baseline in the same run), `--entry
script` starts hooks with the `rmh` script as installed, `--burn N` keeps N busy processes
spinning during the run (a loaded machine). `--edit-between`: the hooks while notes are
edited outside rmh between sessions and between prompts, dense on, the hooks' index built
(bench/bench_hooks_edits.py), optionally beside a baseline checkout on its own vault copy.

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

from harness import daemon_request

REPO = Path(__file__).resolve().parents[1]
PROMPTS = (
    "who reviews the billing invoices migration?", "what broke the cache cluster on Monday?",
    "how do we deploy the search ranking?", "budget for the marathon travel",
    "which team owns the auth tokens?", "latency of the vector index",
    "kernel scheduler outage review", "espresso camera lens recipe",
)


RUN: dict[str, Any] = {"repo": REPO, "entry": "module"}  # whose rmh, started how


def _argv() -> list[str]:
    """How a hook process is started: `python -m harness`, or the `rmh` script beside this
    Python (what `rmh hooks install` writes when it exists; `--entry script`)."""
    if RUN["entry"] == "script":
        return [sys.executable, str(Path(sys.executable).with_name("rmh"))]
    return [sys.executable, "-m", "harness"]


def _pass() -> tuple[float, float]:
    """A `python -c pass` process, the floor under any hook process (same Python, env)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], capture_output=True, check=True,
                   env=_env(None), cwd=RUN["repo"])
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _env(config: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env["PYTHONPATH"] = str(RUN["repo"])
    if config is not None:
        env["RMH_CONFIG"] = str(config)
    return env


def _run(vault: Path, event: str, payload: dict[str, Any],
         config: Path | None = None, out_text: list[str] | None = None) -> tuple[float, float]:
    env = _env(config)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run([*_argv(), "--vault", str(vault), "hook", event],
                         input=json.dumps(payload), capture_output=True, text=True, env=env,
                         timeout=900, cwd=RUN["repo"])  # `-m harness` imports from the cwd
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0 or "Error" in out.stderr:
        raise SystemExit(f"hook {event} failed: {out.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if out_text is not None:
        out_text.append(out.stdout)
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


def _daemon_steps(vault: Path, base: dict[str, Any], tmp: Path, dense: bool,
                  runs: int) -> dict[str, Any]:
    """The warm daemon: session start starts it; once it answers, `runs` prompt hooks, each a
    new process, with the hooks' own index moved away so that every answer is the daemon's
    (a fallback would fail the run); then its session ends, which stops it."""
    name = "daemon, dense" if dense else "daemon, no dense"
    cfg = tmp / f"daemon-{dense}.toml"
    cfg.write_text(f"[hooks]\ndaemon = true\ndense = {'true' if dense else 'false'}\n",
                   encoding="utf-8")
    t0 = time.perf_counter()
    start = _run(vault, "session-start", base, cfg)
    while daemon_request(vault, {"event": "ping"}, timeout=5.0) is None:
        if time.perf_counter() - t0 > 3600:
            raise SystemExit("the daemon did not answer within an hour")
        time.sleep(0.2)
    ready = time.perf_counter() - t0
    index = vault / ".rmh" / "hooks.sqlite"
    index.rename(index.with_suffix(".away"))
    pid = int((vault / ".rmh" / "hooks-daemon.pid").read_text())
    try:
        said: list[str] = []
        prompts, floor = [], []
        load = [os.getloadavg()[0]]
        for i in range(runs):  # interleaved, so both see the same load
            prompts.append(_run(vault, "prompt", {**base, "prompt": PROMPTS[i % 8]}, cfg, said))
            floor.append(_pass())
        load.append(os.getloadavg()[0])
        inproc, direct = [], []
        for i in range(runs):
            t1, c1 = time.perf_counter(), _cpu(pid)
            got = daemon_request(vault, {"event": "prompt", "prompt": PROMPTS[i % 8],
                              "session": "bench-direct"}, timeout=30.0)
            if got is None or "text" not in got:
                raise SystemExit(f"the daemon did not answer: {got}")
            inproc.append((time.perf_counter() - t1, _cpu(pid) - c1))
            direct.append(str(got["text"]))
    finally:
        index.with_suffix(".away").rename(index)
    starts = [_run(vault, "session-start", {**base, "session_id": f"bench-{i}"}, cfg)
              for i in range(runs)]  # the daemon answers with the brief (the index is back)
    for i in range(runs):
        daemon_request(vault, {"event": "end", "session": f"hook-claude-code-bench-{i}"},
                       timeout=30.0)
    # a hook answered by the daemon printed the daemon's text (the index was away: no
    # fallback could have); one the daemon did not answer in time printed nothing
    same = sum(bool(t) and t == _context(out) for t, out in zip(direct, said, strict=True))
    daemon_request(vault, {"event": "end", "session": "hook-claude-code-bench"}, timeout=30.0)
    return {f"session-start ({name}; returns before it is ready)": _stats([start]),
            f"daemon ready after session start ({name}) s": round(ready, 2),
            f"prompt ({name})": {**_stats(prompts), "answered_by_daemon": same,
                                 "daemon_answers_with_memory": sum(map(bool, direct)),
                                 "load_1min": [round(x, 1) for x in load]},
            f"python -c pass, interleaved with the prompt hooks ({name})": _stats(floor),
            f"session-start, daemon warm ({name})": _stats(starts),
            f"daemon answer alone, socket round trip; CPU: the daemon's ({name})":
                _stats(inproc)}


def _context(stdout: str) -> str:
    """The memory a hook's stdout injects ("" for none)."""
    if not stdout.strip():
        return ""
    return str(json.loads(stdout)["hookSpecificOutput"]["additionalContext"])


def _cpu(pid: int) -> float:
    """User + system CPU seconds of process `pid` so far (/proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vault", required=True, type=Path)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--engine-runs", type=int, default=3)
    ap.add_argument("--dense", action="store_true")
    ap.add_argument("--daemon-only", action="store_true",
                    help="only the daemon steps (the hooks' index must exist)")
    ap.add_argument("--only-dense", action="store_true",
                    help="with --daemon-only: the dense daemon alone")
    ap.add_argument("--repo", type=Path, default=REPO,
                    help="the checkout whose rmh the hook processes run (a baseline)")
    ap.add_argument("--entry", choices=("module", "script"), default="module",
                    help="start hooks as `python -m harness` or with the `rmh` script")
    ap.add_argument("--burn", type=int, default=0,
                    help="busy processes spinning during the run (a loaded machine)")
    ap.add_argument("--edit-between", action="store_true",
                    help="notes edited between hooks: runs bench/bench_hooks_edits.py "
                         "with the other arguments (--cold-rounds, --baseline, ...)")
    args, rest = ap.parse_known_args(argv)
    if args.edit_between:  # its own process: that module builds on this one
        given = sys.argv[1:] if argv is None else argv
        return subprocess.run([sys.executable, "-m", "bench.bench_hooks_edits",
                               *[a for a in given if a != "--edit-between"]],
                              cwd=REPO, check=False).returncode
    if rest:
        ap.error(f"unrecognized arguments: {' '.join(rest)}")
    RUN.update(repo=args.repo.absolute(), entry=args.entry)
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
               for _ in range(args.burn)]
    try:
        return _main(args)
    finally:
        for b in burners:
            b.kill()
            b.wait()


def _main(args: argparse.Namespace) -> int:
    vault: Path = args.vault.absolute()
    report: dict[str, Any] = {"vault": str(vault), "repo": str(RUN["repo"]),
                              "entry": RUN["entry"], "burn": args.burn,
                              "load_1min_at_start": round(os.getloadavg()[0], 1)}
    index = vault / ".rmh" / "hooks.sqlite"
    if index.exists() and not args.daemon_only:
        index.unlink()
    base = {"session_id": "bench", "cwd": str(vault / "billing")}
    with tempfile.TemporaryDirectory() as tmp:
        cold = Path(tmp) / "cold.toml"  # the steps without the daemon
        cold.write_text("[hooks]\ndaemon = false\n", encoding="utf-8")
        if args.daemon_only:
            for dense in ((True,) if args.only_dense else (False, True) if args.dense
                          else (False,)):
                report.update(_daemon_steps(vault, base, Path(tmp), dense, args.runs))
            print(json.dumps(report, indent=2))
            return 0
        report["session-start (first)"] = _stats([_run(vault, "session-start", base, cold)])
        report["session-start"] = _stats([_run(vault, "session-start", base, cold)
                                          for _ in range(args.runs)])
        report["prompt"] = _stats([_run(vault, "prompt", {**base, "prompt": PROMPTS[i % 8]},
                                        cold) for i in range(args.runs)])
        for dense in (False, True) if args.dense else (False,):
            report.update(_daemon_steps(vault, base, Path(tmp), dense, args.runs))
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
