"""The conjunctive channel's weight from the vault's own cloze queries (issue 33, item 1).

The conjunctive channel (term pairs, a second lexical voice) earns its weight on vaults where
BM25 ranks the notes better than dense does and costs where dense does (BENCHMARKS.md, session
34, QUAL10). Which of the two holds is a property of the vault (and its queries), so it is
estimated from the vault, without labels, by the Inverse Cloze Task (Lee, Chang & Toutanova
2019, "Latent retrieval for weakly supervised open domain question answering"): a sentence
taken out of its note is the query, and the note without that sentence is its one relevant
note. Unlike the calibration's verbatim pseudo-queries (calibration.py), the query's words are
not copied in its target, so BM25 cannot win by matching the sentence itself.

1. Sample: the notes in BLAKE2b(SALT, note key) order that have two or more sentences, one of
   them of 5..40 tokens, and keep MIN_TOKENS body tokens without it; the first SAMPLE (256). The
   sentence is chosen among the note's eligible ones by the same hash. No randomness.
2. BM25 scores the query over the vault with that one note's document replaced by the note
   without the sentence (`Bm25Index.updated`: its term counts, its length, the document
   frequencies and the mean length all as a fresh index of that vault would hold them); dense
   scores it with that note's chunks remade from the rest of its text (embedded through the
   cache), every other note's as indexed.
3. Per query, which of the two ranks the source strictly better (ties dropped). Dense is the
   better channel on this vault when it wins significantly more often: a two-sided exact sign
   test at 5 % (Dixon & Mood 1946, "The statistical sign test"), the convention of the second
   pass's Kendall test; no fitted threshold.
4. Then the conjunctive weight is multiplied by DENSE_BETTER (x0.5); otherwise (and with fewer than
   MIN_QUERIES queries: a vault of one-sentence notes) it stays as configured.

Persisted, checked for drift and shown as calibration.py's calibrations are (method "cloze").
"""

from __future__ import annotations

import hashlib
import heapq
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..notes.text import tokenize
from ..plural import counted
from ..storage.corpus import Corpus
from ..storage.embeddings import EmbeddingCache
from .calibration import CHANNELS, MIN_QUERIES, MIN_TOKENS, Calibration, note_key
from .calibration import reciprocal_rank as rr
from .encoders import Encoder, encode_cached
from .search_params import SearchParams
from .signals.bm25 import Bm25Index, described, field_tokens, note_document
from .signals.dense import DenseIndex, dense_scores
from .signals.dense_units import note_chunks

SALT = b"rmh-cloze/1"
# The calibration's 64 is too few here: on lme_turns (2,286 chat turns) four disjoint samples of
# 64 gave p 0.28, 0.23, 0.015, 0.013 and 256 together 0.0001 (NOTES-QUAL11); each query costs
# one BM25 index update, two embeddings and a dense scan, once per calibration (lme_turns'
# 256 with the index build: 19 s CPU on a machine at load 20).
SAMPLE = 256
# the conjunctive multiplier where dense wins: the calibration grid's x0.5, chosen over its x0
# on lme_turns and titlecorpus, the two replay sets where dense wins (NOTES-QUAL11)
DENSE_BETTER = 0.5
LEVEL = 0.05  # the sign test's two-sided level (the convention, not fitted)
SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")  # calibration.py's sentence boundaries


@dataclass(frozen=True)
class Cloze:
    source: int  # corpus position of the note
    query: str  # the sentence taken out
    rest: str  # the note's body without it


@dataclass(frozen=True)
class Dense:
    """What dense scoring needs: the index, its encoder and cache, the chunking bounds."""

    index: DenseIndex
    encoder: Encoder
    cache: EmbeddingCache | None
    max_tokens: int
    max_units: int


def _hash(key: str) -> bytes:
    return hashlib.blake2b(SALT + key.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _spans(body: str) -> list[tuple[int, int]]:
    """(start, end) of the body's non-blank sentences (calibration.py's boundaries)."""
    spans, at = [], 0
    for m in SENTENCE.finditer(body):
        spans.append((at, m.start()))
        at = m.end()
    spans.append((at, len(body)))
    return [(a, b) for a, b in spans if body[a:b].strip()]


def _cloze(corpus: Corpus, i: int) -> Cloze | None:
    body = corpus.bodies[i]
    spans = _spans(body)
    fit = [s for s in spans if 5 <= len(tokenize(body[s[0]:s[1]])) <= 40]
    if len(spans) < 2 or not fit:
        return None
    a, b = fit[_hash("s" + note_key(corpus, i))[0] % len(fit)]
    rest = (body[:a] + body[b:]).strip()
    if corpus.archived[i] or len(tokenize(rest)) < MIN_TOKENS:
        return None
    return Cloze(i, body[a:b].strip(), rest)


def cloze_queries(corpus: Corpus, size: int = SAMPLE) -> list[Cloze]:
    """The sampled cloze queries, in hash order (module docstring, step 1)."""
    keyed = [(_hash(note_key(corpus, i)), i) for i in range(len(corpus))]
    want = size
    while True:  # look at the first `want` notes in hash order, widen when short
        out = [q for _, i in heapq.nsmallest(want, keyed)
               if (q := _cloze(corpus, i)) is not None][:size]
        if len(out) >= size or want >= len(keyed):
            return out
        want *= 4


def ranks(corpus: Corpus, q: Cloze, bm25: Bm25Index, dense: Dense) -> tuple[float, float]:
    """The source's reciprocal rank under BM25 and under dense (step 2)."""
    i, doc = q.source, field_tokens(corpus.titles[q.source], corpus.aliases[q.source],
                                    described(corpus.frontmatter[q.source],
                                              corpus.titles[q.source], q.rest), q.rest)
    b = bm25.updated({i: (note_document(corpus, i), doc)}, bm25.n_docs).score(q.query)
    qvec = dense.encoder.encode([q.query])[0]
    d = dense_scores(dense.index, dense.encoder, q.query, qvec).copy()
    chunks, _ = note_chunks(corpus.titles[i], q.rest, corpus.frontmatter[i],
                            dense.encoder.count_tokens, dense.max_tokens, dense.max_units)
    rows = encode_cached(dense.encoder, list(chunks), dense.cache)
    d[i] = float(np.max(np.vecdot(rows, qvec.astype(np.float32)))) if len(chunks) else 0.0
    return rr(b, i, corpus.paths), rr(d, i, corpus.paths)


def sign_p(wins: int, losses: int) -> float:
    """Two-sided exact sign test: P(a split at least as uneven | each side 1/2)."""
    n, k = wins + losses, min(wins, losses)
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, j) for j in range(k + 1)) / 2.0 ** n
    return min(1.0, 2.0 * tail)


def verdict(pairs: Sequence[tuple[float, float]]) -> tuple[float, int, int, float]:
    """(the conjunctive multiplier, queries BM25 ranks better, dense better, the sign test's
    p) from each query's (BM25, dense) reciprocal ranks (module docstring, steps 3-4)."""
    bw = sum(1 for b, d in pairs if b > d)
    dw = sum(1 for b, d in pairs if d > b)
    p = sign_p(bw, dw)
    better = len(pairs) >= MIN_QUERIES and dw > bw and p < LEVEL
    return (DENSE_BETTER if better else 1.0), bw, dw, p


def cloze_calibration(corpus: Corpus, bm25: Bm25Index, dense: Dense,
                      configured: Mapping[str, float], *, encoder: str = "") -> Calibration:
    """The conjunctive weight from the cloze balance (module docstring, steps 1-4)."""
    queries = cloze_queries(corpus)
    pairs = [ranks(corpus, q, bm25, dense) for q in queries]
    mult, bw, dw, p = verdict(pairs)
    enough = len(pairs) >= MIN_QUERIES
    base = {s: float(configured.get(s, 1.0)) for s in CHANNELS}
    weights = {s: base[s] * (mult if s == "conjunctive" else 1.0) for s in CHANNELS}
    mrr = {s: float(np.mean([x[k] for x in pairs])) if pairs else 0.0
           for k, s in enumerate(("bm25", "dense"))}
    found = ("dense better" if mult != 1.0 else "dense not better" if enough
             else f"fewer than {MIN_QUERIES}")
    line = (f"cloze on {counted(len(pairs), 'sentence-query', 'sentence-queries')} of "
            f"{counted(len(corpus), 'note')}: bm25 better on "
            f"{bw}, dense on {dw} (sign test p {p:.2g}): {found}, conjunctive x{mult:g} "
            f"(MRR bm25 {mrr['bm25']:.2f}, dense {mrr['dense']:.2f})")
    sample = tuple((corpus.ids[q.source], note_key(corpus, q.source)) for q in queries)
    return Calibration(weights, (1.0, 1.0, mult), mrr, 0.0, 0.0, len(pairs), len(corpus),
                       sample, encoder, (base["bm25"], base["dense"], base["conjunctive"]),
                       method="cloze", line=line)


def never_calibrated(p: SearchParams, has_encoder: bool) -> str | None:
    """Why an engine with params `p` makes no fusion calibration, whatever the vault holds
    (None: it makes one, or uses one made): both switches off, or cloze's two channels not
    both there (SearchEngine.calibration)."""
    if not (p.calibrate or p.cloze):
        return "off"
    if p.calibrate:
        return None
    if not has_encoder:
        return "none: cloze compares dense search with BM25, and dense is off here"
    if not p.weight("dense") or not p.weight("conjunctive"):
        return "none: cloze needs the dense and conjunctive channels, and one is weighted 0"
    return None
