"""Learning from use: the formulas, as pure functions of explicit arguments (DESIGN.md §5).

Every constant lives in `LearningParams` (frozen; configurable; `LEARNING_VERSION` names the
formula set, stored in learned.sqlite so a state computed by other formulas is never mixed in).
Nothing here reads a clock: times are seconds passed in by the caller.

Formulas (the seed: Ori-Mnemos, "Computation is the missing bedrock of agentic memory"):

- Learned usefulness, per note (v3, issue 31): a Beta-Bernoulli posterior of "used when
  examined" under the position-based click model, with the evidence and the bounded score
  the ranking uses written out in vault/learning/evidence.py. Use signals per (session, note),
  only for a note retrieved (shown by a search) in the session (vault/learning/rewards.py):
      read    1.0                  the note is read after being shown (the commonest sign)
      cite    1.0                  a later write in the session links to the retrieved note
      update  0.5                  the retrieved note itself is rewritten (written or edited)
      create  1.0 / log2(rank+2)  a note is created after this one was retrieved and read
      answer  1.0                  the agent's answer (session.end) uses its distinctive terms
      recall  0.5 / times          used again (re-found), `times` earlier sessions used it
  summed and capped at `use_cap` (2) as the session's success weight; "skipped" is the
  examined-and-not-used weight e (1 - t) / (1 - e t) (evidence.py), counted only in a list
  the agent read, cited, rewrote or built on another hit of (v4: an answer alone engages no
  list, rewards.py). Being ranked alone is never evidence. (v2 moved Q by at most 0.1 a
  session, Q <- Q + 0.1 |r| (sgn r - Q): one read changed the score by x1.008 and moved no
  ranking; v1 started at 0.5 and inverted.)
- Prior used in ranking: the score q of evidence.py, in [-neg_scale, 1], 0 for a note with
  no evidence, times the topic gate g(query, note) in [0, 1] of topic.py (the share of the
  query its evidence was about); the engine multiplies the fused score by (1 + prior_scale q g).
  v5: the rest of a positive score, q (1 - g), multiplies it too, (1 + prior_scale q (1 - g) c)
  with c the share of the query's words the note was used for (v8, replay.py `free_of`),
  but never lifts a note past a note the query names that ranked above it
  (vault/retrieval/scope.py `free_prior_stage`; a score below 0 acts through g, and whole, as
  max(0.5, 1 + w q), only with `[search] weights.passed` = w > 0: scope.py `passed_over_stage`). Use
  for one question is evidence that a note is informative, not what a new query is about;
  the notes the query names are. Without it the related held-out questions of LoCoMo, other
  questions about the same turns, got nothing (gate 0 for 26 of 32 with evidence: NOTES-F).
- Query-log document expansion (v6, expansion.py): a used note keeps the stems of the
  queries it was used for (`terms_cap` most frequent); a new query's share c of those words
  (idf from the query log, unlogged words diluting), times q g (v9: only the gated share,
  so that c acts once, q g c in the channel and q (1 - g) c in the free factor), is a fused
  channel of the ranking that never lifts a note past a note the query names. It is
  query-dependent: a question that shares no word with what a note was used for leaves it
  untouched.
- Topic gate g (topic.py, v9): a query phrase no logged query held counts against the gate
  at ln(1 + N) when the log knows each of its words (a new pairing of known words is a
  different question), and is left out when a word of it is new (a rewording); a negative
  score's gate leaves new pairings out.
- Query-log neighbours (v7, asked.py): a used note also keeps the text of the last
  `queries_cap` queries it was used for; with a sentence encoder, x(d, Q) = q(d) g(max_k
  cos(e(Q), e(Q_k))), g 0 below a similarity floor, is a second fused channel (off by default).
- Co-occurrence (notes among the top `cooc_top` hits of one search): with N searches, n_i
  searches showing i, n_ij showing both, p = n / N,
      npmi = ln(p_ij / (p_i p_j)) / (-ln p_ij)            (Bouma 2009; 1 when p_ij = 1)
      w = max(0, npmi * min(1, (n_ij/100)^0.75) * trust * exp(-days / (30 (1 + 0.2 ln(1+n_ij)))))
  every factor lies in [0, 1] (trust is validated), so w lies in [0, 1].
- Bounded co-occurrence memory: ranking weighs every stored pair on every query, so the store
  is capped. Once it holds more than 1.25 * `cooc_capacity` pairs, the weakest are forgotten
  down to the capacity, weakest first by their strength at the event's time t, the largest
  weight they could still have (npmi at its maximum 1):
      strength = min(1, (n_ij/100)^0.75) * exp(-days / (30 (1 + 0.2 ln(1+n_ij))))
  ties by (a, b). A forgotten pair that recurs starts again from count 1.
- Decay of activation (usage-aware Ebbinghaus), per day:
      rate = 0.1 / (1 + 0.2 ln(1+accesses) + 0.3 ln(1+sessions)),  a(t) = a0 exp(-rate days)
  Half-lives ln 2 / rate this gives (the contract; `half_life_days` computes them): 6.9 d
  (never accessed), 9.3 d (1 access, 1 session), 12.3 d (5 accesses over 3 sessions), 16.1 d
  (20 accesses over 10 sessions); the seed's "7 / 14 / 28 days" overstate the longer ones.
- Spreading activation (activation.py): boost_s(v) = cap * u_s * damping^k at hop k <= 2 from
  seed s, u_s in [0, 1], so hop 1 gets 0.6 and hop 2 0.36 of what the seed gets whatever u_s
  (cap * damping^k * u_s, not min(cap, u_s * damping^k), which would hit the 0.05 cap at
  every hop for any u_s >= 0.14).
- Accumulation of activation: a <- 1 - (1 - a_decayed)(1 - boost), boost <= cap (0.05).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass

import numpy as np
import numpy.typing as npt

from ..notes.text import stemmer_fingerprint

LEARNING_VERSION = 27  # 27: a note used in part for the query passes the
# pointers to it just above it, nothing between (retrieval/cited.py `partial`)
# 26: a note used wholly for the query is placed just above a thinner
# note that restates the query and links to it (retrieval/cited.py; anchor text)
# 25: a note passed over for another question (strict skip gate < 1)
# still holds the lifts not wholly about this one (retrieval/learned_stages.py, replay.whole_of)
# 24: a lift not wholly about the question (strict gate < 1) never
# passes a note the learning-free ranking put above it (retrieval/scope.py `hold_unlicensed`;
# click evidence is a preference only against what it was compared with, Joachims 2002)
# 23: a note's own text holding a question's new words spares its
# gate only when a logged phrase of the question is in its bag (topic.py)
# 22: a soft hyphen or zero-width joiner inside a word keeps it
# one word (notes/text.py `JOINERS`; session 33)
# 21: both below, merged (a ledger of either branch alone is rebuilt)
# 20: a named note surely passed over holds no learned lift back (retrieval/learned_stages.py)
# 19: a question's words new to the log count against every note's gate but
# not against the gate of a note whose own text holds them (topic.py)
# 18: a question's words new to the query log that some note holds
# count against the topic gate (topic.py)
# 17: an enclosing mark (a keycap) ends its word, Arabic and Hindi
# words stemmed (notes/text.py)
# 16: combining marks kept in their word, Arabic/Hebrew points dropped
# (notes/text.py), so learned words of such text changed; a first warming stamped at its own
# time, before 1970 too (state.py)
# 15: scripts without spaces tokenised as bigrams (notes/text.py)
# 14: ended sessions' rows and tombstones are bounded (ended.py)
# 13: the query log's df tables are bounded (query_log.py)
# 12: an ended session's (note, session) rows go; it counts no more sessions
# 11: a new pairing both of whose words the note's use words hold matches
# 10: a one-word query's gate is whether the note's use words hold it
# 9: the gate counts a new pairing of known words against the match
# (topic.py); the expansion channel carries only the gated share q g c (replay.py)
# 8: a query's date expressions are no learned words or phrases;
# the topic-free part acts through the query's words the note was used for (replay.py)
# 7: the text of the last queries a note was used for (asked.py)
# 6: the words of the queries a note was used for (expansion.py)
# 5: the topic-free part q (1 - g), held below named notes (scope.py)
# 4: only a read/cite/update/create engages a list (rewards.py)
# 3: Beta-PBM posterior of use (evidence.py); 2: signed Q, damped spread
SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True)
class LearningParams:
    """Every constant of learning and forgetting (DESIGN.md §5); see the module docstring."""

    use_mean: float = 0.25  # mu0: the prior probability that an examined hit is used
    use_strength: float = 2.0  # n0 = a0 + b0: the prior's weight in pseudo-sessions
    use_cap: float = 2.0  # the largest success weight one session gives a note
    neg_scale: float = 0.25  # the downward score is this share of the upward one
    weight_read: float = 1.0
    weight_cite: float = 1.0
    weight_update: float = 0.5
    weight_create: float = 1.0
    weight_answer: float = 1.0
    weight_recall: float = 0.5
    unused_top_n: int = 5  # a miss below this rank is no evidence
    answer_min_terms: int = 2  # distinctive terms an answer must share with a note
    terms_cap: int = 64  # query terms kept per note and bag (topic.py)
    queries_cap: int = 8  # the last queries kept per used note (asked.py)
    cooc_top: int = 5
    cooc_scale: float = 100.0
    cooc_power: float = 0.75
    cooc_days: float = 30.0
    cooc_count_slow: float = 0.2
    cooc_trust: float = 1.0
    cooc_min_weight: float = 0.01
    cooc_capacity: int = 20_000  # pairs kept; past 1.25x this the weakest are forgotten
    query_log_capacity: int = 32_768  # query_df / word_df keys kept each (query_log.py)
    session_capacity: int = 4_096  # ended sessions' rows kept (ended.py)
    hub_share: float = 0.25  # a note in more than this share of searches is a hub...
    hub_min_searches: int = 20  # ...once there have been at least this many searches
    damping: float = 0.6
    max_hops: int = 2
    activation_cap: float = 0.05
    activation_top: int = 10
    spread_max_degree: int = 50  # a note with more links is a hub: activation stops there
    decay_base: float = 0.1
    decay_access: float = 0.2
    decay_session: float = 0.3
    stale_session_s: float = 1800.0

    def __post_init__(self) -> None:
        checks = {
            "use_mean": 0.0 < self.use_mean < 1.0,
            "use_strength": self.use_strength > 0.0,
            "use_cap": self.use_cap > 0.0,
            "neg_scale": 0.0 <= self.neg_scale <= 1.0,
            "cooc_trust": 0.0 <= self.cooc_trust <= 1.0,
            "activation_cap": 0.0 <= self.activation_cap <= 1.0,
            "damping": 0.0 <= self.damping <= 1.0,
            "decay_base": self.decay_base >= 0.0,
            "cooc_scale": self.cooc_scale > 0.0,
            "cooc_capacity": self.cooc_capacity >= 1,
            "query_log_capacity": self.query_log_capacity >= 1,
            "session_capacity": self.session_capacity >= 1,
        }
        bad = sorted(name for name, ok in checks.items() if not ok)
        if bad:
            raise ValueError(f"LearningParams out of range: {', '.join(bad)}")


def clip(x: float, lo: float, hi: float) -> float:
    """x limited to [lo, hi]."""
    return lo if x < lo else hi if x > hi else x


def create_weight(rank: int, params: LearningParams) -> float:
    """1.0 / log2(rank + 2): use credited for seeding a new note, discounted by its rank."""
    return params.weight_create / math.log2(rank + 2)


def recall_weight(times: int, params: LearningParams) -> float:
    """0.5 / times for a note used again after `times` (>= 1) earlier sessions used it."""
    return params.weight_recall / times if times >= 1 else 0.0


def half_life_days(accesses: int, sessions: int, params: LearningParams) -> float:
    """ln 2 / decay_rate: the days activation takes to halve (inf when nothing decays)."""
    rate = decay_rate(accesses, sessions, params)
    return math.inf if rate <= 0.0 else math.log(2.0) / rate


def npmi(n_ij: int, n_i: int, n_j: int, n: int) -> float:
    """Normalised pointwise mutual information in [-1, 1] (Bouma 2009); 0 when undefined."""
    if n <= 0 or n_ij <= 0 or n_i <= 0 or n_j <= 0:
        return 0.0
    p_ij, p_i, p_j = n_ij / n, n_i / n, n_j / n
    if p_ij >= 1.0:
        return 1.0
    return clip(math.log(p_ij / (p_i * p_j)) / -math.log(p_ij), -1.0, 1.0)


def edge_weight(
    n_ij: int, n_i: int, n_j: int, n: int, days: float, params: LearningParams
) -> float:
    """The bounded co-occurrence edge weight in [0, 1] (module docstring)."""
    if n_ij <= 0:
        return 0.0
    freq = min(1.0, (n_ij / params.cooc_scale) ** params.cooc_power)
    tau = params.cooc_days * (1.0 + params.cooc_count_slow * math.log1p(n_ij))
    fade = math.exp(-max(0.0, days) / tau)
    w = npmi(n_ij, n_i, n_j, n) * freq * params.cooc_trust * fade
    return clip(w, 0.0, 1.0)


def edge_weights(
    n_ij: npt.NDArray[np.float64],
    n_i: npt.NDArray[np.float64],
    n_j: npt.NDArray[np.float64],
    n: int,
    days: npt.NDArray[np.float64],
    params: LearningParams,
) -> npt.NDArray[np.float64]:
    """`edge_weight` for many pairs at once (one numpy pass; the scalar form is its test twin).

    Every search adds co-occurrence pairs, so a vault in daily use holds tens of thousands of
    them; ranking reads all their weights on every query.
    """
    f64 = np.float64
    n_ij, n_i, n_j, days = (np.asarray(x, dtype=f64) for x in (n_ij, n_i, n_j, days))
    valid = (n > 0) & (n_ij > 0) & (n_i > 0) & (n_j > 0)
    total = float(max(n, 1))
    p_ij = np.where(valid, n_ij / total, 0.5)
    p_i = np.where(valid, n_i / total, 1.0)
    p_j = np.where(valid, n_j / total, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        raw = np.log(p_ij / (p_i * p_j)) / -np.log(p_ij)
    npmi_ = np.where(p_ij >= 1.0, 1.0, np.clip(raw, -1.0, 1.0))
    npmi_ = np.where(valid, npmi_, 0.0)
    freq, fade = _freq_fade(n_ij, days, params)
    w = np.clip(npmi_ * freq * params.cooc_trust * fade, 0.0, 1.0)
    return np.where(n_ij > 0, w, 0.0)


def _freq_fade(
    n_ij: npt.NDArray[np.float64], days: npt.NDArray[np.float64], params: LearningParams
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The count factor min(1, (n_ij/100)^0.75) and the recency factor exp(-days / tau)."""
    n = np.maximum(np.asarray(n_ij, dtype=np.float64), 0.0)
    freq = np.minimum(1.0, (n / params.cooc_scale) ** params.cooc_power)
    tau = params.cooc_days * (1.0 + params.cooc_count_slow * np.log1p(n))
    return freq, np.exp(-np.maximum(0.0, np.asarray(days, dtype=np.float64)) / tau)


def pair_strength(
    n_ij: npt.NDArray[np.float64], days: npt.NDArray[np.float64], params: LearningParams
) -> npt.NDArray[np.float64]:
    """The largest weight each pair could have now (`edge_weights` with npmi = 1, trust = 1)."""
    freq, fade = _freq_fade(n_ij, days, params)
    return freq * fade


def decay_rate(accesses: int, sessions: int, params: LearningParams) -> float:
    """Per-day decay rate 0.1 / (1 + 0.2 ln(1+accesses) + 0.3 ln(1+sessions))."""
    slow = 1.0 + params.decay_access * math.log1p(max(0, accesses))
    slow += params.decay_session * math.log1p(max(0, sessions))
    return params.decay_base / slow


def decayed(
    value: float, age_s: float, accesses: int, sessions: int, params: LearningParams
) -> float:
    """a0 exp(-rate days); age <= 0 returns a0 unchanged (no growth backwards in time)."""
    if age_s <= 0.0 or value == 0.0:
        return value
    days = age_s / SECONDS_PER_DAY
    return value * math.exp(-decay_rate(accesses, sessions, params) * days)


def accumulate(old: float, boost: float) -> float:
    """Probabilistic OR 1 - (1 - old)(1 - boost): stays in [0, 1], never exceeds 1."""
    a, b = clip(old, 0.0, 1.0), clip(boost, 0.0, 1.0)
    return clip(1.0 - (1.0 - a) * (1.0 - b), 0.0, 1.0)


def utility(rank: int) -> float:
    """The known-scale utility of a retrieved hit: 1 / (rank + 1), in (0, 1]."""
    return 1.0 / (rank + 1)


def stamp_of(params: LearningParams) -> str:
    """What the ledger's derived state was built under: LEARNING_VERSION, the parameters and
    the stemmer's fingerprint (notes/text.py `stemmer_fingerprint`). The derived tables hold
    stems (use words, word frequencies), and snowballstemmer's releases stem some words
    otherwise: a ledger built before an upgrade kept stems no query made any more; a stamp that
    differs at open rebuilds the state from its events under this stemmer (DET6, session 32)."""
    return json.dumps({"version": LEARNING_VERSION, "params": asdict(params),
                       "stems": stemmer_fingerprint()}, sort_keys=True)
