"""IVF recall@10 on real MiniLM vectors: the rows of an embedding cache (bench/cache.py).

    python -m bench.bench_dense_real CACHE.sqlite [--queries 200] [--nprobe 4 8 16 32]

Every cached vector becomes a one-chunk note; `--queries` of them, evenly spaced, are held
out and used as queries (real text embeddings, unlike bench/bench_dense_scale.py's synthetic
ones). Reports recall@10 of the approximate notes against exact search and the lists count.
"""

from __future__ import annotations

import argparse
import sqlite3
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from bench.bench_dense_scale import top10
from vault import Corpus, DenseIndex, DenseParams, IvfParams


class TableEncoder:
    """Maps the text "row N" to row N of a fixed matrix (an `Encoder` over stored vectors)."""

    def __init__(self, rows: npt.NDArray[np.float32]) -> None:
        self._rows = rows

    fingerprint = "table"

    @property
    def dim(self) -> int:
        return int(self._rows.shape[1])

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self._rows[[int(t.split()[-1]) for t in texts]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cache")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--nprobe", type=int, nargs="+", default=[4, 8, 16, 32])
    args = ap.parse_args()
    con = sqlite3.connect(f"file:{args.cache}?mode=ro", uri=True)
    blobs = [b for (b,) in con.execute("SELECT vec FROM emb ORDER BY model, key")]
    vecs = np.stack([np.frombuffer(b, dtype=np.float32) for b in blobs])
    held = np.linspace(0, len(vecs) - 1, args.queries).round().astype(np.int64)
    rows = vecs[np.setdiff1d(np.arange(len(vecs)), held)]
    n = rows.shape[0]
    ids = tuple(range(1, n + 1))
    corpus = Corpus(1, ids, tuple(f"{i}.md" for i in ids), tuple("n" for _ in ids),
                    tuple(() for _ in ids), tuple(f"row {i}" for i in range(n)),
                    tuple({} for _ in ids), tuple("" for _ in ids), (), tuple(False for _ in ids))
    enc = TableEncoder(rows)
    exact = DenseIndex.build(corpus, enc, None, params=DenseParams(approx_above=0))
    approx = DenseIndex.build(corpus, enc, None, params=DenseParams(approx_above=1))
    assert approx.ivf is not None
    print(f"real MiniLM vectors: {n:,} rows, {approx.ivf.centroids.shape[0]} lists, "
          f"{len(held)} held-out queries")
    for p in args.nprobe:
        idx = replace(approx, params=replace(approx.params, ivf=IvfParams(nprobe=p)))
        rec = [len(set(top10(exact.score_vector(q)).tolist())
                   & set(top10(idx.score_vector(q)).tolist())) / 10 for q in vecs[held]]
        print(f"| {p} | {np.mean(rec):.3f} |")


if __name__ == "__main__":
    main()
