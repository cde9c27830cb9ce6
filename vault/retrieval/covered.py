"""How much of a query a text covers: the idf-weighted share of the query's content terms it
holds; the standard library only (the prompt hook's own path imports it: no numpy).

    coverage(q, d) = Σ_{t∈q, t∈d} idf(t) / Σ_{t∈q} idf(t),
    idf(t) = ln((N − n_t + 0.5) / (n_t + 0.5) + 1)

(BM25's idf, Robertson & Zaragoza 2009, positive for every n_t ≤ N), terms compared by stem as
BM25 matches them ("failing" is in "the test fails"). A query term the collection never uses
has the largest idf, so "the melting point of tungsten" against memory without "tungsten"
is covered little even by a text holding "point". `query_terms`: the query's content terms
(search tokens less stop words) outside its date expressions (times_asked.py
`untimed_asked`: "two months ago" names a time, not a topic the collection lacks), one per
stem. Used by the search's judgement of relevance (relevance.py) and the prompt hook's floor.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..notes.clocks import MONTHS, WEEKDAYS
from ..notes.text import content_terms, stems, tokenize
from ..notes.times_asked import FRAME, untimed_asked


def idf(df: int, n_docs: int) -> float:
    """BM25's idf, ln((N − n + 0.5)/(n + 0.5) + 1): positive for every n ≤ N."""
    return math.log((n_docs - df + 0.5) / (df + 0.5) + 1.0)


def coverage(terms: Sequence[str], dfs: Sequence[int], n_docs: int,
             texts: Sequence[str], days: Sequence[str] = (), day_dfs: Sequence[int] = ()
             ) -> float:
    """The idf-weighted share of `terms` (distinct, with their document frequencies `dfs`)
    found in the best-covered of `texts`; 0.0 without terms or texts. `days` (`day_words`,
    with their frequencies `day_dfs`) count for a text only where it says them: "what broke
    on Monday?" is covered by "On Monday the Auth Service ..." as a topic word would be, and
    a text without the day is judged on the other terms alone, as before."""
    weights = [idf(df, n_docs) for df in dfs]
    extra = [idf(df, n_docs) for df in day_dfs]
    if not texts or sum(weights) + sum(extra) <= 0:
        return 0.0
    best = 0.0
    keys, day_keys = stems(terms), stems(days)
    for text in texts:
        present = set(stems(tokenize(text)))
        said = sum(w for t, w in zip(day_keys, extra, strict=True) if t in present)
        total = sum(weights) + said
        if total > 0:
            best = max(best, (sum(w for t, w in zip(keys, weights, strict=True)
                                  if t in present) + said) / total)
    return best


def query_terms(query: str) -> list[str]:
    """The query's content terms outside its date expressions (times_asked.py
    `untimed_asked`: "two months ago" names a time, not a topic the vault lacks) and, when
    anything else remains, less its frame words (times_asked.py FRAME: "tell" in "Tell me
    about the kiln" is no topic memory lacks), one per stem, in order of first use."""
    words = content_terms(tokenize(untimed_asked(query)))
    first: dict[str, str] = {}
    for word, key in zip(words, stems(words), strict=True):
        first.setdefault(key, word)
    topic = [w for k, w in first.items() if k not in FRAME]
    return topic or list(first.values())


# The calendar names a note may say as plainly as the query: the weekdays and the months but
# "may", which a note says far more often as the verb ("we may move") than as the month.
CALENDAR_NAMES = frozenset(WEEKDAYS) | frozenset(m for m in MONTHS if m != "may")


def day_words(query: str) -> list[str]:
    """The weekday and month names (CALENDAR_NAMES) the query's date expressions hold ("on
    Monday", "last Friday", "in March"): `query_terms` leaves them out as a time, though a
    note may say the day or the month in its words ("In March we moved the office": "what
    happened in March?" was covered 0, HOUSE40)."""
    kept = set(tokenize(untimed_asked(query)))
    return sorted({w for w in tokenize(query) if w in CALENDAR_NAMES and w not in kept})
