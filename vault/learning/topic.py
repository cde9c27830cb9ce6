"""What a note's learned score is about: the phrases of the queries it was used (or skipped) for.

A note's learned score (evidence.py) says how useful it was when examined; it was examined for
particular queries. Applied to every query alike, a note read for "when was Ravi Lindqvist's
employer founded" would be lifted for a question about two other organisations that merely
share its list (measured: unrelated held-out MRR -0.066 on the knowledge workload). So the
score acts on a query in proportion to how much of that query its evidence was about:

    gate(Q, d) = sum_{t in T(Q) & B_d} idf(t) / sum_{t in T(Q), df(t) > 0} idf(t)   in [0, 1]
    idf(t)     = ln(1 + N / df(t))

T(Q): the query's phrases, each pair of adjacent content terms (`tokenize`, stop words
removed: "ravi lindqvist", "lindqvist employer"), each once -- pairs, not single words, because
names share words (a question about Felix Brandt and Mira Ferro is not about Felix Ferro; with
single words it lifted him: unrelated MRR -0.022 on the knowledge workload, the gate's design
was chosen on that workload); B_d: the phrases of the queries whose searches
showed d in sessions that used it (`use` bag; the `skip` bag for sessions that passed it over,
which gates a negative score); N: the number of logged searches
and df(t): how many of them held t. Phrases no logged query ever held are left out of the
denominator, so the words a paraphrase adds do not dilute it, and a phrase every query holds
("born earlier") weighs little. No shared phrase (a question about other things): gate 0,
the note's score has no effect. Each bag keeps its `terms_cap` most frequent phrases (ties:
the newest, then by phrase), so the state stays bounded. Pure and deterministic: no clock,
sorted iteration.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence

from ..notes.clocks import untimed
from ..notes.text import STOPWORDS, tokenize


@functools.lru_cache(maxsize=4096)  # queries are short, and a replay folds each many times
def content_tokens(text: str) -> tuple[str, ...]:
    """A query's content tokens in order (`tokenize`, stop words removed), outside its date
    expressions (`untimed`: a time is no topic; expansion.py, learning v8)."""
    return tuple(t for t in tokenize(untimed(text)) if t not in STOPWORDS)


def query_terms(text: str) -> list[str]:
    """The distinct phrases of a query, sorted: each pair of adjacent content terms ("ravi
    lindqvist"), or the one content term of a query that has only one; the words of its date
    expressions are no terms (`content_tokens`)."""
    words = content_tokens(text)
    if len(words) < 2:
        return sorted(set(words))
    return sorted({f"{a} {b}" for a, b in itertools.pairwise(words)})


def add_terms(bag: dict[str, int], terms: Iterable[str], cap: int) -> None:
    """Count `terms` into `bag` (in place), then keep its `cap` most frequent; among equal
    counts the terms just added win (so a new topic can enter a full bag), then by term."""
    new = set(terms)
    for t in sorted(new):
        bag[t] = bag.get(t, 0) + 1
    if len(bag) > cap:
        keep = sorted(bag.items(), key=lambda kv: (-kv[1], kv[0] not in new, kv[0]))[:cap]
        bag.clear()
        bag.update(sorted(keep))


def weights(terms: Iterable[str], df: Mapping[str, int], searches: int
            ) -> list[tuple[str, float]]:
    """(phrase, idf) for the query's phrases that some logged query held, sorted: computed
    once per query, then `gate_of` per note."""
    out = []
    for t in sorted(set(terms)):
        n = df.get(t, 0)
        if n > 0:
            out.append((t, math.log1p(max(searches, n) / n)))
    return out


def gate_of(weighted: Sequence[tuple[str, float]], bag: Mapping[str, int]) -> float:
    """The gate from a query's `weights` and a note's bag."""
    total = sum(w for _, w in weighted)
    hit = sum(w for t, w in weighted if t in bag)
    return 0.0 if total <= 0.0 else min(1.0, hit / total)


def gate(terms: Iterable[str], bag: Mapping[str, int], df: Mapping[str, int],
         searches: int) -> float:
    """The share of the query (by idf) that the note's evidence was about (module docstring)."""
    return gate_of(weights(terms, df, searches), bag)
