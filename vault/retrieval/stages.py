"""The link stages after fusion: context (stage 4) and named (stage 5) of the pipeline, and
the whole-name stage (8) after the rerank.

Formulas (the pipeline's module docstring gives them in context):

    N(x)(d)  = max over d's eligible link neighbours n of x(n)       (0 with none)
    ctx(d)   = fused(d) + g N(fused)(d) + g^2 N(N(fused))(d)         g = w_context
    named(d) = ctx(d) (1 + eta [d is named, or linked to a named note])   eta = w_named
    own(d)   = fused(d) (1 + eta [d is named])           what d's own evidence earns
    out(d)   = min(named(d), max(own(d), C(d)))          C(d) = min{named(h) : h named,
                                 eligible, fused(h) >= R fused(d), fused(h) > fused(d)}

Lending without burying (protect_stage, R = w_protect): the neighbourhood may lift a note up
to, never past, a note the query names whose own first-stage evidence is R times stronger (a
clearly stronger direct hit); its own evidence (and its own name) still count in full. C(d)
is a prefix minimum over notes sorted by fused score, so the stage is O(n log n). Only named
notes protect: with every note as a protector, LoCoMo recall@10 fell from 0.757 to 0.731
(R = 2) and 0.747 (R = 3), since there the answer is often the turn next to a stronger hit;
on LoCoMo the named notes are the archived speaker hubs, so the stage changes nothing there.
R chosen on bench/knowledge.py (BENCHMARKS.md); weight 0 skips it (the old lending).

graph_stage (stage 2) runs personalized PageRank seeded by the first-stage results.

Each stage returns (its stage report, its output); the report is "ran (...)" or "skipped: why".
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from ..int_arrays import member
from ..learning.edges import WeightedEdges
from ..plural import counted
from .csr import Csr
from .fusion import Paths
from .signals.graph import Walk, adjacency, pagerank, seed_vector

F64 = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]
Index = npt.NDArray[np.int64]
DENSE_SHARE = 8  # context sums whole vectors once its entries exceed 1/8 of the notes (speed only)


def neighbor_max(adj: Csr, scores: F64, eligible: npt.NDArray[np.bool_]) -> F64:
    """out[d] = max of `scores` over d's eligible link neighbours (0 when it has none).

    `adj` is symmetric (links count in either direction), so the neighbours of d that lend
    are exactly the eligible notes with a positive score that have d among their neighbours:
    only their rows are read and scattered (`np.maximum.at`), O(their links), not O(all
    links). Archived (ineligible) neighbours do not count, so a structural hub lends no score.
    """
    return _neighbor_max(adj.tocsr(), scores, eligible, None)[0]


def _neighbor_max(csr: Csr, scores: F64, eligible: Mask, support: Index | None
                  ) -> tuple[F64, Index]:
    """`neighbor_max` and the ascending positions where it may be positive (the lenders'
    neighbours). `support`, when given, holds every position where `scores` is positive, so
    the lenders are found among those, not by a pass over all n."""
    out, nbr = _lend(csr, scores, eligible, support)
    if nbr.size == 0:
        return out, np.zeros(0, dtype=np.int64)
    mark = np.zeros(out.shape[0], dtype=np.bool_)  # a byte per note: cheaper than a sort
    mark[nbr] = True
    return out, np.flatnonzero(mark)


def _lend(csr: Csr, scores: F64, eligible: Mask, support: Index | None
          ) -> tuple[F64, npt.NDArray[np.integer]]:
    """`neighbor_max` and the neighbour entries it was scattered to (repeats included)."""
    n = int(csr.shape[0])
    out = np.zeros(n, dtype=np.float64)
    if support is None:
        src = np.flatnonzero((scores > 0) & eligible)
    else:
        src = support[(scores[support] > 0) & eligible[support]]
    if csr.nnz == 0 or src.size == 0:
        return out, np.zeros(0, dtype=np.int64)
    sub = csr[src]  # whole rows copied (a hub's thousands of links at once)
    nbr = sub.indices
    np.maximum.at(out, nbr, np.repeat(scores[src], np.diff(sub.indptr)))
    return out, nbr


def context_stage(links: Csr, fused: F64, eligible: Mask, gamma: float,
                  support: Index | None = None) -> tuple[str, F64]:
    """Stage 4: g N(fused) + g^2 N(N(fused)), the context added to `fused`; `support` (the
    positions where `fused` may be positive, ascending), when known, spares passes over n."""
    n = int(links.shape[0])
    if gamma == 0:
        return "skipped: weight 0", np.zeros(n, dtype=np.float64)
    if links.nnz == 0:
        return "skipped: no links", np.zeros(n, dtype=np.float64)
    csr = links.tocsr()
    hop1, near = _neighbor_max(csr, fused, eligible, support)
    hop2, far = _lend(csr, hop1, eligible, near)
    if (near.shape[0] + far.shape[0]) * DENSE_SHARE >= n:
        # many notes reached (a hub lends to its thousands of neighbours): whole-vector
        # arithmetic, the same numbers (0 where hop1 = hop2 = 0) without the gathers
        out = gamma * hop1
        hop2 *= gamma * gamma
        out += hop2
        return f"ran (weight {gamma}, two hops)", out
    out = np.zeros(n, dtype=np.float64)
    mark = np.zeros(n, dtype=np.bool_)
    mark[near] = True
    mark[far] = True
    both = np.flatnonzero(mark)  # outside it hop1 = hop2 = 0, and so is the sum
    out[both] = gamma * hop1[both] + gamma * gamma * hop2[both]
    return f"ran (weight {gamma}, two hops)", out


def named_stage(links: Csr, named: list[int], ctx: F64, eligible: Mask, eta: float
                ) -> tuple[str, F64]:
    """Stage 5: lift the named notes and the notes linked to them by (1 + eta)."""
    if eta == 0:
        return "skipped: weight 0", ctx
    if eta < 0:
        raise ValueError("the named weight is a boost scale and must be >= 0")
    if not named:
        return "skipped: nothing named", ctx
    linked = np.zeros(int(links.shape[0]), dtype=np.bool_)
    linked[named] = True
    linked[links[named].indices] = True  # their link neighbours
    linked &= eligible
    if not linked.any():
        return f"skipped: {len(named)} named, none linked", ctx
    return (
        f"ran ({len(named)} named, {int(linked.sum())} linked, scale {eta})",
        ctx * (1.0 + eta * linked),
    )


def protect_stage(fused: F64, own: F64, lifted: F64, protectors: Mask, ratio: float,
                  ranked: Index) -> tuple[str, F64]:
    """Stage 5b: hold each lifted note below every protector R times stronger on its own
    evidence. `protectors` are the direct hits that hold others down (the pipeline: eligible
    named notes); `ranked` is the order by fused score of the notes with a positive fused
    score, best first (fusion.top): notes found by nothing sort after them and lend nothing.
    """
    if ratio == 0:
        return "skipped: weight 0", lifted
    if not protectors.any():
        return "skipped: no protected notes", lifted
    if ratio < 1:
        raise ValueError("the protect ratio must be >= 1 (or 0: off)")
    if ranked.size == 0:
        return f"ran (ratio {ratio}, 0 held)", lifted
    f_sorted = fused[ranked]
    guard = np.where(protectors[ranked], lifted[ranked], np.inf)
    prefix = np.minimum.accumulate(guard)
    # only a note lifted above its own evidence and above the weakest guard can be held
    idx = np.flatnonzero(lifted > np.maximum(own, np.nextafter(prefix[-1], -np.inf)))
    fd = fused[idx]
    # m(d) = how many notes have fused >= R fused(d) (f_sorted is descending)
    # and fused > fused(d), so a note found by nothing is held below every note found)
    m = np.minimum(np.searchsorted(-f_sorted, -ratio * fd, side="right"),
                   np.searchsorted(-f_sorted, -fd, side="left"))
    ceiling = np.where(m > 0, prefix[np.maximum(m - 1, 0)], np.inf)
    out = lifted.copy()
    out[idx] = np.minimum(lifted[idx], np.maximum(own[idx], np.nextafter(ceiling, -np.inf)))
    held = int(np.count_nonzero(out < lifted))
    return f"ran (ratio {ratio}, {held} held)", out


def whole_name_stage(ranked: list[int], named: list[int], final: F64, eligible: Mask
                     ) -> tuple[list[int], str]:
    """Stage 8: the notes whose title or alias is the whole query first, in the order the
    stages before gave them (then by final score, then position), the rest after them as they
    were. A query that is a note's name asks for that note, as Obsidian's quick switcher and
    a known-item search read it; before this stage a hub that links to the note and holds its
    name in its text could rank above it (every note the name-run stage lifts gets the same
    factor). A note no signal found (final 0) or not eligible is not put first. Returns the
    order and the stage report, as second_pass.py does."""
    keep = [i for i in named if eligible[i] and final[i] > 0]
    if not keep:
        return ranked, "skipped: the query is no note's whole name"
    at = {d: r for r, d in enumerate(ranked)}
    keep.sort(key=lambda i: (at.get(i, len(ranked)), -float(final[i]), i))
    first = set(keep)
    out = keep + [d for d in ranked if d not in first]
    moved = sum(1 for r, d in enumerate(keep) if at.get(d) != r)
    return out, f"ran ({len(keep)} named whole, {moved} moved up)"


def incident(cooc: WeightedEdges | None, seeds: F64, scope: int) -> WeightedEdges | None:
    """edges_Q: the co-occurrence edges touching a seed (all of them with `scope` = 0)."""
    if cooc is None or not len(cooc) or scope <= 0:
        return cooc
    s = np.flatnonzero(seeds > 0)
    keep = member(cooc.a, s) | member(cooc.b, s)
    return WeightedEdges(cooc.a[keep], cooc.b[keep], cooc.w[keep])


def graph_stage(
    links: Csr,
    walk: Walk,
    named: list[int],
    sig: Mapping[str, F64],
    heads: Mapping[str, Index],
    cooccurrence: WeightedEdges | None,
    alpha: float,
    beta: float,
    top_seeds: int,
    push_above: int,
    scope: int,
    paths: Paths = None,
) -> tuple[str, F64 | None]:
    """Stage 2 of the pipeline: personalized PageRank (signals/graph.py, damping `alpha`)
    over the links plus the co-occurrence edges that touch a seed (`incident`, `scope`)
    scaled by `beta`, seeded by the `named` notes and the first `top_seeds` of bm25 and dense
    (`heads` when taken); None when there are no edges or no seeds."""
    n = int(links.shape[0])
    adj = links
    first = [s for s in ("bm25", "dense") if s in sig]
    seeds = seed_vector(n, named, [sig[s] for s in first], top_seeds,
                        [heads.get(s) for s in first], paths)
    cooccurrence = incident(cooccurrence, seeds, scope)
    if cooccurrence is not None and len(cooccurrence) and beta > 0:
        adj = adj + adjacency(n, (), cooccurrence, beta)
        walk = Walk.build(adj)
    if adj.nnz == 0:
        return "skipped: no links", None
    if not seeds.any():
        return "skipped: no seeds", None
    r, iters = pagerank(walk, seeds, alpha, push_above=push_above)
    seeded = int(np.count_nonzero(seeds))
    return f"ran ({len(named)} named, {counted(seeded, 'seed')}, {counted(iters, 'iteration')})", r
