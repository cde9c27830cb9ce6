"""Encoding at the encoder's speed (issue 17): `rmh index` against the bare encoder, and length
batching against the old key-order batching, on the same chunks in the same run.

    python -m bench.bench_encode --data locomo10.json [--conversation 0] [--notes 0]
                                 [--threads 1] [--rounds 1]

The chunks are a real vault's: one LoCoMo conversation written as a folder (one note per turn,
speaker and date in frontmatter, as `bench.datasets` builds it in memory), synced, and chunked
exactly as `rmh index` chunks it (`vault.corpus_chunks`, the engine's defaults); the distinct
chunk texts are what every method embeds. Methods, each on one warm `MiniLmEncoder` (its
onnxruntime session made before timing) unless said otherwise:

- bare: `MiniLmEncoder.encode` over all the chunks in one call (length batching, the best it
  does);
- vault: the `rmh index` path in process on a fresh copy of the folder, cold caches (a new
  index and an empty shared cache): `Vault.init`, `sync`, `engine.prepare` (parse, chunk,
  count tokens, embed, write both caches);
- rmh index: the real command in a subprocess on another fresh copy (an empty `.rmh/`, an
  empty shared cache): the same work plus interpreter start, imports and the model load;
- `rmh index` again on that copy: nothing left to embed, so its fixed cost alone;
- key order, padded: the batching before issue 17 (texts in sorted-key order, runs of 32
  padded to their longest; `MiniLmEncoder.encode_padded`);
- length order, padded: the same padded batches over texts sorted by token length (what
  length batching with padding would give; for scale).

Each method is timed by the wall clock and by CPU seconds (this process and its children:
less sensitive to other load on a shared machine); with --rounds > 1 the rounds interleave the
methods and each method's best round is reported. Vectors of `vault` are checked to be
bit-identical to `bare`. Absolute chunks/s are noisy on a shared machine; the ratios within one
run are the result. Prints a markdown table for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from bench.datasets import Haystack, load_locomo
from vault import (
    MiniLmEncoder,
    SearchEngine,
    SearchParams,
    SharedEmbeddingCache,
    TieredEmbeddingCache,
    Vault,
    corpus_chunks,
)

ROOT = Path(__file__).resolve().parents[1]


def write_folder(hay: Haystack, root: Path, notes: int) -> int:
    """The haystack's notes as markdown files (turns first `notes` only when > 0)."""
    c = hay.corpus
    keep = [i for i in range(len(c)) if not c.archived[i]]
    keep = keep[:notes] if notes > 0 else keep
    hubs = [i for i in range(len(c)) if c.archived[i]]
    for i in [*keep, *hubs]:
        path = root / c.paths[i]
        path.parent.mkdir(parents=True, exist_ok=True)
        front = yaml.safe_dump(dict(c.frontmatter[i]), sort_keys=True, allow_unicode=True)
        path.write_text(f"---\n{front}---\n{c.bodies[i]}\n", encoding="utf-8")
    return len(keep)


def chunk_texts(root: Path, enc: MiniLmEncoder) -> list[str]:
    """The distinct chunk texts `rmh index` embeds for the folder, sorted."""
    params = SearchParams()
    with Vault.init(root, auto_sync=False) as v:
        v.sync()
        texts, _, _ = corpus_chunks(v.corpus(), enc.count_tokens, params.max_tokens,
                                    params.max_note_units)
    shutil.rmtree(root / ".rmh")
    return sorted(set(texts))


Clock = tuple[float, float]  # (wall seconds, CPU seconds of this process and its children)


def clock() -> Clock:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter(), time.process_time() + kids.ru_utime + kids.ru_stime


def since(t0: Clock) -> Clock:
    t1 = clock()
    return t1[0] - t0[0], t1[1] - t0[1]


def vault_path(src: Path, work: Path, enc: MiniLmEncoder) -> tuple[Clock, np.ndarray, list[str]]:
    """`rmh index`'s work in process on a fresh copy with cold caches: its clock, its vectors
    (one row per distinct chunk text, in text order) and those texts."""
    root = work / "vault-copy"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(src, root)
    shared = work / "shared-inproc.sqlite"
    shared.unlink(missing_ok=True)
    params = SearchParams()
    t0 = clock()
    with Vault.init(root, auto_sync=False, engine=lambda own: SearchEngine(
            params, encoder=enc,
            cache=TieredEmbeddingCache(own, SharedEmbeddingCache(shared)))) as v:
        v.sync()
        v.engine.prepare(v.corpus())
        took = since(t0)
        texts, _, _ = corpus_chunks(v.corpus(), enc.count_tokens, params.max_tokens,
                                    params.max_note_units)
        dense = v.engine._view(v.corpus()).dense
        assert dense is not None
        rows = {t: dense.matrix[i] for i, t in enumerate(texts)}
    keys = sorted(rows)
    return took, np.stack([rows[t] for t in keys]), keys


def rmh_index(src: Path, work: Path) -> Clock:
    """The real `rmh index` on a fresh copy, cold: an empty `.rmh/` (what `Vault.init` makes;
    no index yet, so it parses every note) and an empty shared cache."""
    root = work / "cli-copy"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(src, root)
    (root / ".rmh").mkdir()
    (work / "shared-cli.sqlite").unlink(missing_ok=True)
    return rmh_again(work)


def cli_env(work: Path) -> dict[str, str]:
    shared = work / "shared-cli.sqlite"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RMH_EMBED_CACHE": str(shared)}
    env.pop("RMH_CONFIG", None)
    return env


def rmh_again(work: Path) -> Clock:
    """`rmh index` on the copy `rmh_index` left: after it, the fixed cost alone (interpreter,
    imports, model load, no-op sync, every vector read from the vault's cache)."""
    t0 = clock()
    subprocess.run([sys.executable, "-m", "harness", "--vault", str(work / "cli-copy"), "index"],
                   env=cli_env(work), check=True, capture_output=True)
    return since(t0)


def timed(fn: Callable[[], Any]) -> Clock:
    t0 = clock()
    fn()
    return since(t0)


BARE = "bare encoder (length batches)"
BEFORE = "key order, padded (before)"
AGAIN = "`rmh index` again: nothing to embed"


def run(data: Path, conversation: int, notes: int, threads: int, rounds: int) -> dict[str, Any]:
    hay = next(h for i, h in enumerate(load_locomo(data)) if i == conversation)
    enc = MiniLmEncoder(threads=threads)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        src = work / "src"
        turns = write_folder(hay, src, notes)
        texts = chunk_texts(src, enc)
        lengths = [min(enc.count_tokens(t), 256) for t in texts]
        # warm up: the session made and the index path's modules imported before any timing
        write_folder(hay, work / "warm", 5)
        vault_path(work / "warm", work, enc)
        by_length = sorted(texts, key=lambda t: (enc.count_tokens(t), t))
        # sorted-key order (sha256 of the text), as encode_cached ordered them before issue 17
        by_key = sorted(texts, key=lambda t: hashlib.sha256(t.encode("utf-8")).hexdigest())
        bare_rows = enc.encode(texts)
        methods: dict[str, Callable[[], Clock]] = {BARE: lambda: timed(lambda: enc.encode(texts))}

        def vault_once() -> Clock:
            took, rows, keys = vault_path(src, work, enc)
            assert keys == texts and np.array_equal(rows, bare_rows), "vault != bare encoder"
            return took

        methods["vault path (sync + prepare)"] = vault_once
        if threads == 1:  # rmh's own encoder runs on one thread
            methods["`rmh index` (subprocess)"] = lambda: rmh_index(src, work)
            methods[AGAIN] = lambda: rmh_again(work)
        methods[BEFORE] = lambda: timed(lambda: enc.encode_padded(by_key))
        methods["length order, padded"] = lambda: timed(lambda: enc.encode_padded(by_length))
        seen: dict[str, list[Clock]] = {name: [] for name in methods}
        for _ in range(rounds):  # rounds interleave the methods, so load hits them alike
            for name, fn in methods.items():
                seen[name].append(fn())
        padded = enc.encode_padded(by_key[:200])
        same = sum(bool(np.array_equal(padded[i], enc.encode([t])[0]))
                   for i, t in enumerate(by_key[:200]))
    return {
        "conversation": hay.name, "turns": turns, "chunks": len(texts),
        "tokens_p50": float(np.percentile(lengths, 50)),
        "tokens_p90": float(np.percentile(lengths, 90)), "threads": threads, "rounds": rounds,
        "wall": {k: min(c[0] for c in v) for k, v in seen.items()},
        "cpu": {k: min(c[1] for c in v) for k, v in seen.items()},
        "padded_rows_bit_identical": same, "padded_rows_checked": min(200, len(texts)),
    }


def render(r: dict[str, Any]) -> str:
    n = r["chunks"]
    wall, cpu = r["wall"], r["cpu"]
    lines = [
        f"{r['conversation']}: {r['turns']} turns, {n} distinct chunks (tokens p50 "
        f"{r['tokens_p50']:.0f}, p90 {r['tokens_p90']:.0f}), {r['threads']} encoder "
        f"thread(s), best of {r['rounds']} interleaved round(s)",
        "",
        "| method | wall s | chunks/s | CPU s | chunks/CPU-s | vs bare (wall / CPU) "
        "| vs key order, padded (wall / CPU) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name in wall:
        w, c = wall[name], cpu[name]
        if name == AGAIN:  # embeds nothing: a fixed cost, not a rate
            lines.append(f"| {name} | {w:.1f} | — | {c:.1f} | — | — | — |")
            continue
        lines.append(
            f"| {name} | {w:.1f} | {n / w:.1f} | {c:.1f} | {n / c:.1f} "
            f"| {wall[BARE] / w:.2f}x / {cpu[BARE] / c:.2f}x "
            f"| {wall[BEFORE] / w:.2f}x / {cpu[BEFORE] / c:.2f}x |"
        )
    lines += ["", f"padded key-order rows bit-identical to the text embedded alone: "
              f"{r['padded_rows_bit_identical']}/{r['padded_rows_checked']} (this machine)"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="LoCoMo's locomo10.json")
    parser.add_argument("--conversation", type=int, default=0)
    parser.add_argument("--notes", type=int, default=0, help="first N turns only (0: all)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    print(render(run(args.data, args.conversation, args.notes, args.threads, args.rounds)))


if __name__ == "__main__":
    main()
