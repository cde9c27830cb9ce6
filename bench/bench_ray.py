"""Embedding throughput of `rmh index` on one process against `rmh index --ray local` with 1
and 2 Ray workers, on the same chunks in the same run (issue 17).

The vault is the first --notes turn notes of the first LoCoMo conversation (real text, the
notes `bench/datasets.py` builds, written as markdown with their frontmatter), initialised
without embeddings and copied once per configuration, so every run embeds every chunk:

- local: `rmh index` (one process, one onnxruntime thread: the default);
- ray N: `rmh index --ray local --ray-workers N` (an in-process Ray cluster of N CPUs, N
  actors with one MiniLM each, one thread each), then the same local step, all cached.

Each run is a fresh `rmh` process. Reported per run: the end-to-end wall time and chunks/s;
the embedding time (local: wall minus a no-op `rmh index` on the indexed vault; Ray: the Ray
Data job, from `--json`) and chunks/s over it; Ray's cluster start-up; and whether the cache
holds the same bytes as the local run's.

    python bench/bench_ray.py --data locomo10.json [--notes 150] [--out FILE]

Prints one JSON document (and writes it to --out). Needs `pip install -e '.[ray]'`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from bench.datasets import load_locomo

REPO = Path(__file__).resolve().parents[1]


def _rmh(vault: Path, *args: str) -> tuple[float, dict[str, Any]]:
    """Wall seconds and the --json document of one fresh `rmh` process."""
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env["PYTHONPATH"] = str(REPO)
    start = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "harness", "--vault", str(vault), *args,
                          "--json"], env=env, cwd=REPO, capture_output=True, text=True,
                         check=False, timeout=1800)
    wall = time.perf_counter() - start
    if run.returncode != 0:
        raise SystemExit(f"rmh {' '.join(args)} failed:\n{run.stderr[-2000:]}")
    doc: dict[str, Any] = json.loads(run.stdout)
    return wall, doc


def write_vault(data: Path, notes: int, root: Path) -> int:
    """The first `notes` turn notes (and the speaker notes they link) of the first LoCoMo
    conversation as a vault at `root`; returns the number of notes written."""
    corpus = next(iter(load_locomo(data))).corpus
    turns = [i for i in range(len(corpus)) if not corpus.archived[i]][:notes]
    hubs = [i for i in range(len(corpus)) if corpus.archived[i]]
    for i in sorted([*turns, *hubs]):
        path = root / corpus.paths[i]
        path.parent.mkdir(parents=True, exist_ok=True)
        front = yaml.safe_dump(dict(corpus.frontmatter[i]), sort_keys=True)
        path.write_text(f"---\n{front}---\n{corpus.bodies[i]}\n", encoding="utf-8")
    return len(turns) + len(hubs)


def blobs(vault: Path) -> list[tuple[str, str, bytes]]:
    with sqlite3.connect(vault / ".rmh" / "index.sqlite") as conn:
        rows: list[tuple[str, str, bytes]] = conn.execute(
            "SELECT model, key, vec FROM embeddings ORDER BY model, key").fetchall()
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="LoCoMo JSON (locomo10.json)")
    ap.add_argument("--notes", type=int, default=150, help="turn notes in the vault")
    ap.add_argument("--workers", default="1,2", help="Ray worker counts to run")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rmh-bench-ray-"))
    try:
        base = work / "base"
        written = write_vault(args.data, args.notes, base)
        _rmh(base, "init", "--no-dense")
        runs: list[dict[str, Any]] = []
        reference: list[tuple[str, str, bytes]] = []
        configs = [("local", 0)] + [("ray", int(w)) for w in args.workers.split(",")]
        for path, workers in configs:
            vault = work / f"{path}{workers}"
            shutil.copytree(base, vault)
            extra = ["--ray", "local", "--ray-workers", str(workers)] if workers else []
            wall, doc = _rmh(vault, "index", *extra)
            chunks = int(doc["counts"]["embeddings"])
            row: dict[str, Any] = {"path": path, "workers": workers or 1, "chunks": chunks,
                                   "wall_s": round(wall, 2)}
            if workers:
                row["embed_s"] = doc["ray"]["seconds"]
                row["ray_connect_s"] = doc["ray"]["connect_seconds"]
                row["identical_to_local"] = blobs(vault) == reference
            else:
                noop, _ = _rmh(vault, "index")
                row["embed_s"] = round(wall - noop, 2)
                row["noop_index_s"] = round(noop, 2)
                reference = blobs(vault)
            row["chunks_per_s"] = round(chunks / wall, 1)
            row["embed_chunks_per_s"] = round(chunks / row["embed_s"], 1)
            runs.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
        local = runs[0]
        for row in runs:
            row["x_local_embed"] = round(row["embed_chunks_per_s"] / local["embed_chunks_per_s"],
                                         2)
            row["x_local_wall"] = round(local["wall_s"] / row["wall_s"], 2)
        report = {"notes": written, "cpus": os.cpu_count(), "runs": runs,
                  "note": "2 cores shared with other work: absolute times are noisy"}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = json.dumps(report, indent=2)
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
