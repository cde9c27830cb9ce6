"""The note every independent channel ranks first is first: unanimity over plain RRF's channels.

Plain reciprocal rank fusion of the two independent channels, BM25 (the words) and dense (the
meaning), puts first any note both rank first: it has the best rank in every list fused
(Cormack, Clarke & Buettcher 2009). rmh's default adds a second lexical vote (the
conjunctive channel's term pairs: the same words, correlated with BM25; Lee 1997, Vogt &
Cottrell 1999) and weights the channels by their scores, so another note, the pair channel's
first and close behind in both, could outrank the note both independent channels agree on:
below plain RRF on exactly the queries where its two inputs have no doubt (session 38,
NOTES-FUS38.md: on titlecorpus, lme_turns and locomo_facts, queries whose relevant note is
first in both channels and not first in the default).

The rule is the Pareto (unanimity) condition of social choice, the least any aggregation of
preferences is asked to keep (Arrow 1951, "Social Choice and Individual Values"): where every
voter puts d first, the aggregate does. In rank fusion it is the first place of the extended
Condorcet criterion (Dwork, Kumar, Naor & Sivakumar 2001, "Rank aggregation methods for the
web"; Montague & Aslam 2002, "Condorcet fusion for improved retrieval"). The voters are the
channels that read the query independently (bm25, dense); the pair channel and the graph
are refinements of them, not independent voters. No constant.

`first_of_both` finds the note; `first` puts it first in the search's order after the second
pass (which re-votes the head by passage evidence and could demote it) and before the
reranker and the whole-name stage (evidence neither channel has). It stands aside where a
stage with evidence beyond the channels placed a note at or above it: a note the query names
(pipeline stage 5), a learned factor or the time the query names (stage 6): the rule is about
the channels' fusion, and those stages act on it by design.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from .fusion import F64, I64, Paths, top

VOTERS = ("bm25", "dense")  # the independent channels plain RRF fuses (bench/baselines.py)


def first_of_both(signals: Mapping[str, F64], eligible: npt.NDArray[np.bool_],
                  heads: Mapping[str, I64] | None = None, paths: Paths = None) -> int | None:
    """The eligible note that each of VOTERS ranks first among the eligible notes (positive
    scores only, ties by path as fusion.order), or None: a voter missing or with no positive
    eligible score, or the voters' firsts differ. `heads` may give a voter's `top` (computed
    already); it is used when its first is eligible."""
    firsts: list[int] = []
    for name in VOTERS:
        if name not in signals:
            return None
        h = None if heads is None else heads.get(name)
        if h is not None and h.size and eligible[int(h[0])]:
            firsts.append(int(h[0]))
            continue
        best = top(signals[name], 1, eligible, paths)
        if best.size == 0:
            return None
        firsts.append(int(best[0]))
    return firsts[0] if len(set(firsts)) == 1 else None


def first(ranked: list[int], d: int | None, beyond: npt.NDArray[np.bool_]
          ) -> tuple[list[int], str]:
    """`ranked` with `d` moved to the front, and a report for the receipt; unchanged when d
    is None (no common first: `first_of_both`), not in `ranked`, first already, or when
    `beyond` (notes a stage with evidence beyond the channels moved: named, learned, time)
    holds d or a note above it."""
    if d is None:
        return ranked, "skipped: no first common to bm25 and dense"
    if d not in ranked:
        return ranked, "skipped: their first is not in the head"
    at = ranked.index(d)
    if at == 0:
        return ranked, "ran: bm25's and dense's first is first"
    if bool(beyond[ranked[: at + 1]].any()):
        return ranked, "skipped: a named, learned or dated note is placed at or above it"
    return [d, *ranked[:at], *ranked[at + 1:]], f"ran: bm25's and dense's first, from {at + 1}"
