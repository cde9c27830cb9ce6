"""Word tokens for every lexical signal (BM25, conjunctive code, extractive answers).

`tokenize` is the one tokenizer of rmh: NFKC-normalised, case-folded, Unicode `\\w+` runs,
with underscores treated as separators. It is deterministic and locale-free. `stems` maps
tokens to their English Snowball stems; BM25 indexes and queries stems (signals/bm25.py), the
other lexical signals read the tokens themselves.
"""

from __future__ import annotations

import functools
import re
import threading
import unicodedata
from collections.abc import Iterable
from typing import Any

_WORD = re.compile(r"[^\W_]+", re.UNICODE)

# A small fixed English stop-word list (function words only). Content terms are what remains.
STOPWORDS: frozenset[str] = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its
    itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    s t d ll m re ve don didn doesn isn wasn weren hasn haven hadn won wouldn shouldn couldn
    also get got just like really yeah oh ok okay um uh
    """.split()
)


def tokenize(text: str) -> list[str]:
    """Lowercase word tokens of `text` (NFKC, casefold, Unicode letters and digits)."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def content_terms(tokens: Iterable[str]) -> list[str]:
    """The tokens that are not stop words, in order (duplicates kept)."""
    return [t for t in tokens if t not in STOPWORDS]


_STEM_LOCK = threading.Lock()
_STEMMER: Any = None


def stem(token: str) -> str:
    """The English Snowball ("Porter2") stem of one `tokenize` token (Porter 1980; Porter
    2001, snowballstem.org), via the `snowballstemmer` package; deterministic.

    A token of at most two characters, or ending in an ASCII digit, is its own stem without
    asking the stemmer: Porter2 leaves a word shorter than three letters as it is, and every
    rule after its prelude removes or replaces a suffix of letters (or an apostrophe), which
    a word ending in a digit does not have; the prelude's marking of a consonant y is undone
    by its postlude (tests/vault/notes/test_text.py checks it against the stemmer). Numbers,
    ids and hashes are most of the distinct tokens of logs and data: a 7 MB note of ids had
    350,000 of them, each a stemmer call (about 0.1 ms) in every new process."""
    if len(token) <= 2 or "0" <= token[-1] <= "9":
        return token
    return _snowball(token)


@functools.lru_cache(maxsize=1 << 18)
def _snowball(token: str) -> str:
    """The stemmer's answer for `token`, memoised per word; the stemmer object keeps state
    between calls, so misses take a lock."""
    global _STEMMER
    with _STEM_LOCK:
        if _STEMMER is None:
            import snowballstemmer

            _STEMMER = snowballstemmer.stemmer("english")
        out: str = _STEMMER.stemWord(token)
    return out


def stems(tokens: Iterable[str]) -> list[str]:
    """`stem` of each token, in order (BM25's terms: signals/bm25.py), each distinct token
    stemmed once per call: a long note repeats its words, and more distinct words than
    `_snowball`'s memo holds would otherwise evict one another before they come again."""
    memo: dict[str, str] = {}
    out: list[str] = []
    for t in tokens:
        s = memo.get(t)
        if s is None:
            s = memo[t] = stem(t)
        out.append(s)
    return out


def content_stems(text: str) -> frozenset[str]:
    """The stems of the content terms of `text` (search tokens less stop words): what a
    question and a text must share to connect (conversation/passages.py, the hooks' floor).
    Not memoised by text (a long-lived daemon would hold every note body it saw); `stem`
    is, by token."""
    return frozenset(stems(content_terms(tokenize(text))))
