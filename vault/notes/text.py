"""Word tokens for every lexical signal (BM25, conjunctive code, extractive answers).

`tokenize` is the one tokenizer of rmh: NFKC-normalised, case-folded, Unicode `\\w+` runs,
with underscores treated as separators. It is deterministic and locale-free. Scripts written
without spaces between words (Han, kana, Hangul; Thai, Lao, Khmer, Myanmar) give overlapping
character bigrams instead of one token per run, as Lucene's CJKAnalyzer and Elasticsearch's
`cjk_bigram` do: "機械学習" is `機械 械学 学習`, so "学習" finds it; a lone character is its own
token. Text holding none of those scripts is tokenised exactly as before (the fast path).
`stems` maps tokens to their English Snowball stems; BM25 indexes and queries stems
(signals/bm25.py), the other lexical signals read the tokens themselves.
"""

from __future__ import annotations

import functools
import re
import threading
import unicodedata
from collections.abc import Iterable
from typing import Any

_WORD = re.compile(r"[^\W_]+", re.UNICODE)

# The blocks of the scripts written without spaces between words: Thai and Lao, Myanmar,
# Hangul Jamo, Khmer, CJK radicals, CJK symbols to Hangul compatibility Jamo and the kana
# extensions, CJK Unified Ideographs (extension A and the base block), Hangul syllables and
# Jamo extensions, CJK compatibility ideographs, the kana supplements, and ideographs of the
# supplementary planes. Only letters, digits and the marks below ever reach the test.
_SPACELESS_RANGES = ((0x0E00, 0x0EFF), (0x1000, 0x109F), (0x1100, 0x11FF), (0x1780, 0x17FF),
                     (0x2E80, 0x2FDF), (0x3000, 0x31FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF),
                     (0xA960, 0xA97F), (0xAC00, 0xD7FF), (0xF900, 0xFAFF), (0x1B000, 0x1B16F),
                     (0x20000, 0x3134F))
# The same blocks as the body of a regular-expression character class (storage/mentions.py:
# a name in such a script is a word wherever it stands in running text).
SPACELESS_CLASS = "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in _SPACELESS_RANGES)
# The lead bytes of UTF-8 sequences of three or four bytes: a text without one holds no
# character from U+0800 up, so none of those scripts (the common case of accented Latin).
_HIGH_UTF8 = re.compile(rb"[\xe0-\xf4]")


@functools.cache
def _spaceless() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(a run of those scripts, a run of a word: letters, digits and those scripts' marks),
    compiled on first use: the blocks' class takes sre ~5 ms to compile, which a process that
    never meets such text should not pay at import. The marks (Thai vowel and tone signs, a
    Khmer coeng...) are not `\\w`; inside a run they belong to the word. Only the first six
    blocks hold marks (2,000 code points read, not the 10^5 ideographs)."""
    spaceless = SPACELESS_CLASS
    marks = "".join(chr(c) for a, b in _SPACELESS_RANGES[:6] for c in range(a, b + 1)
                    if unicodedata.category(chr(c)) in ("Mn", "Mc"))
    return re.compile(f"[{spaceless}]+"), re.compile(f"(?:[^\\W_]|[{re.escape(marks)}])+")


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
    """Lowercase word tokens of `text` (NFKC, casefold, Unicode letters and digits); runs of
    a script written without spaces as overlapping bigrams (module docstring)."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    if folded.isascii() or _HIGH_UTF8.search(folded.encode("utf-8", "surrogatepass")) is None:
        return _WORD.findall(folded)
    spaceless, runs = _spaceless()
    if spaceless.search(folded) is None:
        return _WORD.findall(folded)
    out: list[str] = []
    for run in runs.findall(folded):
        at = 0
        for m in spaceless.finditer(run):
            if m.start() > at:
                out.append(run[at:m.start()])
            seg = m.group()
            out.extend([seg] if len(seg) == 1 else [seg[i:i + 2] for i in range(len(seg) - 1)])
            at = m.end()
        if at < len(run):
            out.append(run[at:])
    return out


def spaceless(ch: str) -> bool:
    """Whether the character `ch` is of a script written without spaces between words."""
    code = ord(ch)
    return any(a <= code <= b for a, b in _SPACELESS_RANGES)


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
