"""Query-dependent learned signals (issue 31, item 6): warmth and co-occurrence act only near
the query's own top hits, never as a global boost.

Warmth (decayed spreading activation) and co-occurrence (notes shown together) are learned
from every session, whatever it was about. Applied to every query alike they lift notes that
were busy lately, related to the query or not (measured: warmth and co-occurrence on cost
unrelated held-out MRR, BENCHMARKS.md). Scoped, each acts only on notes next to what this
query itself found, so a query about other things is left as it was:

    T(Q)        = the query's top `scope` eligible notes by their score before any learned
                  stage (named(d) after stage 5b), ties by path
    near(Q)     = {d : d is wiki-linked to a note of T(Q), or shares a learned
                  co-occurrence edge with one}
    warmth_Q(d) = warmth(d) if d in near(Q), else 0
    edges_Q     = the co-occurrence edges with an endpoint among the PageRank seeds S(Q)
                  (the notes the query names and the top `top_seeds` hits of each first-stage
                  signal: the query's own top hits at stage 2, before fusion exists)

A note in T(Q) is itself warmed only when it is linked to (or co-occurs with) another top
hit. `scope` = 0 restores the global behaviour (every note warmed, every edge walked), for
ablation. Pure numpy over the link matrix rows of the top hits: O(their links + edges).
Measured (NOTES-H.md; bench/bench_learning_agents.py, bench/bench_learning.py): scoped
warmth lifted the citing agent's related questions but lowered two other agents' and cost
LoCoMo's unrelated ones; co-occurrence, scoped or not, lowered related questions for every
agent. Both stay off by default (warmth weight 0, beta 0); the scope is the default when on.

`hold_learned` applies stage 5b's protect hold once more after the learned factors (warmth
and the Q prior): stage 5b pins a note that its neighbourhood lent past a much stronger named
note just below that note, and any positive learned factor then lifted it past by a hair.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ..int_arrays import member
from ..learning.edges import WeightedEdges
from ..plural import counted
from .csr import Csr
from .fusion import Paths, top
from .signals.warmth import warmth_scores
from .stages import protect_stage

F64 = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]
PASSED_FLOOR = 0.5  # the passed-over demotion never more than halves a score (passed_over_stage)
Index = npt.NDArray[np.int64]


def near(links: Csr, cooc: WeightedEdges | None, tops: Index, n: int) -> Mask:
    """near(Q): the notes linked to, or sharing a co-occurrence edge with, a note of `tops`."""
    mask = np.zeros(n, dtype=np.bool_)
    if tops.size == 0:
        return mask
    if links.nnz:
        mask[links[tops].indices] = True
    if cooc is not None and len(cooc):
        ok = cooc.w > 0
        mask[cooc.b[ok & member(cooc.a, tops)]] = True
        mask[cooc.a[ok & member(cooc.b, tops)]] = True
    return mask


def warmth_stage(
    warmth: npt.ArrayLike | None, weight: float, links: Csr,
    cooc: WeightedEdges | None, lifted: F64, eligible: Mask, scope: int, paths: Paths = None,
) -> tuple[str, F64, F64]:
    """Stage 6a: (report, a, warm) with a = warmth_Q clipped to [0, 1] and
    warm = lifted (1 + weight a); `weight` > 0 (the pipeline skips weight 0)."""
    n = int(lifted.shape[0])
    zero = np.zeros(n, dtype=np.float64)
    w = warmth_scores(warmth, n)
    if w is None:
        return "skipped: zero", zero, lifted
    if weight < 0:
        raise ValueError("the warmth weight is a boost scale and must be >= 0")
    where = "everywhere"
    if scope > 0:
        w = w * near(links, cooc, top(lifted, scope, eligible, paths), n)
        if not w.any():
            return f"skipped: nothing warm near the top {scope}", zero, lifted
        where = f"near the top {scope}"
    return f"ran (scale {weight}, {where})", w, lifted * (1.0 + weight * w)


def hold_learned(fused: F64, own: F64, lifted: F64, final: F64, protectors: Mask,
                 ratio: float, ranked: Index) -> F64:
    """Stage 6c: the protect hold (stages.protect_stage, stage 5b) applied again to the scores
    after the learned factors, so that a learned factor cannot take a note that stage 5b held
    just below a named protector past it: the factor multiplies the note's own evidence too
    (own(d) x its factor may still pass), and the protectors' own factors count. Without it a
    note held on its lent score alone passed a direct hit three times as strong by any
    positive prior (bench/bench_learning_agents.py, noisy agent: the one unrelated question
    that lost). The pipeline passes as `protectors` only the named notes whose learned score
    for this query is not negative and that were not surely passed over (learned_stages.py,
    v20): a named note agents pass over holds nothing back (LoCoMo's speaker notes,
    NOTES-H.md). `final` unchanged when nothing learned acted or the hold is off."""
    if ratio == 0 or final is lifted or not protectors.any():
        return final
    factor = np.divide(final, lifted, out=np.ones_like(final), where=lifted > 0)
    return protect_stage(fused, own * factor, final, protectors, ratio, ranked)[1]


def passed_over_stage(final: F64, free: npt.ArrayLike | None, scale: float) -> tuple[str, F64]:
    """Stage 6a: a note passed over more often than it was used, demoted whatever the query,
        final(d) = final(d) max(FLOOR, 1 + scale q(d))   for q(d) < 0,
    q(d) the note's whole negative learned score (vault/learning/replay.py `free_of`, in
    [-neg_scale, 0]: evidence.py, the Beta posterior of "used when examined" below its prior
    rate), with `scale` = `weights.passed`. The position-based click model's evidence that a
    note examined at the top of lists the agent worked from and never taken is not what the
    agent wants (Chuklin, Markov & de Rijke 2015, "Click Models for Web Search", ch. 4; the
    note-level prior as in Kraaij, Westerveld & Hiemstra 2002): on LoCoMo the speakers' notes,
    named by every question and first in most lists, are read by no agent (q ~ -0.22, NOTES-L6).
    A note used at the prior rate or more has q >= 0 and is untouched, so a hub used sometimes
    never sinks; a note with no evidence is untouched. Returns ("", final) when nothing acts."""
    if free is None or scale <= 0:
        return "", final
    neg = np.minimum(np.asarray(free, dtype=np.float64).ravel(), 0.0)
    if neg.shape != final.shape:
        raise ValueError(f"free prior has {neg.shape[0]} entries for "
                         f"{counted(final.shape[0], 'note')}")
    if not neg.any():
        return "", final
    return (f"passed over: {counted(int(np.count_nonzero(neg)), 'note')} (scale {scale})",
            final * passed_factor(neg, scale))


def passed_factor(neg: npt.ArrayLike, scale: float) -> F64:
    """The passed-over demotion's factor max(PASSED_FLOOR, 1 + scale q) of scores q <= 0
    (`passed_over_stage`; `rmh learning NOTE` prints it)."""
    return np.maximum(PASSED_FLOOR, 1.0 + scale * np.asarray(neg, dtype=np.float64))


def free_prior_stage(final: F64, free: npt.ArrayLike | None, scale: float, holders: Mask
                     ) -> tuple[str, F64]:
    """Stage 6b (v5): the topic-free part of the learned prior, q (1 - gate) c per note (c:
    the share of the query's words the note was used for, v8; vault/learning/replay.py
    `free_of`, its positive part), as final(d) (1 + scale free(d)), except
    that it never takes a note past a `holder` (an eligible named note, the pipeline's) that
    ranked above it before this stage: use for other questions says the note is informative,
    not what this query is about, and the notes a query names are its own evidence of that.
    Holders get the lift too. Returns ("", final) when there is nothing to apply."""
    if free is None or scale <= 0:
        return "", final
    n = int(final.shape[0])
    f = np.clip(np.asarray(free, dtype=np.float64).ravel(), 0.0, 1.0)
    if f.shape != (n,):
        raise ValueError(f"free prior has {f.shape[0]} entries for {counted(n, 'note')}")
    if not f.any():
        return "", final
    lifted = final * (1.0 + scale * f)
    if not holders.any():
        return f"topic-free part (scale {scale})", lifted
    out = hold_below(final, lifted, (f > 0) & (final > 0) & ~holders, holders)
    held = int(np.count_nonzero(out < lifted))
    return f"topic-free part (scale {scale}, {held} held below named notes)", out


def expansion_channel(sig: dict[str, F64], weights: dict[str, float],
                      expansion: npt.ArrayLike | None, weight: float, n: int,
                      name: str = "learned") -> str:
    """The learned expansion channel (vault/learning/expansion.py), fused like a signal with
    weight `weight` times its largest value, so that each note adds weight x(d) / (k + rank
    + 1) whatever the other notes' values (max-normalised fusion). Adds to `sig`/`weights`
    under `name` (also the query-log neighbours, asked_channel.py)."""
    if expansion is None:
        return "skipped: nothing learned"
    x = np.clip(np.asarray(expansion, dtype=np.float64).ravel(), 0.0, 1.0)
    if x.shape != (n,):
        raise ValueError(f"expansion has {x.shape[0]} entries for {counted(n, 'note')}")
    top_x = float(x.max(initial=0.0))
    if top_x <= 0.0:
        return "skipped: no learned words of this query"
    sig[name] = x
    weights[name] = weight * top_x
    return f"ran ({counted(int(np.count_nonzero(x)), 'note')}, weight {weight})"


def hold_below(before: F64, after: F64, movers: Mask, holders: Mask) -> F64:
    """`after`, except that no note of `movers` passes a holder that ranked above it in
    `before`: it stays just below the lowest such holder's `after` score (or at its own
    `before` score, if that is higher). A holder ranked above means a higher `before` score
    (a tie holds nothing back, as in `free_prior_stage`)."""
    idx = np.flatnonzero(movers & ~holders)
    h = np.flatnonzero(holders)
    if idx.size == 0 or h.size == 0:
        return after
    hs = h[np.argsort(-before[h], kind="stable")]
    lowest = np.minimum.accumulate(after[hs])  # the lowest holder among the first j + 1
    m = np.searchsorted(-before[hs], -before[idx], side="left")  # holders ranked above d
    ceiling = np.where(m > 0, lowest[np.maximum(m - 1, 0)], np.inf)
    out = after.copy()
    out[idx] = np.minimum(after[idx], np.maximum(before[idx], np.nextafter(ceiling, -np.inf)))
    return out


def hold_unlicensed(before: F64, after: F64, movers: Mask, holders: Mask) -> tuple[F64, int]:
    """(`after` with every note of `movers` held, how many were held): no mover passes a
    holder that ranked above it in `before` (a strictly higher score); it stays just below the
    lowest such holder's score as held (or at its own `before` score, if that is higher), as in
    `hold_below`, except that a holder may itself be a mover, held by the holders above it.
    The held scores are the fixed point of that rule, reached by passes over the notes in
    `before` order (each O(n), as many as the longest chain of notes each lifted past the one
    above it: one or two in practice). Notes no score found (both 0) take no part."""
    cand = np.flatnonzero((before > 0) | (after > 0))
    if cand.size == 0 or not (movers[cand] & (after[cand] > before[cand])).any():
        return after, 0
    order = cand[np.lexsort((cand, -before[cand]))]
    b, a, mv = before[order], after[order], movers[order]
    hd = holders[order] & (a > 0)
    above = np.searchsorted(-b, -b, side="left")  # how many notes score strictly higher
    out = a
    while True:
        lowest = np.minimum.accumulate(np.where(hd, out, np.inf))
        ceiling = np.where(above > 0, lowest[np.maximum(above - 1, 0)], np.inf)
        new = np.where(mv, np.minimum(a, np.maximum(b, np.nextafter(ceiling, -np.inf))), a)
        if np.array_equal(new, out):
            break
        out = new
    held = after.copy()
    held[order] = out
    return held, int(np.count_nonzero(out < a))
