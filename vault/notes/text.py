"""Word tokens for every lexical signal (BM25, conjunctive code, extractive answers).

`tokenize` is the one tokenizer of rmh: NFKC-normalised, case-folded, Unicode `\\w+` runs,
with underscores treated as separators. It is deterministic and locale-free. Scripts written
without spaces between words (Han, kana, Hangul; Thai, Lao, Khmer, Myanmar) give overlapping
character bigrams instead of one token per run, as Lucene's CJKAnalyzer and Elasticsearch's
`cjk_bigram` do: "機械学習" is `機械 械学 学習`, so "学習" finds it; a lone character is its own
token. A combining mark (a Devanagari vowel sign or virama, Arabic harakat, Hebrew points)
belongs to the word before it, as Unicode's word boundaries (UAX #29) keep it, instead of
splitting "हिन्दी" into letters; Arabic harakat and Hebrew points, written or left out at
will, are then dropped and Arabic alef/teh marbuta/yeh variants folded (as Lucene's Arabic
normaliser does), so "محمد" finds "مُحَمَّد" and "احمد" "أحمد". Text
holding none of those scripts and no mark is tokenised exactly as before (the fast path).
`stems` maps tokens to their Snowball stems (English; Arabic and Hindi for words of those
scripts); BM25 indexes and queries stems (signals/bm25.py), the other lexical signals read
the tokens themselves.
"""

from __future__ import annotations

import functools
import hashlib
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
_ASTRAL_UTF8 = re.compile(rb"[\xf0-\xf4]")  # a character above U+FFFF: it may be a mark
_MARKABLE_UTF8 = re.compile(rb"[\xcc-\xf4]")  # a character from U+0300 (the first marks) up


@functools.cache
def _marked() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """(a mark, tatweel or Arabic letter variant: what the fast path cannot read; a word: a
    letter or digit then letters, digits and marks; the marks to delete from a word:
    `_OPTIONAL_POINTS`...), compiled on first use as `_spaceless` is (~20 ms: the marks'
    ranges are read from the Unicode database), which `_has_marks` puts off until a text
    holds a mark or is long."""
    codes = _marks()
    # sre tests a class of the Basic Multilingual Plane by a table, a class reaching above it
    # range by range (~300 ranges: 6x slower a character), so the two are apart
    bmp = _class(sorted([c for c in codes if c < 0x10000] + [0x0640]))
    special = _class(sorted([c for c in codes if c < 0x10000] + [0x0640, *_VARIANTS]))
    cls = f"{bmp}|{_class(c for c in codes if c >= 0x10000)}"
    lead = _class(ord(c) for c in _spaceless_marks())
    drop = _dropped()
    points = re.compile(_class(c for c in drop if c < 0x10000) + "+|"
                        + _class(c for c in drop if c >= 0x10000) + "+")
    words = re.compile(f"(?:[^\\W_]|{lead})(?:[^\\W_]|{cls})*")
    return re.compile(special), words, points


# Until `_marked` is compiled, a text up to this long is read character by character instead
# (a prompt, a query, a chat turn: "what’s up 😀" holds no mark, and a hook that reads one
# should not pay 20 ms for the classes); past it, or once they are compiled, one regex scan.
_SHORT = 1000


def _has_marks(folded: str, utf8: bytes) -> bool:
    """Whether `folded` (`utf8` its bytes) may hold a combining mark, a tatweel or an Arabic
    letter variant: what the fast path cannot read. By the regex, any character above U+FFFF
    counts (`_marked`: its class stops at U+FFFF); read character by character (`_SHORT`),
    only those; the words are the same either way."""
    if len(folded) > _SHORT or _marked.cache_info().currsize:
        return _marked()[0].search(folded) is not None or _ASTRAL_UTF8.search(utf8) is not None
    return any(_special(c) for c in set(folded) if c >= "\u0300")  # any(): order-free


@functools.cache
def _special(c: str) -> bool:
    """`c` is a mark (Mn, Mc, Me), the tatweel or an Arabic letter variant (`_VARIANTS`)."""
    return unicodedata.category(c) in ("Mn", "Mc", "Me") or ord(c) in (0x0640, *_VARIANTS)


@functools.cache
def _marks() -> tuple[int, ...]:
    """Every combining mark's code point (Mn, Mc, Me), ascending."""
    return tuple(c for c in (*range(0x300, 0x20000), *range(0xE0100, 0xE01F0))
                 if unicodedata.category(chr(c)) in ("Mn", "Mc", "Me"))


@functools.cache
def _dropped() -> tuple[int, ...]:
    """The code points a word loses (`script_points`, variation selectors), ascending; an
    enclosing mark ends its word instead (`_ENCLOSING`)."""
    drop = [*map(ord, script_points())]
    drop += [c for c in _marks() if 0xFE00 <= c <= 0xFE0F or c >= 0xE0100]
    return tuple(sorted(drop))


# The enclosing marks (Me: the keycap U+20E3, the enclosing circle and square...): each ends
# its word, as a space would, so a list "1️⃣2️⃣3️⃣" is the words 1, 2, 3, not "123", and "2️⃣2"
# is 2 and 2. A fixed set (the thirteen code points of Unicode 14, the last added in 6.0).
_ENCLOSING = re.compile("[\u0488\u0489\u1abe\u20dd-\u20e0\u20e2-\u20e4\ua670-\ua672]")


@functools.cache
def script_points() -> str:
    """The Hebrew and Arabic points and the tatweel (`_OPTIONAL_POINTS`' nonspacing marks and
    U+0640) that search reads away wherever they stand (`search_form`); a few hundred code
    points, read without `_marks`' scan of the whole database."""
    return "".join(chr(c) for a, b in _OPTIONAL_POINTS for c in range(a, b + 1)
                   if unicodedata.category(chr(c)) == "Mn" or c == 0x0640)


# Format characters a word goes on across (UAX #29 rule WB4 ignores them): the soft hyphen
# (hyphenation hints in text pasted from web pages and PDFs: "Donau\u00addampf\u00adschiff"),
# the zero-width joiner (Sinhala "ශ්\u200dරී", Malayalam chillu, emoji sequences), the word
# joiner and the zero-width no-break space (a byte-order mark inside text). Deleted, so the
# word is the one typed without them. The zero-width non-joiner stays a word edge (Persian
# "می\u200cخواهم" reads as "می خواهم", as Lucene's Persian analyser reads it).
JOINERS = "\u00ad\u200d\u2060\ufeff"
_JOINER = re.compile(f"[{JOINERS}]")


def _unjoined(folded: str) -> str:
    """`folded` without `JOINERS` (ASCII text holds none: returned as it is)."""
    if folded.isascii() or _JOINER.search(folded) is None:
        return folded
    return _JOINER.sub("", folded)


def search_form(folded: str) -> str:
    """A case-folded NFKC text as search's words read it (`tokenize`): "i\u0307" (a folded
    "İ") is "i", an Arabic letter variant is its plain letter, and the optional points and
    `JOINERS` are gone. Erasure reads a name so (storage/mentions.py): what search finds,
    forget names. Builds the mark tables only when the text holds a mark (`_has_marks`)."""
    folded = _unjoined(folded)
    utf8 = folded.encode("utf-8", "surrogatepass")
    if _MARKABLE_UTF8.search(utf8) is None or not _has_marks(folded, utf8):
        return folded  # no mark, tatweel or letter variant: nothing to read away
    return _unpointed(folded, _marked()[2])


def _unpointed(folded: str, points: re.Pattern[str]) -> str:
    if "i\u0307" in folded:  # İ casefolds to i + U+0307: "İstanbul" is "istanbul"
        folded = folded.replace("i\u0307", "i")
    if _ARABIC_VARIANT.search(folded) is not None:
        folded = folded.translate(_ARABIC_FOLD)
    if _ENCLOSING.search(folded) is not None:
        folded = _ENCLOSING.sub(" ", folded)
    return points.sub("", folded)


def _class(codes: Iterable[int]) -> str:
    """A regex character class of ascending code points, as ranges."""
    spans: list[list[int]] = []
    for c in codes:
        if spans and spans[-1][1] == c - 1:
            spans[-1][1] = c
        else:
            spans.append([c, c])
    return "[" + "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in spans) + "]"


# Arabic letters typed either way (Lucene's ArabicNormalizer): alef with madda or hamza above
# or below is alef, teh marbuta heh, alef maksura yeh; "احمد" finds "أحمد".
_VARIANTS = (0x0622, 0x0623, 0x0625, 0x0629, 0x0649)
_ARABIC_VARIANT = re.compile("[\u0622\u0623\u0625\u0629\u0649]")
_ARABIC_FOLD = dict(zip(_VARIANTS, (0x0627, 0x0627, 0x0627, 0x0647, 0x064A), strict=True))
# A letter of `search_form`'s output -> the letters it reads as that letter
SEARCH_VARIANTS = {"i": "\u0130", "\u0627": "\u0622\u0623\u0625", "\u0647": "\u0629",
                   "\u064a": "\u0649"}

# Hebrew points and cantillation, Arabic harakat, Quranic marks and the tatweel: optional in
# writing (their nonspacing marks only, plus U+0640 TATWEEL, are deleted from tokens), as are
# variation selectors (the emoji keycap "1️⃣" is the token "1": `_ENCLOSING`).
_OPTIONAL_POINTS = ((0x0591, 0x05C7), (0x0610, 0x061A), (0x0640, 0x065F), (0x0670, 0x0670),
                    (0x06D6, 0x06ED))


@functools.cache
def _spaceless_marks() -> str:
    """The combining marks of the spaceless scripts' first six blocks (Thai vowel and tone
    signs, a Khmer coeng...): a word may start with one of them, as session 30's runs did.
    Only those blocks hold marks (2,000 code points read, not the 10^5 ideographs)."""
    return "".join(chr(c) for a, b in _SPACELESS_RANGES[:6] for c in range(a, b + 1)
                   if unicodedata.category(chr(c)) in ("Mn", "Mc"))


@functools.cache
def _spaceless() -> re.Pattern[str]:
    """A run of those scripts, compiled on first use: the blocks' class takes sre ~5 ms to
    compile, which a process that never meets such text should not pay at import."""
    spaceless = SPACELESS_CLASS
    return re.compile(f"[{spaceless}]+")


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
    if folded.isascii():
        return _WORD.findall(folded)
    folded = _unjoined(folded)
    utf8 = folded.encode("utf-8", "surrogatepass")
    if _MARKABLE_UTF8.search(utf8) is None:  # all below U+0300: accented Latin
        return _WORD.findall(folded)
    spaceless = _spaceless() if _HIGH_UTF8.search(utf8) is not None else None
    plain = spaceless is None or spaceless.search(folded) is None
    marked = _has_marks(folded, utf8)
    if plain and not marked:
        return _WORD.findall(folded)
    if marked:
        _, runs, points = _marked()
        words = runs.findall(_unpointed(folded, points))
    else:  # no mark to keep or drop: the words are `_WORD`'s
        words = _WORD.findall(folded)
    if plain or spaceless is None:  # (`plain` is True when None: this narrows the type)
        return words
    out: list[str] = []
    for run in words:
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
    2001, snowballstem.org), via the `snowballstemmer` package; deterministic. A token that
    starts at U+0600 or above takes `_script_stem` instead (Arabic, Hindi; others as they are).

    A token of at most two characters, or ending in an ASCII digit, is its own stem without
    asking the stemmer: Porter2 leaves a word shorter than three letters as it is, and every
    rule after its prelude removes or replaces a suffix of letters (or an apostrophe), which
    a word ending in a digit does not have; the prelude's marking of a consonant y is undone
    by its postlude (tests/vault/notes/test_text.py checks it against the stemmer). Numbers,
    ids and hashes are most of the distinct tokens of logs and data: a 7 MB note of ids had
    350,000 of them, each a stemmer call (about 0.1 ms) in every new process."""
    if len(token) <= 2 or "0" <= token[-1] <= "9":
        return token
    if token[0] >= "\u0600":
        return _script_stem(token)
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


# Letters of Persian, Urdu and other languages written in Arabic script that Arabic does not
# use (پ چ ژ گ ک ی ے ٹ ڈ ڑ ں ھ): a word holding one is left unstemmed, as Snowball's Arabic
# stemmer cuts their words wrong (کتابخانه -> کتابخ; VAULT6_arabic_stem.out).
_NOT_ARABIC = re.compile("[\u067e\u0686\u0698\u06af\u06a9\u06cc\u06d2\u0679\u0688"
                         "\u0691\u06ba\u06be]")
_SCRIPT_STEMMERS: dict[str, Any] = {}


@functools.lru_cache(maxsize=1 << 16)
def _script_stem(token: str) -> str:
    """An Arabic word's Snowball Arabic stem (clitics و ال ب ل and suffixes ها هم ات ين ون off:
    "الكتاب" and "كتابهم" are "كتاب"), taken again until it stays (one pass strips a prefix or
    one suffix class: "المدرسه" -> "مدرسه" -> "مدرس", as "مدرسه" gives at once), a Devanagari
    word's Snowball Hindi stem ("किताबें" is "किताब"); any other token as it is. Both stemmers
    ship with `snowballstemmer`."""
    c = token[0]
    if "\u0620" <= c <= "\u064a" and _NOT_ARABIC.search(token) is None:
        lang = "arabic"
    elif "\u0900" <= c <= "\u097f":
        lang = "hindi"
    else:
        return token
    with _STEM_LOCK:
        if lang not in _SCRIPT_STEMMERS:
            import snowballstemmer

            _SCRIPT_STEMMERS[lang] = snowballstemmer.stemmer(lang)
        out: str = _SCRIPT_STEMMERS[lang].stemWord(token)
        for _ in range(2 if lang == "arabic" else 0):
            token, out = out, _SCRIPT_STEMMERS[lang].stemWord(out)
            if out == token:
                break
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


# Words whose stems tell Snowball's releases apart (snowballstemmer 2.2 stems "university"
# "univers", as "universe"; 3.x "universiti": NOTES-DET6.md, session 32), and words of the
# Arabic and Hindi stemmers: what `stemmer_fingerprint` stems.
_FINGERPRINT_WORDS = ("university", "universe", "generously", "news", "dying", "skies",
                      "proceeding", "\u0627\u0644\u0645\u0643\u062a\u0628\u0629",
                      "\u0643\u062a\u0627\u0628\u0647\u0645",
                      "\u0915\u093f\u0924\u093e\u092c\u0947\u0902",
                      "\u0932\u0921\u093c\u0915\u094b\u0902")


@functools.cache
def stemmer_fingerprint() -> str:
    """A name for the stems `stem` gives in this process (16 hex digits of SHA-256 over its
    stems of `_FINGERPRINT_WORDS`): what an index of stems stored on disk was made with.
    pyproject allows any snowballstemmer from 2.2 on, and the releases stem some words
    differently, so an index saved before an upgrade held stems no query made any more."""
    joined = "\x1f".join(stem(w) for w in _FINGERPRINT_WORDS)
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()[:16]


def content_stems(text: str) -> frozenset[str]:
    """The stems of the content terms of `text` (search tokens less stop words): what a
    question and a text must share to connect (conversation/passages.py, the hooks' floor).
    Not memoised by text (a long-lived daemon would hold every note body it saw); `stem`
    is, by token."""
    return frozenset(stems(content_terms(tokenize(text))))
