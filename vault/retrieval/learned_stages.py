"""Stage 6 after warmth (pipeline.py): the learned prior, its topic-free part and the holds
that keep every learned input below the notes a query names.

    final(d) = warm(d) (1 + PRIOR_SCALE clip(Q(d), -1, 1))            the gated prior
    final(d) *= max(0.5, 1 + w_passed q(d)) for q(d) < 0, whole      scope.passed_over_stage
    final(d) *= 1 + PRIOR_SCALE free(d), never past a named note      scope.free_prior_stage
    the protect hold once more                                        scope.hold_learned
    the learned channel's hold                                        scope.hold_below

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
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping

import numpy as np
import numpy.typing as npt

from .scope import free_prior_stage, hold_below, hold_learned, passed_over_stage

F64 = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]


def learned_stage(warm: F64, prior: npt.ArrayLike | None, free_prior: npt.ArrayLike | None,
                  scale: float, protect: float, fused: F64, own: F64, lifted: F64,
                  ranked: npt.NDArray[np.int64], named: Mask, stages: MutableMapping[str, str],
                  without: Callable[[], F64] | None, passed: float = 0.0) -> F64:
    """The final scores from `warm` (module docstring); `named` = the eligible named notes,
    `without` = the final scores of the same query without the learned channel (None when
    the channel did not run), `passed` = `weights.passed`. Writes the "prior" (and
    "learned") stage reports."""
    n = int(warm.shape[0])
    final = warm
    pr = np.zeros(n) if prior is None else np.asarray(prior, dtype=np.float64).ravel()
    if pr.shape != (n,):
        raise ValueError(f"prior has {pr.shape[0]} entries for {n} notes")
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
    if without is not None and holders.any():
        before = without()
        held = hold_below(before, final, final > before, holders)
        key = "learned" if stages.get("learned", "").startswith("ran") else "asked"
        stages[key] += f"; {int(np.count_nonzero(held < final))} held below named notes"
        final = held
    return final
