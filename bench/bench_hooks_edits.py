"""Hooks while the user edits notes outside rmh (`bench_hooks.py --edit-between`).

An editor (Obsidian, here this script) writes `.md` files directly between sessions and
between prompts. Each edit `i` is one of, in turn: add `edits/new-i.md`, append a sentence to
an existing generated note, rename the note added two edits before (`edits/new-j.md` ->
`edits/renamed-j.md`). Each carries a word no generated note holds (`zqeditI`), and the
prompt after it asks for that word, so the answer says whether the hook saw the edit:
`fresh` (the word, and for a rename the new path and not the old one), `stale` (memory
without it), `empty` (no memory) or `timeout` (the daemon did not answer within its wait).

Three steps, each a new hook process timed from launch to exit (wall, CPU = user + sys):

1. `cold`: no daemon runs; an edit; the session-start hook (`[hooks] daemon = true, dense =
   true`) starts the daemon, whose cold start is then the first process after the edit;
   a prompt hook at once (the daemon not ready yet: the hooks' own index answers), the
   daemon's ready time and CPU (its process, to the moment it answers), a prompt hook once
   it is ready; then its session ends (it exits).
2. `warm`: the daemon started and ready; per round an edit, the prompt hook (the daemon's
   watcher path), `python -c pass`, a second prompt hook with no edit in between; the
   daemon's CPU for each (it is waited for between hooks, so no work spills over).
3. `no daemon`: `[hooks] daemon = false`: the prompt hook on the hooks' own index after an
   edit (`--runs` rounds), and with `engine = true, dense = true` (the vault opened and the
   engine prepared in the hook process; `--engine-runs` rounds).

With `--baseline CHECKOUT --baseline-vault COPY` every step runs on both checkouts in the
same rounds, alternating which goes first, each on its own copy of the vault given the same
edits; the answers are compared (identical injected memory text per round).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench import bench_hooks as bh
from harness import daemon_request

ENV_DENSE = "[hooks]\ndaemon = true\ndense = true\n"
SENTENCE = "The zqedit{i} team reviews the billing invoices on Monday."
PROMPT = "who is zqedit{i}"  # only the edited note holds a third of its terms


def edit(vault: Path, i: int) -> tuple[str, int]:
    """Apply edit `i` to `vault` (module doc); (kind, the edit whose word the prompt asks)."""
    folder = vault / "edits"
    folder.mkdir(exist_ok=True)
    kind = ("add", "update", "rename")[i % 3]
    if kind == "add":
        (folder / f"new-{i}.md").write_text(f"# Edit {i}\n\n{SENTENCE.format(i=i)}\n",
                                            encoding="utf-8")
        return kind, i
    if kind == "update":
        areas = sorted(vault.glob("area-*"))
        notes = sorted(areas[(37 * i) % len(areas)].glob("*.md"))
        path = notes[i % len(notes)]
        with path.open("a", encoding="utf-8") as f:
            f.write(f"\n{SENTENCE.format(i=i)}\n")
        return kind, i
    j = i - 2  # the note edit i-2 added
    os.rename(folder / f"new-{j}.md", folder / f"renamed-{j}.md")
    return kind, j


def fresh(kind: str, j: int, text: str, stderr: str) -> str:
    """`fresh`, `stale`, `empty` or `timeout` for an answer (module doc)."""
    if "did not answer in time" in stderr:
        return "timeout"
    if not text:
        return "empty"
    ok = f"zqedit{j}" in text
    if kind == "rename":
        ok = ok and f"renamed-{j}" in text and f"new-{j}.md" not in text
    return "fresh" if ok else "stale"


def hook(repo: Path, vault: Path, event: str, payload: dict[str, Any],
         config: Path) -> tuple[float, float, str, str]:
    """One hook process of checkout `repo`: (wall, CPU, injected text, stderr)."""
    import json
    import resource

    bh.RUN["repo"] = repo
    env = bh._env(config)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run([*bh._argv(), "--vault", str(vault), "hook", event],
                         input=json.dumps(payload), capture_output=True, text=True, env=env,
                         timeout=900, cwd=repo)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0 or "Error" in out.stderr:
        raise SystemExit(f"hook {event} ({repo}) failed: {out.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, bh._context(out.stdout), out.stderr


def wait_idle(vault: Path, pid: int, limit: float = 600.0) -> None:
    """Until the daemon answers a ping (it answers one request at a time: its earlier work
    is done)."""
    t0 = time.perf_counter()
    while daemon_request(vault, {"event": "ping"}, timeout=30.0) is None:
        if time.perf_counter() - t0 > limit or not Path(f"/proc/{pid}").exists():
            raise SystemExit(f"the daemon of {vault} stopped answering")
        time.sleep(0.05)


def start_daemon(repo: Path, vault: Path, cfg: Path, sid: str,
                 rec: dict[str, list[Any]], prompt: str | None, step: str = "cold") -> int:
    """Session start with no daemon running; a prompt hook at once (`prompt`), the daemon's
    ready time and CPU; its pid."""
    base = {"session_id": sid, "cwd": str(vault / "billing")}
    t0 = time.perf_counter()
    w, c, _, _ = hook(repo, vault, "session-start", base, cfg)
    rec[f"{step}: session-start (no daemon)"].append((w, c))
    if prompt is not None:
        w, c, text, err = hook(repo, vault, "prompt", {**base, "prompt": prompt}, cfg)
        rec[f"{step}: prompt at once (daemon not ready)"].append((w, c))
        rec["_early"].append((text, err))
    pidfile = vault / ".rmh" / "hooks-daemon.pid"
    while daemon_request(vault, {"event": "ping"}, timeout=5.0) is None or not pidfile.exists():
        if time.perf_counter() - t0 > 900:
            raise SystemExit(f"the daemon of {vault} did not answer within 15 min")
        time.sleep(0.05)
    ready = time.perf_counter() - t0
    pid = int(pidfile.read_text())
    rec[f"{step}: daemon ready after session start (wall s; CPU: the daemon's)"].append(
        (ready, bh._cpu(pid)))
    return pid


def stop_daemon(vault: Path, pid: int, sid: str) -> None:
    daemon_request(vault, {"event": "end", "session": f"hook-claude-code-{sid}"}, timeout=30.0)
    t0 = time.perf_counter()
    while Path(f"/proc/{pid}").exists():
        if time.perf_counter() - t0 > 60:
            raise SystemExit(f"the daemon {pid} did not exit")
        time.sleep(0.05)


def _new() -> dict[str, list[Any]]:
    from collections import defaultdict

    return defaultdict(list)


def run(sides: list[tuple[str, Path, Path]], tmp: Path, *, cold: int, warm: int,
        fts: int, engine: int) -> dict[str, Any]:
    """The three steps (module doc) over `sides` = [(name, checkout, vault)]; the report."""
    cfg = tmp / "daemon-dense.toml"
    cfg.write_text(ENV_DENSE, encoding="utf-8")
    rec = {name: _new() for name, _, _ in sides}
    answers: list[dict[str, str]] = []
    i = 0

    def order(r: int) -> list[tuple[str, Path, Path]]:
        return sides if r % 2 == 0 else sides[::-1]

    def note(step: str, kind: str, j: int, got: dict[str, tuple[str, str]]) -> None:
        answers.append({"step": step, "edit": kind, "word": f"zqedit{j}",
                        **{n: fresh(kind, j, t, e) for n, (t, e) in got.items()},
                        "same_text": str(len({t for t, _ in got.values()}) == 1)})

    for r in range(cold):  # 1. the daemon's cold start is the first process after an edit
        kinds = [edit(v, i) for _, _, v in sides]
        kind, j = kinds[0]
        got_early: dict[str, tuple[str, str]] = {}
        got_ready: dict[str, tuple[str, str]] = {}
        for name, repo, vault in order(r):
            sid = f"cold-{r}"
            pid = start_daemon(repo, vault, cfg, sid, rec[name], PROMPT.format(i=j))
            got_early[name] = rec[name]["_early"][-1]
            base = {"session_id": sid, "cwd": str(vault / "billing")}
            c0 = bh._cpu(pid)
            w, c, text, err = hook(repo, vault, "prompt", {**base, "prompt": PROMPT.format(i=j)},
                                   cfg)
            wait_idle(vault, pid)
            rec[name]["cold: prompt once ready"].append((w, c))
            rec[name]["cold: daemon CPU for that prompt (the p50_s/p95_s columns)"].append(
                (bh._cpu(pid) - c0, 0.0))
            got_ready[name] = (text, err)
            stop_daemon(vault, pid, sid)
        note("cold: prompt at once", kind, j, got_early)
        note("cold: prompt once ready", kind, j, got_ready)
        i += 1
    pids = {name: start_daemon(repo, vault, cfg, "warm", rec[name], None, "warm")
            for name, repo, vault in sides}
    load = [os.getloadavg()[0]]
    for r in range(warm):  # 2. the daemon warm, edits between prompts
        kinds = [edit(v, i) for _, _, v in sides]
        kind, j = kinds[0]
        got_after: dict[str, tuple[str, str]] = {}
        got_again: dict[str, tuple[str, str]] = {}
        for name, repo, vault in order(r):
            base = {"session_id": "warm", "cwd": str(vault / "billing")}
            for label, got in (("after an edit", got_after), ("no edit since", got_again)):
                c0 = bh._cpu(pids[name])
                w, c, text, err = hook(repo, vault, "prompt",
                                       {**base, "prompt": PROMPT.format(i=j)}, cfg)
                wait_idle(vault, pids[name])
                rec[name][f"prompt, daemon warm, {label}"].append((w, c))
                rec[name][f"daemon CPU per prompt, {label} (the p50_s/p95_s columns)"].append(
                    (bh._cpu(pids[name]) - c0, 0.0))
                got[name] = (text, err)
                rec[name]["python -c pass (interleaved)"].append(bh._pass())
        note("warm: after an edit", kind, j, got_after)
        note("warm: no edit since", kind, j, got_again)
        i += 1
    load.append(os.getloadavg()[0])
    for name, _, vault in sides:
        stop_daemon(vault, pids[name], "warm")
    for step, rounds, text in (("no daemon, hooks' index", fts, "[hooks]\ndaemon = false\n"),
                               ("no daemon, engine in the hook, dense", engine,
                                "[hooks]\ndaemon = false\nengine = true\ndense = true\n")):
        scfg = tmp / f"{step[:12].replace(' ', '-')}.toml"
        scfg.write_text(text, encoding="utf-8")
        for r in range(rounds):  # 3. `[hooks] daemon = false`
            kinds = [edit(v, i) for _, _, v in sides]
            kind, j = kinds[0]
            got = {}
            for name, repo, vault in order(r):
                base = {"session_id": "nodaemon", "cwd": str(vault / "billing"),
                        "prompt": PROMPT.format(i=j)}
                w, c, t, err = hook(repo, vault, "prompt", base, scfg)
                rec[name][f"prompt, {step}, after an edit"].append((w, c))
                got[name] = (t, err)
            note(step, kind, j, got)
            i += 1
    report: dict[str, Any] = {"load_1min_during_warm": [round(x, 1) for x in load]}
    for name, repo, vault in sides:
        report[name] = {"repo": str(repo), "vault": str(vault),
                        **{k: bh._stats(v) for k, v in rec[name].items()
                           if not k.startswith("_") and v}}
    report["answers"] = answers
    names = [n for n, _, _ in sides]
    report["freshness"] = {n: _count(a[n] for a in answers) for n in names}
    report["answers_identical"] = f"{sum(a['same_text'] == 'True' for a in answers)}/" \
                                  f"{len(answers)}"
    return report


def _count(values: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return dict(sorted(out.items()))


def main(argv: list[str] | None = None) -> int:
    """`python -m bench.bench_hooks_edits` (or `bench_hooks.py --edit-between`): the report
    as one JSON document."""
    import argparse
    import json
    import tempfile

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vault", required=True, type=Path)
    ap.add_argument("--cold-rounds", type=int, default=6, help="daemon cold starts after an edit")
    ap.add_argument("--runs", type=int, default=20,
                    help="prompts with the daemon warm, and on the hooks' index")
    ap.add_argument("--engine-runs", type=int, default=3,
                    help="prompts with the engine in the hook process")
    ap.add_argument("--repo", type=Path, default=bh.REPO, help="the checkout measured")
    ap.add_argument("--entry", choices=("module", "script"), default="module")
    ap.add_argument("--baseline", type=Path, help="a baseline checkout, run alternating")
    ap.add_argument("--baseline-vault", type=Path,
                    help="the baseline's own copy of the vault (the same notes)")
    args = ap.parse_args(argv)
    bh.RUN.update(entry=args.entry)
    sides = [("this checkout", args.repo.absolute(), args.vault.absolute())]
    if args.baseline is not None:
        if args.baseline_vault is None:
            ap.error("--baseline needs --baseline-vault (its own copy of the vault)")
        sides.insert(0, ("baseline", args.baseline.absolute(), args.baseline_vault.absolute()))
    with tempfile.TemporaryDirectory() as tmp:
        report = {"load_1min_at_start": round(os.getloadavg()[0], 1),
                  **run(sides, Path(tmp), cold=args.cold_rounds, warm=args.runs,
                        fts=args.runs, engine=args.engine_runs)}
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
