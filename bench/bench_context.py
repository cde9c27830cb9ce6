"""Evidence recall of budgeted context (NDM) vs plain top-k on LoCoMo, per category.

For every LoCoMo question with evidence turn ids, and each word budget, two contexts of at
most that many words are built from the same BM25 scores (the lead's `Bm25Index` over the
turns of the question's conversation, in memory; no vault, no model):

- plain: turns in BM25 order ("Speaker: text"), added while they fit;
- ndm: `vault.conversation.context` (entity rows, anchored dates, the turn before each hit,
  date order, "[date] Speaker: text (expr = date)" labels, which count against the budget);
- ablations: ndm without the time term (dates not used to score), ndm with the DMF Ω prior
  (weight 0.2), ndm without the turn before; and the two constants of the depiction rule
  (issue 16) moved either way: LEX_STRONG (the share of the best lexical score that connects
  a turn on its own, default 0.25) and BEFORE_SHARE (the priority of the turn before a kept
  event, as a share of the event's score, default 0.5). `--variants` picks a subset.

Evidence recall = |evidence ∩ turns shown| / |evidence|, averaged per category (LoCoMo:
1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial). Words are counted as
whitespace-separated tokens of the lines shown. Run from the repository root:

    python bench/bench_context.py [--data PATH] [--budgets 300 600 1200] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vault import (
    Bm25Index,
    EventIndex,
    build_events,
    context_from_items,
    item_of,
    score_parts,
    tokenize,
)
from vault import ContextItem as Item
from vault import ContextWeights as Weights
from vault import load_conversations as load

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
DEFAULT_DATA = "../shared/data/locomo/locomo10.json"  # relative to the repository root


def plain(items: Sequence[Item], lex: npt.NDArray[np.float64], budget: int) -> tuple[set[str], int]:
    """Top-k by BM25 until the budget: the turn ids shown and the words used."""
    order = sorted((i for i in range(len(items)) if lex[i] > 0), key=lambda i: (-lex[i], i))
    shown: set[str] = set()
    used = 0
    for i in order:
        w = len(items[i].render(labels=False).split())
        if used + w <= budget:
            shown.add(items[i].turn_id)
            used += w
        if used >= budget:
            break
    return shown, used


def evidence_ids(raw: Sequence[str]) -> set[str]:
    out: set[str] = set()
    for e in raw:
        out.update(m for m in re.findall(r"D\d+:\d+", str(e)))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--budgets", type=int, nargs="+", default=[300, 600, 1200])
    ap.add_argument("--json", default="")
    ap.add_argument("--variants", nargs="*", default=[], help="only these (plain always runs)")
    args = ap.parse_args(argv)
    raw = json.loads(Path(args.data).read_text(encoding="utf-8"))
    convs = load(json.dumps(raw), "locomo")
    variants: dict[str, Weights | None] = {
        "plain": None,
        "ndm": Weights(),
        "ndm-no-time": Weights(time=0.0),
        "ndm+omega": Weights(omega=0.2),
        "ndm-no-before": Weights(before=False),
        "ndm-lex-0.15": Weights(lex_strong=0.15),
        "ndm-lex-0.5": Weights(lex_strong=0.5),
        "ndm-before-0.25": Weights(before_share=0.25),
        "ndm-before-1.0": Weights(before_share=1.0),
    }
    if args.variants:
        variants = {k: v for k, v in variants.items() if k in args.variants or k == "plain"}
    # acc[variant][budget][category] = [recall sum, n, words sum]
    acc: dict[str, dict[int, dict[int, list[float]]]] = {
        v: {b: {} for b in args.budgets} for v in variants
    }
    t0 = time.perf_counter()
    total_words: list[int] = []
    for sample, conv in zip(raw, convs, strict=True):
        items = [item_of(e) for e in build_events(conv)]
        total_words.append(sum(len(it.render(labels=False).split()) for it in items))
        bm25 = Bm25Index.from_documents([tokenize(it.text) for it in items])
        index = EventIndex.build(items)
        for qa in sample["qa"]:
            ev = evidence_ids(qa.get("evidence", []))
            if not ev:
                continue
            q = str(qa["question"])
            lex = bm25.score(q)
            parts = score_parts(index, q, lex)
            cat = int(qa["category"])
            for b in args.budgets:
                for name, w in variants.items():
                    if w is None:
                        shown, used = plain(items, lex, b)
                    else:
                        ctx = context_from_items(index, q, b, parts, weights=w)
                        shown, used = {ln.item.turn_id for ln in ctx.lines}, ctx.words
                    cell = acc[name][b].setdefault(cat, [0.0, 0.0, 0.0])
                    cell[0] += len(ev & shown) / len(ev)
                    cell[1] += 1
                    cell[2] += used
    elapsed = time.perf_counter() - t0
    report: dict[str, Any] = {"seconds": round(elapsed, 1),
                              "mean_conversation_words": round(float(np.mean(total_words)))}
    cats = sorted({c for v in acc.values() for b in v.values() for c in b})
    print(f"LoCoMo evidence recall ({len(convs)} conversations, mean "
          f"{report['mean_conversation_words']} words each; {elapsed:.1f}s)")
    head = "budget variant          " + " ".join(f"{CATEGORIES.get(c, c)!s:>12}" for c in cats)
    print(head + "          all  words  recall/1k words")
    for b in args.budgets:
        for name in variants:
            cells = acc[name][b]
            per = {c: cells[c][0] / cells[c][1] for c in cats}
            n = sum(cells[c][1] for c in cats)
            overall = sum(cells[c][0] for c in cats) / n
            words = sum(cells[c][2] for c in cats) / n
            report.setdefault(str(b), {})[name] = {
                "recall": {CATEGORIES.get(c, str(c)): round(per[c], 4) for c in cats},
                "all": round(overall, 4), "words": round(words, 1), "questions": int(n),
            }
            print(f"{b:>6} {name:<16} " + " ".join(f"{per[c]:>12.3f}" for c in cats)
                  + f" {overall:>12.3f} {words:>6.0f} {1000 * overall / words:>10.3f}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2, sort_keys=True), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
