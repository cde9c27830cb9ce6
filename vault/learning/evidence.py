"""The learned usefulness of a note: a Beta-Bernoulli posterior of "used when examined" (v3).

Model (issue 31). Each note d has an unknown probability theta_d that an agent who examines
it in a result list uses it. Examination follows the position-based click model (PBM;
Craswell et al. 2008, "An experimental comparison of click position-bias models", WSDM;
Chuklin, Markov, de Rijke 2015, "Click Models for Web Search", ch. 3 and 4): a hit shown at
rank r (from 0) is examined with probability e_r, independently of d, and used only if it was
examined, so P(used | shown at r) = e_r * theta_d. The facade logs e_r = 1 / log2(r + 2)
with every search (a fixed PBM prior, DCG's discount; Joachims et al. 2017).

Prior: theta_d ~ Beta(a0, b0) with mean mu0 = `use_mean` (0.25: one examined hit in four
is used) and strength n0 = a0 + b0 = `use_strength` (2 pseudo-sessions).

Evidence, per ended session and note (vault/learning/rewards.py says what counts as use):
- used: success weight s = min(`use_cap`, sum of the session's use signals) (a read is 1,
  a citation 1 more, so a read-and-cited note counts as 2 uses; capped at 2);
- examined and not used: the note was shown at rank r < `unused_top_n` in a list whose
  other hit the agent read, cited, rewrote or built on (the agent engaged with that list; an
  answer that used another hit does not count, rewards.py: v4) and it was not used anywhere
  in the session. It adds the PBM's E-step weight, the posterior probability that it was
  examined given that it was not used (Chuklin et al. 2015, section 4.2, EM for the PBM):
      f = e_r (1 - t) / (1 - e_r t),   t = the note's posterior mean before the session,
  so a miss at rank 0 (e = 1) counts 1, lower ranks less, and a note that is often used
  (high t) loses less per miss. Being shown in a list the agent did not use, or at rank
  >= unused_top_n, is no evidence at all: exposure alone costs nothing.
Posterior: Beta(a0 + S, b0 + F) with S, F the summed weights; mean m = (a0 + S) / (n0 + S + F).

Score used in ranking (`q`, on [-neg_scale, 1], exactly 0 with no evidence):
    q = (m - mu0) / (1 - mu0)               when m >= mu0 (use above the prior rate)
    q = neg_scale * (m - mu0) / mu0         when m <  mu0 (neg_scale = 0.25)
The search engine multiplies a note's fused score by (1 + PRIOR_SCALE q g), PRIOR_SCALE = 0.2
(vault/retrieval/pipeline.py) and g in [0, 1] the topic gate (topic.py: 1 on a query wholly
about what the evidence was about, 0 on a query about other things), so the effect is
bounded: x1.2 at most up, x0.95 at most down (with `[search] weights.passed` = w > 0 a
negative q also acts whole, whatever the query: x max(0.5, 1 + w q), scope.py
`passed_over_stage`). v5: the part 1 - g of a positive q acts too,
as a second factor (1 + PRIOR_SCALE q (1 - g) c), c the share of the query's words the note
was used for (v8, vault/learning/replay.py `free_of`), that never lifts a note past a note the query
names (vault/retrieval/scope.py), so the product stays within x1.2 x1.2. Worked values at g =
1 (defaults; `multiplier` computes them):
    no evidence                              q = 0       x1.000
    one session read                         q = +0.333  x1.067
    one session read and cited (S = 2)       q = +0.500  x1.100
    read in three sessions                   q = +0.600  x1.120
    read and cited in three sessions (S=6)   q = +0.750  x1.150
    one miss at rank 0, never used           q = -0.083  x0.983
    ten misses at rank 0, never used         q = -0.208  x0.958 (floor x0.95)
    used in 1 of 4 sessions, missed at rank 0 in 3 (a hub)  q = 0  x1.000
A note used at least at the prior rate mu0 of its examinations never goes below neutral,
and the downward side is a quarter of the upward one (a miss is weaker evidence than a use:
the agent may have needed something else).
"""

from __future__ import annotations

from .formulas import LearningParams, clip


def prior_counts(params: LearningParams) -> tuple[float, float]:
    """(a0, b0): the Beta prior's pseudo-counts of use and of examined non-use."""
    a0 = params.use_mean * params.use_strength
    return a0, params.use_strength - a0


def posterior_mean(used: float, skipped: float, params: LearningParams) -> float:
    """(a0 + S) / (n0 + S + F): the posterior mean of theta; mu0 with no evidence."""
    if used <= 0.0 and skipped <= 0.0:
        return params.use_mean
    a0, b0 = prior_counts(params)
    return (a0 + max(0.0, used)) / (a0 + b0 + max(0.0, used) + max(0.0, skipped))


def score(used: float, skipped: float, params: LearningParams) -> float:
    """The note's learned score q in [-neg_scale, 1] (module docstring); exactly 0 with no
    evidence."""
    if used <= 0.0 and skipped <= 0.0:
        return 0.0
    mu0 = params.use_mean
    m = posterior_mean(used, skipped, params)
    if m >= mu0:
        return clip((m - mu0) / (1.0 - mu0), 0.0, 1.0)
    return clip(params.neg_scale * (m - mu0) / mu0, -params.neg_scale, 0.0)


def skip_weight(examination: float, used: float, skipped: float, params: LearningParams) -> float:
    """e (1 - t) / (1 - e t): the probability that a hit shown with examination probability
    e was examined, given that it was not used (t: the note's posterior mean so far)."""
    e = clip(examination, 0.0, 1.0)
    t = posterior_mean(used, skipped, params)
    den = 1.0 - e * t
    return 0.0 if den <= 0.0 else clip(e * (1.0 - t) / den, 0.0, 1.0)


def use_weight(signals: float, params: LearningParams) -> float:
    """The success weight of one session's use signals: min(use_cap, their sum), >= 0."""
    return clip(signals, 0.0, params.use_cap)


def multiplier(q: float, prior_scale: float) -> float:
    """The factor the search engine applies to a note's fused score: 1 + prior_scale q."""
    return 1.0 + prior_scale * clip(q, -1.0, 1.0)


Z_PASSED = 1.645  # one-sided 95 %: the optimistic end of the posterior use rate


def passed_score(used: float, skipped: float, params: LearningParams) -> float:
    """How surely a note is passed over, in [-neg_scale, 0]: with the posterior mean m and
    its standard deviation sqrt(m (1 - m) / (n + 1)), n = n0 + S + F (the Beta's variance),
    the optimistic end of the use rate u = m + Z_PASSED sd, and
        p = neg_scale * min(0, u - mu0) / mu0,
    so only evidence that the note is used less than the prior rate even at the upper end of
    its credible interval acts (a lower-confidence-bound rule, as ranking by the Wilson bound
    of a rate, Wilson 1927; here its mirror, an upper bound for a demotion). Worked values
    (defaults, never used): 4 misses at rank 0, p = 0 (u = 0.255); 10 misses, p = -0.117
    (u = 0.133); 20 misses, p = -0.176 (u = 0.074). 0 with no evidence, and 0 for a note used
    once in ten examined sessions (u above mu0). The ranking demotes a note by it only with
    `[search] weights.passed` (vault/retrieval/scope.py `passed_over_stage`)."""
    if used <= 0.0 and skipped <= 0.0:
        return 0.0
    m = posterior_mean(used, skipped, params)
    n = params.use_strength + max(0.0, used) + max(0.0, skipped)
    u = m + Z_PASSED * (m * (1.0 - m) / (n + 1.0)) ** 0.5
    mu0 = params.use_mean
    return clip(params.neg_scale * min(0.0, u - mu0) / mu0, -params.neg_scale, 0.0)
