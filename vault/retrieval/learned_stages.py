"""Stage 6 after warmth (pipeline.py): the learned prior, its topic-free part and the holds
that keep every learned input below the notes a query names.

    final(d) = warm(d) (1 + PRIOR_SCALE clip(Q(d), -1, 1))            the gated prior
    final(d) *= max(0.5, 1 + w_passed q(d)) for q(d) < 0, whole      scope.passed_over_stage
    final(d) *= 1 + PRIOR_SCALE free(d), never past a named note      scope.free_prior_stage
    the protect hold once more                                        scope.hold_learned
    the learned channel's hold                                        scope.hold_below
    the licence hold (v24, v25)                                       scope.hold_unlicensed
    a note used for the query, just above a thin note restating it    cited.above_pointers
      that links to it (v26)
      or, used in part, above such notes just above it only (v27)

The last: the learned expansion channel (learning v6, vault/learning/expansion.py) was fused
with the query-dependent signals at stage 3, so its lift reaches every later stage; nothing it
lifted may pass an eligible named note (learned score >= 0) that ranked above it in the same
ranking without the channel. That ranking is computed once more (`without`), only when the
channel ran and the query names such a note. Holders are the eligible named notes whose
learned score for this query is not negative and which were not surely passed over: a named
note whose confident pass-over score (evidence.py `passed_score`: even the optimistic end of
its posterior use rate is below the prior rate) is negative holds nothing back, whatever
`weights.passed` says (learning v20). It is not demoted by that (only `weights.passed` > 0
demotes it); it only stops holding the learned lifts of other notes below it, which were
gated by this query's own evidence. Before v20 the gated score alone decided, and a question
whose phrases the note's skip bag did not hold gave it -0.0, so a speaker's note that LoCoMo's
agents passed over in every session (q ~ -0.22) still held below it the turn the agent used
for an earlier question about the same thing: conversations 1-4, "When was Jon in Rome?"
stayed at rank 2 with q g c = 0.67 on its turn (NOTES-LRN16.md). The intent was always that
such a note holds nothing back (scope.py `hold_learned`, NOTES-H.md); the gate had hidden it.

The licence hold (learning v24): a learned lift may place a note d above a note h that the
learning-free ranking (the scores before stage 6, the channel's `without` run when it ran)
put above it only when d's lift is wholly about the query (`whole`: q > 0 and its strict
topic gate is 1, vault/learning/replay.py `whole_of`), or h's own learned score on this query
is negative; otherwise d stays just below h. A used result is evidence of a preference only
against the results it was compared with for that query (Joachims 2002, "Optimizing search
engines using clickthrough data", KDD); use for other questions, or for a share of this one's
phrases, says the note is useful, not that it beats what this query's own evidence ranks above
it. The hold of the named notes above, applied to every note; no constant. Measured as a
prototype (NOTES-LRN21.md): LoCoMo 1-4 unrelated questions at the second asking -0.0078 ->
-0.0032, help vault (cites) -0.025 -> 0; first-asking related lift on LoCoMo -0.011.
Warmth and association (off by default) count as learning-free here.

Learning v25: a note passed over for this query holds nothing back only when the pass-over is
wholly about the query (`whole` with q < 0: the strict gate of its skip bag is 1, the query's
new pairings and new words counting against it as against a use bag); v24 let any lift pass a
note whose learned score on the query was negative, whatever that score was about. A skip is a
preference of the results used over the one skipped in the list it was shown in, for that
query (Joachims 2002; "click > skip above", Joachims et al. 2005, "Accurately interpreting
clickthrough data as implicit feedback", SIGIR); a pass-over for another question sharing a
phrase is no comparison against this query's ranking, any more than a use for one. Measured
(NOTES-LRN24.md): the help vault's noisy agent, which reads the top 3 whatever they are,
passed over "Security and privacy" below pages it read for other "publish site" questions,
and for "How do I add a password to my Publish site?" three Publish pages lifted by a gate
partly about it (strict 0.30) passed it, MRR 1 -> 0.25; unrelated at the second asking
-0.0150 -> 0. Not made symmetric: keeping a note demoted by a partial pass-over above the
notes below it (the hold's mirror) cost LoCoMo 1-4's first asking -0.0126 [-0.0261, -0.0021].
No constant; nothing tuned.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping

import numpy as np
import numpy.typing as npt

from ..plural import counted
from .cited import Pointers, above_pointers
from .hits import Scored
from .scope import (
    free_prior_stage,
    hold_below,
    hold_learned,
    hold_unlicensed,
    passed_over_stage,
)

__all__ = ["Pointers", "learned_stage"]

F64 = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]


def learned_stage(warm: F64, prior: npt.ArrayLike | None, free_prior: npt.ArrayLike | None,
                  scale: float, protect: float, fused: F64, own: F64, lifted: F64,
                  ranked: npt.NDArray[np.int64], named: Mask, stages: MutableMapping[str, str],
                  without: Callable[[], Scored] | None, passed: float = 0.0,
                  whole: npt.ArrayLike | None = None, eligible: Mask | None = None,
                  cites: Pointers | None = None) -> F64:
    """The final scores from `warm` (module docstring); `named` = the eligible named notes,
    `without` = the same query scored without the learned channel (None when the channel did
    not run), `passed` = `weights.passed`, `whole` = the notes whose lift is wholly about the
    query (learning's `Learned.whole`; None: every lift moves freely), `eligible` = the notes
    that may be hits, `cites` = what cited.py's step reads (None: off).
    Writes the "prior" (and "learned") stage reports."""
    n = int(warm.shape[0])
    final = warm
    pr = np.zeros(n) if prior is None else np.asarray(prior, dtype=np.float64).ravel()
    if pr.shape != (n,):
        raise ValueError(f"prior has {pr.shape[0]} entries for {counted(n, 'note')}")
    if pr.any() and scale > 0:
        final = final * (1.0 + scale * np.clip(pr, -1.0, 1.0))
        stages["prior"] = f"ran (scale {scale})"
    else:
        stages["prior"] = "skipped: zero"
    holders = named & (pr >= 0)
    if free_prior is not None:  # a note surely passed over holds nothing back (docstring)
        holders &= np.asarray(free_prior, dtype=np.float64).ravel() >= 0
    passed_report, final = passed_over_stage(final, free_prior, passed)
    if passed_report:
        stages["prior"] += f"; {passed_report}"
    free_report, final = free_prior_stage(final, free_prior, scale, holders)
    if free_report:
        stages["prior"] += f"; {free_report}"
    final = hold_learned(fused, own, lifted, final, holders, protect, ranked)
    got = None if without is None or (whole is None and not holders.any()) else without()
    if got is not None and holders.any():
        before = got.final
        held = hold_below(before, final, final > before, holders)
        key = "learned" if stages.get("learned", "").startswith("ran") else "asked"
        stages[key] += f"; {int(np.count_nonzero(held < final))} held below named notes"
        final = held
    if whole is None or (got is None and final is warm):  # nothing learned acted
        return final
    ok = np.ones(n, dtype=np.bool_) if eligible is None else eligible
    whole_ = np.asarray(whole, dtype=np.bool_).ravel()  # sign: the prior's (replay.whole_of)
    lifts, passes = ok & ~(whole_ & (pr > 0)), ok & ~(whole_ & (pr < 0))
    before = warm if got is None else got.warm
    final, moved = hold_unlicensed(before, final, lifts, passes)
    if moved:
        stages["prior"] += f"; {moved} held below notes ranked above them without learning"
    if cites is not None:
        final, placed = above_pointers(final, whole_ & (pr > 0), named, ok, cites, pr > 0)
        if placed:
            stages["prior"] += f"; {placed} placed above thin notes linking to them"
    return final
