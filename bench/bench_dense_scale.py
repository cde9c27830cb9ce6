"""The dense signal at 10^5 and 10^6 notes: exact float32 against the int8 IVF.

    python -m bench.bench_dense_scale --notes 100000 1000000 [--queries 200] [--nprobe 8 16 32]

Vectors come from bench/synthetic_encoder.py (SYNTHETIC, not MiniLM: embedding 10^6 notes
with the real encoder takes days here), over generated notes about 2,000 topics, chunked
with a 24-word window so a note is ~1.6 chunks, as real vaults are. For each size: build
time, time to apply a one-note edit (`DenseIndex.updated`), query p50/p95 (score_vector
plus the top 10; the query's embedding not included), the bytes of the index's arrays, and
recall@10 of the approximate notes against exact search over the same queries.
"""

from __future__ import annotations

import argparse
import resource
import time
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from bench.synthetic_encoder import SyntheticEncoder
from vault import Corpus, CorpusDelta, DenseIndex, DenseParams, IvfParams

TOPICS, TOPIC_WORDS, COMMON = 2000, 12, 5000
WINDOW = 24  # words per chunk


def corpus(n: int, seed: int = 17) -> Corpus:
    rng = np.random.default_rng(seed)
    topic = rng.integers(0, TOPICS, n)
    length = rng.integers(8, 40, n)
    own = rng.integers(0, TOPIC_WORDS, (n, 40))
    common = rng.integers(0, COMMON, (n, 40))
    mix = rng.random((n, 40)) < 0.7
    bodies = []
    for i in range(n):
        ws = [f"t{topic[i]}w{own[i, j]}" if mix[i, j] else f"c{common[i, j]}"
              for j in range(int(length[i]))]
        cut = len(ws) // 2
        bodies.append(" ".join(ws[:cut]) + ".\n\n" + " ".join(ws[cut:]) + ".")
    ids = tuple(range(1, n + 1))
    return Corpus(1, ids, tuple(f"n{i}.md" for i in ids), tuple(f"note {i}" for i in ids),
                  tuple(() for _ in ids), tuple(bodies), tuple({} for _ in ids),
                  tuple("" for _ in ids), (), tuple(False for _ in ids))


def queries(enc: SyntheticEncoder, k: int, seed: int = 5) -> npt.NDArray[np.float32]:
    rng = np.random.default_rng(seed)
    texts = []
    for _ in range(k):
        t = int(rng.integers(0, TOPICS))
        texts.append(" ".join([f"t{t}w{w}" for w in rng.integers(0, TOPIC_WORDS, 4)]
                              + [f"c{int(rng.integers(0, COMMON))}"]))
    return enc.encode(texts)


def top10(scores: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    part = np.argpartition(-scores, 10)[:10]
    order = np.lexsort((part, -scores[part]))
    return part[order][scores[part][order] > 0]


def timed_queries(idx: DenseIndex, qs: npt.NDArray[np.float32]) -> tuple[list[float], list[
        npt.NDArray[np.int64]]]:
    times, tops = [], []
    for q in qs:
        t0 = time.perf_counter()
        tops.append(top10(idx.score_vector(q)))
        times.append(time.perf_counter() - t0)
    return times, tops


def edit_time(idx: DenseIndex, c: Corpus, enc: SyntheticEncoder) -> float:
    bodies = list(c.bodies)
    bodies[len(bodies) // 3] = "an edited note about t7w1 t7w2 and c3."
    nxt = replace(c, generation=2, bodies=tuple(bodies),
                  delta=CorpusDelta(1, len(c), (len(bodies) // 3,)))
    t0 = time.perf_counter()
    idx.updated(nxt, enc, None, WINDOW)
    return time.perf_counter() - t0


def ms(xs: list[float], p: float) -> float:
    return float(np.percentile(np.asarray(xs) * 1000, p))


def run(n: int, k: int, nprobes: list[int]) -> list[str]:
    c, enc = corpus(n), SyntheticEncoder()
    qs = queries(enc, k)
    rows = []
    t0 = time.perf_counter()
    exact = DenseIndex.build(c, enc, None, WINDOW, params=DenseParams(approx_above=0))
    build = time.perf_counter() - t0
    times, truth = timed_queries(exact, qs)
    chunks = exact.n_chunks
    rows.append(f"| {n:,} | {chunks:,} | exact float32 | – | {build:.1f} | "
                f"{edit_time(exact, c, enc) * 1000:.0f} | {ms(times, 50):.1f} | "
                f"{ms(times, 95):.1f} | {exact.nbytes / 2**20:.0f} | 1.000 |")
    print(rows[-1], flush=True)
    del exact
    params = DenseParams(approx_above=1)
    t0 = time.perf_counter()
    approx = DenseIndex.build(c, enc, None, WINDOW, params=params)
    build = time.perf_counter() - t0
    edit = edit_time(approx, c, enc)
    assert approx.ivf is not None
    lists = approx.ivf.centroids.shape[0]
    for p in nprobes:
        idx = replace(approx, params=replace(params, ivf=IvfParams(nprobe=p)))
        times, got = timed_queries(idx, qs)
        recall = np.mean([len(set(a.tolist()) & set(b.tolist())) / max(1, len(a))
                          for a, b in zip(truth, got, strict=True)])
        rows.append(f"| {n:,} | {chunks:,} | IVF int8, {lists} lists | {p} | {build:.1f} | "
                    f"{edit * 1000:.0f} | {ms(times, 50):.1f} | {ms(times, 95):.1f} | "
                    f"{approx.nbytes / 2**20:.0f} | {recall:.3f} |")
        print(rows[-1], flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--nprobe", type=int, nargs="+", default=[8, 16, 32])
    args = ap.parse_args()
    print("vectors: SYNTHETIC (bench/synthetic_encoder.py), not MiniLM")
    print("| notes | chunks | index | nprobe | build s | one-note edit ms | query p50 ms | "
          "query p95 ms | index MiB | recall@10 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in args.notes:
        run(n, args.queries, args.nprobe)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"peak RSS of the benchmark process: {peak:.2f} GiB")


if __name__ == "__main__":
    main()
