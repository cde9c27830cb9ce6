"""Query-dependent association (issue 31, item 6): learned co-use and spreading activation
that start from THIS query's own top hits and credit only their neighbours.

The global forms (scope.py: a note's decayed activation, and co-occurrence edges inside
PageRank) lift notes that were busy lately whatever the query. Here both are re-cast as the
associative part of a retrieval cue, as in spreading-activation models of memory (Collins &
Loftus 1975, "A spreading-activation theory of semantic processing", Psych. Review; Anderson
1983, "A spreading activation theory of memory", JVLVB: a cue activates only what is
associated with its own sources) and item-item collaborative filtering (Sarwar, Karypis,
Konstan & Riedl 2001, "Item-based collaborative filtering recommendation algorithms", WWW: an
item is scored by its similarity to the items at hand, weighted by how much they are at
hand), as co-occurrence query expansion does for terms (Xu & Croft 1996, "Query expansion
using local and global document analysis", SIGIR):

    T(Q)      = the query's top `seeds` eligible notes by their score before any learned
                stage (named(d) after stage 5b), ties by path; sigma(s) = score(s) /
                score(first seed), so the seeds weigh by how strongly THIS query found them
    couse(d)  = q+(d) * sum_{s in T(Q)} sigma(s) E(s, d) / sum_{s in T(Q)} sigma(s)
    spread(d) = a(d)  * sum_{s in T(Q)} sigma(s) [s linked to d] / sum_{s in T(Q)} sigma(s)

E(s, d) in [0, 1] is the learned co-occurrence edge (vault/learning/formulas.py: npmi times
a frequency and recency factor of the searches that showed both among their top hits; no
self-edges, so a seed is credited only through another seed); q+(d) = max(Q-prior, 0) + the
topic-free part (vault/learning/replay.py prior_of + free_of: q (g + (1 - g) c) for q > 0, c
the share of the query's words the note was used for), the note's positive learned
usefulness as it acts on this query, so a note gets credit for co-occurring with this query's hits
AND having been used; a(d) in [0, 1] is the note's decayed activation (signals/warmth.py).
Both values are in [0, 1] and 0 for every note that is not a neighbour of a seed: a note
co-used with another query's hits gets nothing.

Ranking: each value is a rank-fused channel added after stage 5b, like the learned expansion
channel (scope.py `expansion_channel`): a note adds w x(d) / (k + rank_x(d) + 1), rank_x
among the notes with x > 0 (ties by path), w = `weights.couse` / `weights.spread`. The
values are absolute, not normalised per query, so a weak association lifts little (an edge
seen in a few searches has E ~0.03-0.1): useful weights are ~10-30. Both 0, off, by default:
measured, co-use lifts the knowledge workload's citing agent but costs LoCoMo's unrelated
questions, spreading activation costs LoCoMo both (NOTES-F3.md). Then nothing the channels
lift passes an eligible named note (learned score >= 0) that ranked above it without them
(scope.py `hold_below`; the notes a query names are its own evidence of what it is about).
Receipts: the stage report "association" and, per hit, {couse, spread: raw, rank,
contribution} and `via`, the seeds (note ids) that credited the note, strongest first.

Pure numpy over the seeds' edges and link rows: O(edges + seeds' links); deterministic (the
edges are sorted by (a, b), every sort has a position tie-break).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..learning.edges import WeightedEdges
from ..plural import counted
from .csr import Csr
from .fusion import Paths, positive_ranks, top
from .scope import hold_below

F64 = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]
Index = npt.NDArray[np.int64]

CHANNELS = ("couse", "spread")


@dataclass(frozen=True)
class Association:
    """What the stage computed for one query: the seeds and their weights, each channel's
    value x(d), its rank among x > 0 (-1 elsewhere) and the amount it added to the score."""

    seeds: Index
    sigma: F64
    values: dict[str, F64]
    ranks: dict[str, Index]
    added: dict[str, F64]
    edges: WeightedEdges
    links: Csr

    def receipt(self, i: int, ids: Sequence[int]) -> dict[str, object]:
        """The hit receipt entry of corpus position `i` (module docstring)."""
        out: dict[str, object] = {}
        for name in sorted(self.values):
            x = float(self.values[name][i])
            rank = int(self.ranks[name][i])
            out[name] = {"raw": x, "rank": rank if rank >= 0 else None,
                         "contribution": float(self.added[name][i])}
        out["via"] = [int(ids[s]) for s in self.via(i)]
        return out

    def via(self, i: int) -> list[int]:
        """The seeds (positions) that credited `i`, strongest first (ties in seed order)."""
        credit = np.zeros(self.seeds.shape[0], dtype=np.float64)
        e = self.edges
        for src, dst in ((e.a, e.b), (e.b, e.a)):
            for k, s in enumerate(self.seeds.tolist()):
                hit = (src == s) & (dst == i)
                if hit.any() and "couse" in self.values and self.values["couse"][i] > 0:
                    credit[k] += self.sigma[k] * float(e.w[hit].max())
        if "spread" in self.values and self.values["spread"][i] > 0:
            rows = self.links[self.seeds]
            for k in range(self.seeds.shape[0]):
                if i in rows.indices[rows.indptr[k]:rows.indptr[k + 1]]:
                    credit[k] += self.sigma[k]
        order = np.lexsort((np.arange(self.seeds.shape[0]), -credit))
        return [int(self.seeds[k]) for k in order if credit[k] > 0]


def seeds_of(score: F64, eligible: Mask, m: int, paths: Paths = None) -> tuple[Index, F64]:
    """T(Q) and sigma (module docstring); empty when no eligible note scored."""
    t = top(score, m, eligible, paths)
    if t.size == 0:
        return t, np.zeros(0, dtype=np.float64)
    return t, score[t] / score[t[0]]


def couse_values(edges: WeightedEdges | None, seeds: Index, sigma: F64, useful: F64) -> F64:
    """couse(d) for every note (module docstring); zeros without edges or seeds."""
    n = int(useful.shape[0])
    x = np.zeros(n, dtype=np.float64)
    if edges is None or not len(edges) or seeds.size == 0:
        return x
    pos = np.full(n, -1, dtype=np.int64)
    pos[seeds] = np.arange(seeds.size)
    ks, ds, ws = [], [], []
    for src, dst in ((edges.a, edges.b), (edges.b, edges.a)):
        k = pos[src]
        ok = (k >= 0) & (edges.w > 0)
        ks.append(k[ok])
        ds.append(dst[ok])
        ws.append(np.clip(edges.w[ok], 0.0, 1.0))
    k, d, w = np.concatenate(ks), np.concatenate(ds), np.concatenate(ws)
    # each note's shares are added in seed order (the seeds' total order, ties by path), then
    # by weight: not in edge order, which follows note ids (and so the indexing history)
    at = np.lexsort((w, d, k))
    np.add.at(x, d[at], sigma[k[at]] * w[at])
    return x / float(sigma.sum()) * np.clip(useful, 0.0, 1.0)


def spread_values(links: Csr, seeds: Index, sigma: F64, activation: F64) -> F64:
    """spread(d) for every note (module docstring); zeros without links or seeds."""
    n = int(activation.shape[0])
    x = np.zeros(n, dtype=np.float64)
    if not links.nnz or seeds.size == 0:
        return x
    rows = links[seeds]
    per_seed = np.repeat(sigma, np.diff(rows.indptr).astype(np.intp))
    np.add.at(x, rows.indices.astype(np.int64), per_seed)
    return np.minimum(x / float(sigma.sum()), 1.0) * np.clip(activation, 0.0, 1.0)


def rank_of(x: F64, eligible: Mask, paths: Paths = None) -> Index:
    """rank_x(d) among the eligible notes with x > 0 (descending, ties by path, then
    position: fusion.positive_ranks); -1 elsewhere."""
    return positive_ranks(np.where(eligible, x, 0.0), paths)


def useful_of(prior: npt.ArrayLike | None, free: npt.ArrayLike | None, n: int) -> F64:
    """q+(d) = max(prior, 0) + free, clipped to [0, 1] (module docstring)."""
    q = np.zeros(n, dtype=np.float64)
    for v in (prior, free):
        if v is not None:
            x = np.asarray(v, dtype=np.float64).ravel()
            if x.shape != (n,):
                raise ValueError(f"learned vectors have {x.shape[0]} entries for "
                                 f"{counted(n, 'note')}")
            q += np.maximum(x, 0.0)
    return np.clip(q, 0.0, 1.0)


def association_stage(
    score: F64, eligible: Mask, named: Mask, weights: dict[str, float], seeds: int,
    rrf_k: int, edges: WeightedEdges | None, links: Csr, prior: npt.ArrayLike | None,
    free: npt.ArrayLike | None, activation: npt.ArrayLike | None, paths: Paths = None,
) -> tuple[str, F64, Association | None]:
    """(report, score + what the channels added, held below the `named` notes whose learned
    prior is not negative; the Association, or None when nothing was added). `score` =
    named(d) after stage 5b (warm(d) if the global warmth is on too); `weights` = {"couse":
    w_c, "spread": w_a}, each >= 0; `prior`, `free`, `activation`: the learned vectors."""
    n = int(score.shape[0])
    useful = useful_of(prior, free, n)
    holders = named if prior is None else named & (np.asarray(prior).ravel() >= 0)
    act = np.zeros(n) if activation is None else np.asarray(activation, np.float64).ravel()
    if act.shape != (n,):
        raise ValueError(f"warmth has {act.shape[0]} entries for {counted(n, 'note')}")
    if any(w < 0 for w in weights.values()):
        raise ValueError("association weights must be >= 0")
    if seeds <= 0:
        return "skipped: no seeds (scope 0)", score, None
    t, sigma = seeds_of(score, eligible, seeds, paths)
    if t.size == 0:
        return "skipped: no seeds", score, None
    values: dict[str, F64] = {}
    if weights.get("couse", 0.0) > 0:
        values["couse"] = couse_values(edges, t, sigma, useful)
    if weights.get("spread", 0.0) > 0:
        values["spread"] = spread_values(links, t, sigma, act)
    values = {k: v * eligible for k, v in values.items() if np.any(v * eligible > 0)}
    if not values:
        return f"skipped: nothing learned near the top {t.size}", score, None
    ranks = {k: rank_of(v, eligible, paths) for k, v in values.items()}
    added = {k: np.where(ranks[k] >= 0, weights[k] * v / (rrf_k + ranks[k] + 1.0), 0.0)
             for k, v in values.items()}
    after = score + sum(added[k] for k in sorted(added))
    held = hold_below(score, after, after > score, holders)
    n_held = int(np.count_nonzero(held < after))
    if n_held:  # the receipts book the hold against the channels, in proportion
        share = np.divide(held - score, after - score, out=np.ones_like(score),
                          where=after > score)
        added = {k: v * share for k, v in added.items()}
    parts = ", ".join(f"{k} {counted(int(np.count_nonzero(values[k])), 'note')} "
                      f"(weight {weights[k]})" for k in sorted(values))
    report = f"ran (seeds {t.size}; {parts}; {n_held} held below named notes)"
    return report, held, Association(t, sigma, values, ranks, added,
                                     edges if edges is not None else WeightedEdges.empty(), links)
