"""How similar, to MiniLM, are held-out questions to the training questions whose notes they
need, and to the others? The basis for the query-log neighbours' floor (vault/learning/
asked.py, NOTES-L5.md): a floor separates related from unrelated only where the first
distribution lies above the second.

Knowledge workload (bench/bench_learning_agents.py's split and paraphrases): for each related
held-out question, its cosine to the training question it rewords ("own") and its largest
cosine to any other training question; for each unrelated one, its largest cosine to any
training question. LoCoMo (bench/bench_learning.py's split): for each related held-out
question, its largest cosine to a training question sharing an evidence turn and to one that
shares none; for each unrelated one, its largest cosine to any training question. Then, per
floor, the share of each group at or above it.

Run:  python -m bench.asked_similarity [--conversations 2]
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from bench.bench_learning import DATA
from bench.bench_learning_agents import paraphrase
from bench.datasets import load_locomo
from bench.knowledge import generate
from vault import MiniLmEncoder

F64 = npt.NDArray[np.float64]
FLOORS = (0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9)


def spread(name: str, values: F64) -> None:
    q = np.percentile(values, [5, 25, 50, 75, 95])
    print(f"  {name:34s} n={len(values):3d}  p5 {q[0]:.2f} p25 {q[1]:.2f} median {q[2]:.2f}"
          f" p75 {q[3]:.2f} p95 {q[4]:.2f}")


def shares(groups: dict[str, F64]) -> None:
    for floor in FLOORS:
        print(f"  floor {floor:.2f}: " + ", ".join(
            f"{k} {float(np.mean(v >= floor)):.2f}" for k, v in groups.items()))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--conversations", type=int, default=2)
    args = ap.parse_args(argv)
    enc = MiniLmEncoder()

    def emb(texts: Sequence[str]) -> F64:
        return np.asarray(enc.encode(list(texts)), dtype=np.float64)

    hay = generate(31)
    qs = list(hay.questions)
    random.Random("0:questions").shuffle(qs)
    train = qs[:60]
    trained = set().union(*(q.evidence for q in train))
    unrelated = [q for q in qs[60:] if not q.evidence & trained][:80]
    t = emb([q.text for q in train])
    sim = emb([paraphrase(q.text) for q in train]) @ t.T
    own = np.diag(sim).copy()
    np.fill_diagonal(sim, -1.0)
    print("knowledge (vault seed 31, 60 training questions)")
    groups = {"related own": own, "related other": sim.max(1),
              "unrelated": (emb([paraphrase(q.text) for q in unrelated]) @ t.T).max(1)}
    for k, v in groups.items():
        spread(k, v)
    shares(groups)
    for i, conv in enumerate(load_locomo(DATA)):
        if i >= args.conversations:
            break
        rng = random.Random(f"0:{conv.name}")
        cq = list(conv.questions)
        rng.shuffle(cq)
        tr, held = cq[: len(cq) // 2], cq[len(cq) // 2:]
        seen = set().union(*(q.evidence for q in tr))
        rel = [q for q in held if q.evidence & seen]
        unr = [q for q in held if not q.evidence & seen]
        t = emb([q.text for q in tr])
        s = emb([q.text for q in rel]) @ t.T
        sharing = np.array([[bool(r.evidence & x.evidence) for x in tr] for r in rel])
        print(f"LoCoMo {conv.name}")
        groups = {"related, sharing": np.where(sharing, s, -1.0).max(1),
                  "related, not sharing": np.where(sharing, -1.0, s).max(1),
                  "unrelated": (emb([q.text for q in unr]) @ t.T).max(1)}
        for k, v in groups.items():
            spread(k, v)
        shares(groups)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
