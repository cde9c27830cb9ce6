"""A second pass over the fused head: passage-level evidence, fused again by rank.

The first stage scores whole notes; a long note matches a query through one passage. The
pass re-orders the first HEAD notes of the pipeline's final order by reciprocal rank fusion
(Cormack, Clarke & Buettcher 2009) of three rankings of that head:

    pass(d) = sum_{r in (final, dense, passage)} w_r / (K + rank_r(d) + 1),  w_final = FINAL = 2,
                                                                    w_dense = w_passage = 1

- final:   the head's own order (every stage of the pipeline);
- dense:   the cosine of the query with the note's best chunk (the dense signal: a note is
           scored by its best passage; Callan 1994, "Passage-level evidence in document
           retrieval");
- passage: the BM25 score of the note's best passage, passages being windows of
           WINDOW sentences (title prepended), every STRIDE sentences, over the stems BM25
           uses, with the corpus's idf and the head's mean passage length (Robertson &
           Zaragoza 2009; the index's k1 and b); max over passages, as in Callan 1994.

What was learned from use (warmth and the Q prior, pipeline stage 6, and its hold), and the
time prior after it (when.py), scale every vote alike: with `learned` = final(d) / named(d),
the note's learned factor times its time factor, the dense and passage rankings order
score x learned(d) (the cosine mapped to (1 + cos) / 2 first, which keeps its order and makes
it positive), so a note the agent used (or dated in the time asked about) keeps its lift
through the pass instead of keeping it in one vote of three (a multiplicative document prior
applies to any evidence of the note, Kraaij, Westerveld & Hiemstra 2002); with nothing learned
and no time asked the factor is 1 and the pass is as above.
The pass also stands aside for a query no passage can hold: one with more distinct terms
(stems) than the head's mean passage has words. Passage evidence scores a note by its one best
window, which suits a query a window can answer whole; a query longer than any window (a
pasted paragraph, an ArguAna-style argument) spreads over the note, and both re-votes of the
pass then rank the head worse than the final order (session 22, NOTES-MEAS: 600 long SciFact
queries of 100-230 words, documents without titles, nDCG@10 +0.011 [+0.003, +0.019] with the
rule; the tuning sets do not reach it: SciFact-train claims hold at most 0.70 of a passage,
and LoCoMo and LongMemEval rank identically with it). The bound is the head's own passages.
The dense vote stands aside for a query whose dense ranking of the head disagrees with its
passage-BM25 ranking beyond chance: Kendall's tau below -1.96 times its standard deviation for
independent rankings of the head's n notes, sqrt(2 (2n + 5) / (9 n (n - 1))) (Kendall 1938;
a two-sided 5 % test, the textbook level, no constant fitted to a set). The dense signal already
had its weighted say in fusion; a second, unweighted say inside the head helps only where dense
ranks the query soundly, and where it contradicts the lexical evidence of the passages it is
the likelier to be wrong (issue 33's keyword and lme_turns sets, dense far weaker than BM25:
nDCG@10 +0.010 / +0.013; SciFact-train and LongMemEval unchanged within noise; session 28,
NOTES-QUAL2, where tau <= 0, which gains more, cost LongMemEval's preference questions).
The final order counts twice, as much as the pass's two re-votes together: it already
holds both their signals, weighted by fusion, and with one vote of three the re-votes outvoted
it on every collection whose dense channel is weak (session 33, NOTES-QUAL8: the pass cost
nDCG@10 on issue 33's keyword set -0.025 and locomo_summaries -0.029 beyond their intervals;
session 34, NOTES-QUAL9: counted twice, +0.012 / +0.016 there, SciFact-train -0.0003 within
noise). Ties by the final order. Notes below the head
keep their order after it. The pass runs only where passages exist: when the vault's median
note has at least two passages (`long_notes`: a note of one passage was scored as a whole
already, and re-voting its first-stage evidence against the link stages cost LoCoMo's
one-turn notes recall@10, NOTES-B), and with the dense signal (passage BM25 with the final
order alone cost SciFact nDCG@10, NOTES-B). HEAD = 30 (issue 33's suggestion), K = 10 (a
head of 30: with the textbook K = 60 the ranks of a short list barely differ; K chosen on
SciFact train between 60 and 10, NOTES-B), FINAL (above; chosen after seeing keyword,
lme_turns, locomo_summaries and SciFact-train, NOTES-QUAL9), WINDOW, STRIDE and SAMPLE are the
constants.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from ..notes.text import stems, tokenize
from ..plural import counted
from ..storage.corpus import Corpus
from .signals.bm25 import Bm25Index

F64 = npt.NDArray[np.float64]
HEAD = 30
K = 10
FINAL = 2.0  # the final order's vote: as many as the pass's two re-votes (module docstring)
WINDOW, STRIDE = 3, 2
SAMPLE = 64  # notes that say whether the vault's notes have passages
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def _windows(body: str) -> tuple[list[str], range]:
    """The note's sentences and where each passage's window of them starts."""
    sentences = [s for s in _SENTENCE.split(body) if s.strip()] or [body]
    return sentences, range(0, max(1, len(sentences) - 1), STRIDE)


@functools.lru_cache(maxsize=1 << 12)
def _passage_number(body: str) -> int:
    """How many passages the note has (memoised per body, as `passage_counts` is)."""
    return len(_windows(body)[1])


def passages(title: str, body: str) -> list[list[str]]:
    """The note's passages as stem lists (module docstring)."""
    sentences, starts = _windows(body)
    head = stems(tokenize(title))
    return [head + stems(tokenize(" ".join(sentences[i:i + WINDOW]))) for i in starts]


@functools.lru_cache(maxsize=1 << 12)
def passage_counts(title: str, body: str) -> tuple[tuple[int, Mapping[str, int]], ...]:
    """(length, term counts) of each passage; memoised per note text (the head of one query
    is often the head of the next)."""
    return tuple((len(p), Counter(p)) for p in passages(title, body))


def best_passage_bm25(query: Sequence[str], idf: Mapping[str, float],
                      counts: Sequence[tuple[int, Mapping[str, int]]], avg: float, k1: float,
                      b: float) -> float:
    """max over passages of sum_t idf(t) tf (k1 + 1) / (tf + k1 (1 - b + b len / avg))."""
    best = 0.0
    terms = sorted(set(query))
    for length, tf in counts:
        norm = k1 * (1 - b + b * length / avg)
        s = sum(idf[t] * tf[t] * (k1 + 1) / (tf[t] + norm) for t in terms if t in tf)
        best = max(best, s)
    return best


def long_notes(corpus: Corpus) -> bool:
    """Whether the vault's median note has at least two passages, judged on SAMPLE notes at
    even strides of the corpus (deterministic, O(SAMPLE) notes, their sentences counted:
    tokenising and stemming them cost a search 1.5 s for one 7 MB note in a small vault)."""
    n = len(corpus)
    picks = sorted({i * n // SAMPLE for i in range(SAMPLE)}) if n else []
    counts = sorted(_passage_number(corpus.bodies[i]) for i in picks)
    return bool(counts) and counts[len(counts) // 2] >= 2


def second_pass(corpus: Corpus, query: str, ranked: Sequence[int], dense: F64 | None,
                bm25: Bm25Index, learned: F64 | None = None) -> tuple[list[int], str]:
    """`ranked` (the final order, best first) with its first HEAD re-ordered, and a report;
    `bm25` gives the document frequencies, k1 and b; `learned`, per note, the factor what was
    learned from use put on its score (module docstring; None: 1 everywhere)."""
    if dense is None:
        return list(ranked), "skipped: no dense signal"
    head = list(ranked[:HEAD])
    if len(head) < 2:
        return list(ranked), "skipped: fewer than 2 hits"
    words = tokenize(query)
    n = len(corpus)
    idf: dict[str, float] = {}
    for s, f in zip(stems(words), bm25.frequency(words), strict=True):
        idf[s] = max(idf.get(s, 0.0), math.log(1 + (n - f + 0.5) / (f + 0.5)))
    if not long_notes(corpus):
        return list(ranked), "skipped: the vault's notes are single passages"
    plists = {i: passage_counts(corpus.titles[i], corpus.bodies[i]) for i in head}
    lengths = [length for i in head for length, _ in plists[i]]
    avg = max(1.0, float(np.mean(lengths)))
    if len(idf) > avg:  # no passage can hold the query (module docstring)
        return list(ranked), (f"skipped: the query's {len(idf)} terms outnumber the words of "
                              f"the head's mean passage ({avg:.0f})")
    lex = {i: best_passage_bm25(list(idf), idf, plists[i], avg, bm25.k1, bm25.b) for i in head}
    final = {i: r for r, i in enumerate(head)}

    def ranks(score: dict[int, float]) -> dict[int, int]:
        return {i: r for r, i in enumerate(sorted(head, key=lambda i: (-score[i], final[i])))}

    lift = {i: 1.0 if learned is None else float(learned[i]) for i in head}
    near = ranks({i: (1.0 + float(dense[i])) / 2 * lift[i] for i in head})
    lexical = ranks({i: lex[i] * lift[i] for i in head})
    agree = kendall_tau([near[i] for i in head], [lexical[i] for i in head])
    trusted = agree >= disagreement_bound(len(head))
    parts = (final, near, lexical) if trusted else (final, lexical)
    weights = (FINAL, 1.0, 1.0)[:len(parts)]
    fused = {i: sum(w / (K + p[i] + 1) for w, p in zip(weights, parts, strict=True))
             for i in head}
    order = sorted(head, key=lambda i: (-fused[i], final[i]))
    moved = sum(1 for r, i in enumerate(order) if final[i] != r)
    votes = "final, dense and passage BM25" if trusted else "final and passage BM25"
    return order + list(ranked[HEAD:]), (f"ran (top {len(head)}: {votes} ranks, final "
                                          f"x{FINAL:g}, RRF k={K}; dense-passage tau "
                                          f"{agree:+.2f}; {moved} moved)")


def disagreement_bound(n: int) -> float:
    """The tau below which two rankings of n items disagree beyond chance (two-sided 5 %):
    -1.96 sqrt(2 (2n + 5) / (9 n (n - 1))), the normal approximation of Kendall's tau under
    independence; -inf for fewer than two items."""
    if n < 2:
        return -math.inf
    return -1.96 * math.sqrt(2 * (2 * n + 5) / (9 * n * (n - 1)))


def kendall_tau(a: Sequence[int], b: Sequence[int]) -> float:
    """Kendall's tau-a of two rankings of the same items (a[j], b[j]: item j's rank under
    each): (concordant - discordant pairs) / all pairs; 0.0 for fewer than two items."""
    n = len(a)
    if n != len(b):
        raise ValueError(f"rankings of {n} and {counted(len(b), 'item')}")
    if n < 2:
        return 0.0
    x, y = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    signs = np.sign(x[:, None] - x[None, :]) * np.sign(y[:, None] - y[None, :])
    return float(np.triu(signs, 1).sum()) / (n * (n - 1) / 2)
