"""Score-weighted reciprocal rank fusion over signal score vectors, with a total order.

For signals s with raw score vectors raw_s (aligned with corpus positions) and weights w_s,

    fused(d) = sum_s w_s * v_s(d) / (k + rank_s(d) + 1),   k = 60, rank from 0

(Cormack, Clarke & Buettcher 2009 for RRF; the raw-score factor makes it score-weighted).
rank_s orders the notes by raw_s descending, ties broken by vault path (then position): note
ids, and so positions, follow the order notes were first indexed, so a tie-break by position
made the same files rank differently after another history (NOTES-TIES.md).
Only notes with raw_s(d) > 0 contribute, and only they are ranked (O(p log p) for p of
them); with a depth D > 0 only each signal's first D notes do (a partition, O(n + D log D)),
as RRF was defined over each system's top 1,000 (Cormack et al. 2009). The default depth,
1,000, is above the size of every benchmark haystack, so it changes nothing there; at 10^6
notes a common query term gives BM25 a positive score for most notes, and ranking them all
cost ~0.1 s per signal (BENCHMARKS.md, scale). v_s is the raw score itself (`normalize="none"`) or
the raw score divided by the signal's maximum for this query (`normalize="max"`, `fuse`'s default):
raw scales differ by orders of magnitude (BM25 ~ 1..30, cosines in [-1, 1], PageRank mass
~ 1e-4..1e-1), and max-normalisation makes every signal's best note count v = 1, so w_s alone
sets each signal's share. With `normalize="range"` (the pipeline's default since session 32)
the signals named in `ranged` count their range above the list's cut-off instead,

    v_s(d) = (raw_s(d) - c_s) / (max raw_s - c_s),   c_s = the best score of a note s does not
                                                    rank (0 when s ranks every note it scores),

min-max normalisation (Lee 1997, "Analyses of multiple evidence combination"; Montague & Aslam
2001, "Relevance score normalization for metasearch") with the list's minimum taken at its
cut-off, so a note's part falls to 0 as it nears the cut and the depth makes no jump, as it
does by the maximum (a note just inside counts raw/max, one just outside 0). Dividing by the
maximum alone treats a score of 0 as "no evidence"; cosines crowd below their maximum (a
MiniLM head of 20 SciFact abstracts keeps 0.68 of it, BM25's 0.44, the conjunctive
IDF-cosine's 0.26: NOTES-QUAL7.md, session 32), so by the maximum the dense signal told its
first notes apart less than the lexical ones told theirs. Where a signal ranks every note it
scores (a vault under `depth` notes) c_s = 0 and the range is the maximum's.
Signals are summed in sorted-name order so the floating-point result does not depend on dict
order.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..int_arrays import distinct

RRF_K = 60
RRF_DEPTH = 1000  # notes ranked per signal (module docstring)
NORMALIZE = ("max", "range", "none")

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
# The vault path of every corpus position (Corpus.paths): what breaks ties. None: position.
Paths = Sequence[str] | None


def order(scores: F64, paths: Paths = None) -> I64:
    """Positions sorted by score descending, ties by path, then position (a total order)."""
    return stable_order(np.nan_to_num(np.asarray(scores, dtype=np.float64), nan=-np.inf), paths)


def ranks(scores: F64, paths: Paths = None) -> I64:
    """rank[d] = index of d in `order(scores, paths)` (0 = best)."""
    o = order(scores, paths)
    r = np.empty_like(o)
    r[o] = np.arange(o.shape[0], dtype=np.int64)
    return r


def stable_order(x: F64, paths: Paths = None, at: I64 | None = None) -> I64:
    """`order(x)` for finite x: numpy's fast unstable argsort, then each run of equal values
    re-sorted by (path, position) (`_by_path`), or, without paths, by position (one sort of
    packed (run, position) integer keys). Only the tied entries are sorted again: O(t log t)
    for t of them. numpy's stable argsort of 10^6 floats is 2-5x slower. `at[j]`, when
    given, is the corpus position of x[j] (its path is `paths[at[j]]`); default j."""
    n = int(x.shape[0])
    o = np.argsort(-x).astype(np.int64)
    if n < 2:
        return o
    if n >= 1 << 32 and paths is None:
        return np.argsort(-x, kind="stable").astype(np.int64)
    v = x[o]
    eq = v[1:] == v[:-1]
    if not eq.any():
        return o
    tied = np.zeros(n, dtype=np.bool_)
    tied[1:] |= eq
    tied[:-1] |= eq
    run = np.cumsum(np.concatenate(([True], ~eq))).astype(np.uint64)
    idx = np.flatnonzero(tied)
    if paths is not None:
        o[idx] = _by_path(o[idx], run[idx], paths, at)
        return o
    key = (run[idx] << np.uint64(32)) | o[idx].astype(np.uint64)
    key.sort()
    o[idx] = (key & np.uint64(0xFFFFFFFF)).astype(np.int64)
    return o


def _by_path(o: I64, run: npt.NDArray[np.uint64], paths: Sequence[str], at: I64 | None) -> I64:
    """`o` (tied entries, by run) sorted by (run, path, position): one lexsort of the t
    tied entries' paths, gathered as a numpy string array (code point order, as `sorted`)."""
    pos = o if at is None else at[o]
    names = np.array([paths[i] for i in pos.tolist()], dtype=np.str_)
    out: I64 = o[np.lexsort((pos, names, run))]
    return out


def positive_ranks(scores: F64, paths: Paths = None) -> I64:
    """rank[d] as in `ranks` for every d with scores[d] > 0 (they come first in that order);
    -1 elsewhere. Costs O(p log p) for p positive scores, not O(n log n)."""
    x = np.asarray(scores, dtype=np.float64)
    pos = np.flatnonzero(x > 0)
    o = pos[stable_order(x[pos], paths, pos)]  # pos ascends: ties by position
    r = np.full(x.shape[0], -1, dtype=np.int64)
    r[o] = np.arange(o.shape[0], dtype=np.int64)
    return r


SAMPLE_PER_HEAD = 32  # `top` samples about this many scores per wanted position
SAMPLE_MIN_STRIDE = 8  # ... when that still skips this many scores between samples


def _floor(x: F64, m: int) -> float | None:
    """A positive value t that at least `m` of `x` are likely to reach, from an evenly
    strided sample (no randomness), or None (too few scores to be worth it, or no such t).
    Expected ~4m scores reach it; whether m do is checked by the caller."""
    stride = int(x.shape[0]) // (SAMPLE_PER_HEAD * m)
    if stride < SAMPLE_MIN_STRIDE:
        return None
    sample = x[::stride]
    j = min(int(sample.shape[0]), 4 * (-(-m // stride)) + 4)  # ~4m / stride sampled above
    t = float(np.partition(sample, sample.shape[0] - j)[sample.shape[0] - j])
    return t if t > 0 else None


def top(scores: F64, m: int, keep: npt.NDArray[np.bool_] | None = None,
        paths: Paths = None) -> I64:
    """The first `m` positions of `order(scores, paths)` among those with `keep` (default:
    all) and a positive score: exact, in O(n + m log m) (a partition, then a sort of the head
    and ties).

    For m far below n, the candidates are first cut at a floor t > 0 taken from a strided
    sample of the scores (`_floor`): when at least m candidates reach t, the m-th largest is
    >= t, so every note of the head, and every tie with its last value, is among them and the
    result is the same; otherwise the cut is dropped. This spares partitioning the ~10^6
    positive BM25 scores of a common term to rank its first 1,000."""
    x = np.asarray(scores, dtype=np.float64)
    if m <= 0:
        return np.zeros(0, dtype=np.int64)
    t = _floor(x, m)
    cand = None
    if t is not None:
        cand = np.flatnonzero(x >= t if keep is None else (x >= t) & keep)
        if cand.size < m:
            cand = None
    if cand is None:
        cand = np.flatnonzero(x > 0 if keep is None else (x > 0) & keep)
    if cand.size > m:
        vals = x[cand]
        kth = np.partition(vals, cand.size - m)[cand.size - m]  # the m-th largest
        cand = cand[vals >= kth]  # the head and every tie with its last value
    out: I64 = cand[stable_order(x[cand], paths, cand)][:m].astype(np.int64)
    return out


@dataclass(frozen=True)
class Head:
    """One signal's part of a fusion: the notes it ranked (`pos`, ascending), their ranks and
    what each added to the fused score; every other note has rank -1 and adds 0."""

    pos: I64
    rank: I64
    contribution: F64

    def at(self, i: int) -> tuple[int, float]:
        """(rank, contribution) of note position `i`."""
        j = int(np.searchsorted(self.pos, i))
        if j < self.pos.shape[0] and int(self.pos[j]) == i:
            return int(self.rank[j]), float(self.contribution[j])
        return -1, 0.0


@dataclass(frozen=True)
class Fusion:
    """The fused vector and, per signal, the ranks and the values that entered the sum (as
    `Head`s: a query at 10^6 notes ranks ~1,000 notes a signal, and eight n-length arrays a
    query cost ~9 ms to allocate and fill)."""

    fused: F64
    heads: Mapping[str, Head]
    support: I64 | None = None  # ascending positions where `fused` may be positive, if known
    paths: Paths = None  # what broke the ties (`stable_order`); `by_fused` breaks them so too

    @property
    def ranks(self) -> dict[str, I64]:
        """Per signal, the rank of every note (-1: not ranked), as n-length arrays."""
        out: dict[str, I64] = {}
        for name, h in self.heads.items():
            r = np.full(self.fused.shape[0], -1, dtype=np.int64)
            r[h.pos] = h.rank
            out[name] = r
        return out

    @property
    def contributions(self) -> dict[str, F64]:
        """Per signal, what every note added to the fused score, as n-length arrays."""
        out: dict[str, F64] = {}
        for name, h in self.heads.items():
            c = np.zeros(self.fused.shape[0], dtype=np.float64)
            c[h.pos] = h.contribution
            out[name] = c
        return out


def fuse(
    signals: Mapping[str, F64],
    weights: Mapping[str, float],
    k: int = RRF_K,
    normalize: str = "max",
    depth: int = 0,
    heads: Mapping[str, I64] | None = None,
    paths: Paths = None,
    ranged: Collection[str] | None = None,
) -> Fusion:
    """Score-weighted RRF (module docstring). Signals without a weight get weight 1.0; with
    `depth` > 0 only each signal's first `depth` notes are ranked and contribute; `heads`
    may give a signal's `top(raw, depth, paths=paths)`, computed already; `paths` breaks
    ties (`stable_order`); with `normalize="range"` the signals in `ranged` (None: all) are
    normalised by their range above the cut-off (`cutoff`), the others by their maximum."""
    if normalize not in NORMALIZE:
        raise ValueError(f"unknown normalisation {normalize!r}")
    n = len(next(iter(signals.values()))) if signals else 0
    fused = np.zeros(n, dtype=np.float64)
    parts: dict[str, Head] = {}
    touched: list[I64] = []
    for name in sorted(signals):
        raw = np.asarray(signals[name], dtype=np.float64)
        if raw.shape != (n,):
            raise ValueError(f"signal {name!r} has shape {raw.shape}, expected ({n},)")
        if depth > 0:
            head = heads[name] if heads is not None and name in heads else top(raw, depth,
                                                                                paths=paths)
            at = np.argsort(head, kind="stable")  # the head by position: r[pos[j]] = at[j]
            pos, rank = head[at], at.astype(np.int64)
        else:
            r = positive_ranks(raw, paths)
            pos = np.flatnonzero(r >= 0)
            rank = r[pos]
        v = raw[pos]
        if normalize != "none" and pos.size:
            cut = (cutoff(raw, pos, depth) if normalize == "range"
                   and (ranged is None or name in ranged) else 0.0)
            top_v = float(v.max())
            v = (v - cut) / (top_v - cut) if top_v > cut else np.ones_like(v)
        c = weights.get(name, 1.0) * v / (k + rank + 1.0)
        fused[pos] += c  # 0 elsewhere: the same sums as adding an n-length vector
        touched.append(pos)
        parts[name] = Head(pos, rank, c)
    support = distinct(np.concatenate(touched)) if touched else np.zeros(0, np.int64)
    return Fusion(fused=fused, heads=parts, support=support, paths=paths)


def cutoff(raw: F64, pos: I64, depth: int) -> float:
    """The best score of a note outside a signal's ranked notes `pos` (its first `depth`
    positive scores), at least 0; 0 when it ranks every note it scores (module docstring)."""
    if depth <= 0 or pos.shape[0] < depth:
        return 0.0
    outside = np.ones(raw.shape[0], dtype=np.bool_)
    outside[pos] = False
    return max(0.0, float(np.max(raw, where=outside, initial=0.0)))


REDUNDANCY_HEAD = 20  # notes of each head compared by `overlap`


def overlap(a: F64, b: F64, m: int = REDUNDANCY_HEAD, head_a: I64 | None = None,
            paths: Paths = None) -> float:
    """|H_m(a) ∩ H_m(b)| / min(m, |H_m(a)|, |H_m(b)|), H_m(x) = the first m notes of `top(x)`
    (positive scores only; `head_a` may give `top(a, M)` for some M >= m, computed already);
    0 when either head is empty. Order-free: a set overlap of two exact heads."""
    ha = (head_a if head_a is not None and head_a.shape[0] >= min(m, int((a > 0).sum()))
          else top(a, m, paths=paths))[:m]
    hb = top(b, m, paths=paths)
    if ha.size == 0 or hb.size == 0:
        return 0.0
    shared = int(np.intersect1d(ha, hb, assume_unique=True).size)
    return shared / min(m, int(ha.size), int(hb.size))


def gate(weights: Mapping[str, float], signals: Mapping[str, F64], m: int = REDUNDANCY_HEAD,
         heads: Mapping[str, I64] | None = None, paths: Paths = None
         ) -> tuple[dict[str, float], str]:
    """The fusion weights for one query: `weights`, the conjunctive channel's scaled by
    1 - J, J = `overlap` of its first m notes with BM25's (m = 0: off), and a report.

    Both channels read the same words. Where their heads agree, the pair channel would count
    the same lexical evidence a second time; where they differ it carries what BM25 lacks (a
    pair of terms inside one turn: "auth on Monday"). Fusion gains where its inputs are good
    and retrieve different documents, and loses with the correlation of its inputs (Vogt &
    Cottrell 1999, "Fusion via a linear combination of scores"; Lee 1997, "Analyses of
    multiple evidence combination"; Wu & McClean 2006, "Performance prediction of data
    fusion for information retrieval"): a query-dependent, label-free gate."""
    out = dict(weights)
    if m <= 0 or "conjunctive" not in signals or "bm25" not in signals:
        return out, ""
    j = overlap(signals["bm25"], signals["conjunctive"], m,
                None if heads is None else heads.get("bm25"), paths)
    out["conjunctive"] = out.get("conjunctive", 1.0) * (1.0 - j)
    return out, f", conjunctive x{1.0 - j:.2f}: its head shares {j:.2f} with bm25's"


def long_query(weights: Mapping[str, float], query_terms: int, note_terms: float
               ) -> tuple[dict[str, float], str]:
    """The fusion weights for one query: `weights`, the conjunctive channel's 0 when the query
    has more content terms than the vault's typical note (`note_terms`: the length-weighted
    median, signals/conjunctive.py `occurrence_median`), and a report for the receipt.

    The channel's units are a note's terms and its pairs of near terms (unit_codes.py); its
    evidence is a pair of the query's terms held inside one note. A query longer than most
    notes cannot be held whole by them: its pairs are spread over notes that each hold a part,
    and the pair channel adds to BM25's count of the same shared words a second, correlated
    lexical vote (Lee 1997; Vogt & Cottrell 1999, fusion loses with the correlation of its
    inputs) that outvotes the dense channel, the one that reads the query whole. The bound is
    the vault's own note length, as the second pass stands aside for a query no passage can
    hold (second_pass.py); no constant. The note length is weighted by its terms, so that
    stub notes (empty placeholders, one-line daily notes: few occurrences) do not pull it
    down to a few terms (session 39, NOTES-FUS41.md). A query with as many terms, or
    fewer (every LoCoMo, LongMemEval and SciFact question but a few), keeps the channel.
    Measured in session 38 (NOTES-FUS38.md 3b, NOTES-FUS39.md); the rule was written after
    seeing titlecorpus's query lengths (sentences asked of one-line titles)."""
    out = dict(weights)
    if not out.get("conjunctive") or query_terms <= note_terms:
        return out, ""
    out["conjunctive"] = 0.0
    return out, (f", conjunctive x0: the query's {query_terms} content terms are more than "
                 f"the typical note's {note_terms:g}")


def by_fused(fusion: Fusion) -> I64:
    """`top(fusion.fused, n)`: the notes with a positive fused score, best first, looked for
    in the fusion's support when it has one (every positive score is there)."""
    if fusion.support is None:
        return top(fusion.fused, int(fusion.fused.shape[0]), paths=fusion.paths)
    cand = fusion.support[fusion.fused[fusion.support] > 0]
    out: I64 = cand[stable_order(fusion.fused[cand], fusion.paths, cand)].astype(np.int64)
    return out
