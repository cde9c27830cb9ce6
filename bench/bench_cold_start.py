"""A new process's first `rmh search`, phase by phase, against the same search warm (issue 33
item 5: "a new process's first search costs about what a warm one does").

    python -m bench.bench_cold_start VAULT [--query Q] [--runs 5] [--edit] [--add 50]
                                     [--fresh] [--out DIR]

Every cold run is `python -m harness --vault VAULT search Q --json` in a new process, started
from this one: its wall seconds (spawn to exit) and its CPU seconds (user + system from
`os.wait4`, the sync's worker processes included). Reported, medians of `--runs`:

- `cold`: the vault as it is (one untimed run first: it catches up whatever the vault's last
  writer left, and fills the page cache);
- `phases`: one more cold run under a probe (the `-c` program below, which then runs
  `python -m harness` itself) that charges wall and CPU seconds to exclusive phases:
  `interpreter` (spawn to the probe's first line), `import` (every module import, wherever it
  happens), `open` (harness.compose.open_vault less what is charged elsewhere), `sync`,
  `derived` (the snapshot and the search structures: loaded from their stores or built),
  `encoder` (the ONNX session and the query's embedding), `search` (Vault.search less the
  rest) and `cli` (what is left: argument parsing, output, exit);
- `importtime`: one `python -X importtime` run: modules imported, their summed self time
  (inflated by the probe itself: read it for the order, not the total), the heaviest packages;
- `warm`: the same search answered by one `rmh serve` through the official MCP client after
  its first search (bench.bench_startup.warm_search), each later call's wall seconds;
- with `--edit`: one note edited as an editor would (a line appended), then the next new
  process's first search (and its phases); with `--add N`: N new notes written, the same;
- with `--fresh`: for each state, the cold output's bytes against those of a copy of the
  vault whose `.rmh/` holds only `index.sqlite` and `learned.sqlite` (every derived store
  built again from the rows), copied before the timed run so both log the same search.

The vault is changed by `--edit`/`--add` (copy it first). Prints one JSON document; `--out DIR`
keeps each run's output there. Wall seconds on a loaded machine are the load's; CPU seconds
and the phases' shares are the measure to compare across trees (PYTHONPATH=TREE selects one).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

DEFAULT_QUERY = "who talked about the billing migration yesterday"
KEEP = ("index.sqlite", "learned.sqlite")  # a fresh build keeps only the rows

# The probe: charges wall and CPU to the innermost running phase (a stack, so every second is
# counted once), writes {phase: [wall, cpu]} to $COLD_PHASES when the process exits.
PROBE = r'''
import os, sys, time
T = time.clock_gettime(time.CLOCK_MONOTONIC)
import atexit, functools, importlib.abc, json, resource
W = {"interpreter": T - float(os.environ["COLD_T0"])}
C = {"interpreter": sum(resource.getrusage(resource.RUSAGE_SELF)[:2])}
stack = [["cli", T, time.process_time()]]
def clock(): return time.clock_gettime(time.CLOCK_MONOTONIC), time.process_time()
def enter(name):
    w, c = clock(); top = stack[-1]
    W[top[0]] = W.get(top[0], 0.0) + w - top[1]; C[top[0]] = C.get(top[0], 0.0) + c - top[2]
    stack.append([name, w, c])
def leave():
    w, c = clock(); top = stack.pop()
    W[top[0]] = W.get(top[0], 0.0) + w - top[1]; C[top[0]] = C.get(top[0], 0.0) + c - top[2]
    stack[-1][1], stack[-1][2] = w, c
def wrap(name, fn):
    @functools.wraps(fn)
    def run(*a, **k):
        enter(name)
        try: return fn(*a, **k)
        finally: leave()
    return run
SPOTS = {
    "harness.compose": [("open_vault", "open")],
    "vault.storage.live": [("Live.opening_sync", "sync"), ("Live.sync", "sync"),
                           ("Live.snapshot", "derived")],
    "vault.retrieval.pipeline": [("SearchEngine._view", "derived")],
    "vault.retrieval.encoders": [("cpu_session", "encoder"), ("MiniLmEncoder.encode", "encoder")],
    "vault.core": [("Vault.search", "search")],
}
def patch(module):
    for dotted, name in SPOTS.get(module.__name__, ()):
        owner, attr = module, dotted
        if "." in dotted:
            cls, attr = dotted.split(".")
            owner = getattr(module, cls, None)
        if owner is not None and hasattr(owner, attr):
            setattr(owner, attr, wrap(name, getattr(owner, attr)))
class After(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname not in SPOTS: return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"): continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None: break
        else: return None
        run = spec.loader.exec_module
        def exec_module(module):
            run(module); patch(module)
        spec.loader.exec_module = exec_module
        return spec
sys.meta_path.insert(0, After())
import _frozen_importlib as boot
find_and_load = boot._find_and_load
def imported(*a, **k):
    enter("import")
    try: return find_and_load(*a, **k)
    finally: leave()
boot._find_and_load = imported
def report():
    w, c = clock(); top = stack[0]
    W[top[0]] = W.get(top[0], 0.0) + w - top[1]; C[top[0]] = C.get(top[0], 0.0) + c - top[2]
    with open(os.environ["COLD_PHASES"], "w") as fh:
        doc = {k: [W.get(k, 0.0), C.get(k, 0.0)] for k in W}
        doc["tree"] = os.path.dirname(os.path.dirname(sys.modules["harness"].__file__))
        json.dump(doc, fh)
atexit.register(report)
import runpy
sys.argv = ["rmh", *sys.argv[1:]]
runpy.run_module("harness", run_name="__main__", alter_sys=True)
'''


def argv(vault: Path, query: str) -> list[str]:
    return ["--vault", str(vault), "search", query, "--json"]


def run_cold(vault: Path, query: str, probe: Path | None = None,
             importtime: bool = False) -> dict[str, Any]:
    """One new process: wall and CPU seconds (rusage of it and its children), its stdout."""
    env = dict(os.environ)
    env.pop("RMH_VAULT", None)
    head = [sys.executable] + (["-X", "importtime"] if importtime else [])
    if probe is not None:
        env["COLD_PHASES"] = str(probe)
        env["COLD_T0"] = repr(time.clock_gettime(time.CLOCK_MONOTONIC))
        cmd = [*head, "-c", PROBE, *argv(vault, query)]
    else:
        cmd = [*head, "-m", "harness", *argv(vault, query)]
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read().decode("utf-8", "replace")
    if proc.returncode != 0:
        raise SystemExit(f"search failed ({proc.returncode}): {stderr[-2000:]}")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "stdout": stdout,
            "stderr": stderr}


def phases(vault: Path, query: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / "phases.json"
        run = run_cold(vault, query, probe)
        marks = json.loads(probe.read_text())
    order = ("interpreter", "import", "open", "sync", "derived", "encoder", "search", "cli")
    return {"wall_s": round(run["wall_s"], 3), "cpu_s": round(run["cpu_s"], 3),
            "phase_wall_s": {k: round(marks[k][0], 3) for k in order if k in marks},
            "phase_cpu_s": {k: round(marks[k][1], 3) for k in order if k in marks},
            "sha256": hashlib.sha256(run["stdout"]).hexdigest()[:16], "tree": marks["tree"]}


def importtime(vault: Path, query: str, top: int = 12) -> dict[str, Any]:
    """Modules imported by one cold search, their summed self microseconds, the heaviest
    top-level imports (cumulative)."""
    run = run_cold(vault, query, importtime=True)
    rows = [m.groups() for m in re.finditer(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)",
                                           run["stderr"])]
    outer = sorted(((int(cum), name) for _, cum, pad, name in rows if len(pad) <= 3),
                   reverse=True)
    return {"modules": len(rows), "self_sum_s": round(sum(int(r[0]) for r in rows) / 1e6, 3),
            "heaviest": [[name, round(cum / 1e6, 3)] for cum, name in outer[:top]]}


def fresh_copy(vault: Path, dest: Path) -> Path:
    """A copy of `vault` whose `.rmh/` keeps only the rows: its next search builds every
    derived structure again (module docstring)."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(vault, dest, symlinks=True)
    for entry in (dest / ".rmh").iterdir():
        if entry.name not in KEEP and not entry.name.startswith(KEEP) and entry.is_file():
            entry.unlink()
    return dest


def cold_round(vault: Path, query: str, runs: int, fresh: Path | None,
               out: Path | None, tag: str) -> dict[str, Any]:
    """The first new process on the vault's state (timed), the fresh build's bytes (with
    `fresh`), `runs` more processes on the same state, and one under the probe."""
    copy = fresh_copy(vault, fresh) if fresh is not None else None
    first = run_cold(vault, query)
    rest = [run_cold(vault, query) for _ in range(runs)]
    probe = phases(vault, query)
    outs = [first["stdout"]] + [r["stdout"] for r in rest]
    doc: dict[str, Any] = {
        "first_wall_s": round(first["wall_s"], 3), "first_cpu_s": round(first["cpu_s"], 3),
        "next_wall_s": round(statistics.median(r["wall_s"] for r in rest), 3) if rest else None,
        "next_cpu_s": round(statistics.median(r["cpu_s"] for r in rest), 3) if rest else None,
        "next_cpu_runs_s": [round(r["cpu_s"], 3) for r in rest],
        "next_wall_runs_s": [round(r["wall_s"], 3) for r in rest],
        "phases": probe,
        "outputs_identical": all(o == outs[0] for o in outs),
        "sha256": hashlib.sha256(first["stdout"]).hexdigest()[:16],
    }
    if copy is not None:
        built = run_cold(copy, query)
        doc["fresh_build_cpu_s"] = round(built["cpu_s"], 3)
        doc["identical_to_fresh_build"] = built["stdout"] == first["stdout"]
        shutil.rmtree(copy)
    if out is not None:
        (out / f"{tag}.json").write_bytes(first["stdout"])
    return doc


def edit_one(vault: Path) -> str:
    """Append a line to one note (the middle one in path order), as an editor would."""
    notes = sorted(p for p in vault.rglob("*.md") if ".rmh" not in p.parts)
    note = notes[len(notes) // 2]
    with open(note, "a", encoding="utf-8") as fh:
        fh.write("\nThe billing migration moved to Friday after the review.\n")
    return str(note.relative_to(vault))


def add_notes(vault: Path, n: int) -> None:
    """`n` new notes in a new folder, a few sentences each (deterministic)."""
    folder = vault / "added-cold-start"
    folder.mkdir(exist_ok=True)
    for i in range(n):
        (folder / f"Added note {i:03d}.md").write_text(
            f"# Added note {i}\n\nTeam {i % 7} reviewed the billing migration on day {i}. "
            f"The cache vendor {i % 5} moved its metrics to the new cluster.\n",
            encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("vault", type=Path)
    ap.add_argument("--query", default=DEFAULT_QUERY)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--warm-runs", type=int, default=10)
    ap.add_argument("--edit", action="store_true", help="then edit one note, search again")
    ap.add_argument("--add", type=int, default=0, metavar="N", help="then add N notes, again")
    ap.add_argument("--fresh", action="store_true", help="compare with a fresh build's bytes")
    ap.add_argument("--no-warm", action="store_true")
    ap.add_argument("--out", type=Path, help="keep each state's JSON output here")
    args = ap.parse_args()
    vault = args.vault.resolve()
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
    fresh = Path(tempfile.mkdtemp(prefix="cold-fresh-")) / "v" if args.fresh else None
    run_cold(vault, args.query)  # untimed: the last writer's leftovers, the page cache
    report: dict[str, Any] = {"vault": str(vault), "query": args.query,
                              "python": sys.executable, "runs": args.runs}
    report["importtime"] = importtime(vault, args.query)
    report["steady"] = cold_round(vault, args.query, args.runs, fresh, args.out, "steady")
    if not args.no_warm:
        import anyio

        from bench.bench_startup import warm_search
        first, warm, hits = anyio.run(warm_search, vault, args.query, True, args.warm_runs)
        cold = [(h["note"], round(h["score"], 4))
                for h in json.loads(report["steady"]["phases"] and
                                    run_cold(vault, args.query)["stdout"])["hits"]]
        report["warm"] = {"serve_first_search_s": round(first, 3),
                          "warm_wall_s": round(statistics.median(warm), 4),
                          "warm_wall_runs_s": [round(w, 4) for w in warm],
                          "hits_equal_cold": hits == cold}
    if args.edit:
        report["edited"] = edit_one(vault)
        report["after_edit"] = cold_round(vault, args.query, args.runs, fresh, args.out,
                                          "after_edit")
    if args.add:
        add_notes(vault, args.add)
        report[f"after_add_{args.add}"] = cold_round(vault, args.query, args.runs, fresh,
                                                     args.out, f"after_add_{args.add}")
    if fresh is not None:
        shutil.rmtree(fresh.parent, ignore_errors=True)
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
