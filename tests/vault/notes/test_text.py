"""`stem`'s shortcut for tokens the stemmer leaves as they are, checked against the stemmer;
`tokenize`'s bigrams of scripts written without spaces, and its unchanged Latin tokens."""

from __future__ import annotations

import itertools
import random
import re
import unicodedata

import pytest
import snowballstemmer
from hypothesis import given, settings
from hypothesis import strategies as st

import vault.notes.text as text_module
from vault.notes.text import stem, stems, tokenize

ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
# suffixes Porter2 removes or replaces, and its exceptional words
ENDINGS = ("s", "ss", "sses", "ies", "ied", "us", "ed", "edly", "ing", "ingly", "eed", "eedly",
           "y", "ational", "tional", "enci", "anci", "izer", "bli", "alli", "fulli", "lessli",
           "ousli", "ization", "ation", "ator", "alism", "aliti", "iviti", "biliti", "logi",
           "ogi", "li", "icate", "ative", "alize", "iciti", "ical", "ful", "ness", "al", "ance",
           "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ism", "ate",
           "iti", "ous", "ive", "ize", "ion", "e", "l", "skis", "dying", "news", "gently")


def test_short_tokens_and_tokens_ending_in_a_digit_are_their_own_stems() -> None:
    snowball = snowballstemmer.stemmer("english")
    short = ["".join(p) for k in (1, 2) for p in itertools.product(ALPHABET, repeat=k)]
    rng = random.Random(7)
    ending = [rng.choice(("", "y", "yy", "é")) + "".join(rng.choices(ALPHABET, k=rng.randint(0, 6)))
              + rng.choice(ENDINGS) + "".join(rng.choices("0123456789", k=rng.randint(1, 3)))
              for _ in range(20_000)]
    for token in short + ending:
        assert snowball.stemWord(token) == token, token
        assert stem(token) == token


def test_stems_equal_the_stemmer_word_by_word() -> None:
    snowball = snowballstemmer.stemmer("english")
    words = "running runs ran easily generalization skies news 3d h2o ab abc y2k caresses".split()
    assert stems(words * 3) == [snowball.stemWord(w) for w in words * 3]


# Every block holding a script written without spaces (notes/text.py `_SPACELESS_RANGES`).
_SPACELESS = ((0x0E00, 0x0EFF), (0x1000, 0x109F), (0x1100, 0x11FF), (0x1780, 0x17FF),
              (0x2E80, 0x2FDF), (0x3000, 0x31FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF),
              (0xA960, 0xA97F), (0xAC00, 0xD7FF), (0xF900, 0xFAFF), (0x1B000, 0x1B16F),
              (0x20000, 0x3134F))


def _spaceless(c: str) -> bool:
    return any(a <= ord(c) <= b for a, b in _SPACELESS)


def _marked(c: str) -> bool:  # a mark, a tatweel or an Arabic letter variant (folded)
    return unicodedata.category(c).startswith("M") or c in "\u0640\u0622\u0623\u0625\u0629\u0649"


_OTHER = st.characters(exclude_categories=["Cs"]).filter(lambda c: not any(
    _spaceless(x) or _marked(x) for x in unicodedata.normalize("NFKC", c).casefold()))


@settings(max_examples=400, deadline=None)
@given(st.text(_OTHER, max_size=60) | st.lists(st.sampled_from(
    [*"aZ é_ß-9'İıǅﬁ\u00a0", "o\u0301", "e\u0301"]), max_size=40).map("".join))
def test_text_without_spaceless_scripts_is_tokenised_as_before(text: str) -> None:
    """Latin (and every other spaced script) keeps the tokens of the `\\w+` tokenizer that
    every benchmark number was measured with: the bigrams touch only the spaceless scripts,
    the joining of marks only the text that keeps a mark after NFKC and casefolding (o +
    U+0301 composes; İ folds to i + U+0307, read as i, the `\\w+` tokenizer's token)."""
    folded = unicodedata.normalize("NFKC", text).casefold().replace("i\u0307", "i")
    folded = re.sub("[\u00ad\u200d\u2060\ufeff]", "", folded)  # no word edge (text.JOINERS)
    assert tokenize(text) == re.findall(r"[^\W_]+", folded)


# (a word whose vowels, viramas or points are combining marks, the word written without its
# optional points, a word of the same script sharing letters with it)
MARKED = [("हिन्दी", None, "नदी"), ("विज्ञान", None, "वन"), ("पुस्तकालय", None, "सत्य"),
          ("শান্তি", None, "শান"), ("தமிழ்", None, "தம்"), ("ಕನ್ನಡ", None, "ನಡ"),
          ("മലയാളം", None, "മല"),
          ("مُحَمَّد", "محمد", "حمام"), ("الْكِتَابُ", "الكتاب", "كتب"), ("كتـــاب", "كتاب", "تاب"),
          ("أحمد", "احمد", "حمد"), ("مدرسة", "مدرسه", "درس"), ("مستشفى", "مستشفي", "شفي"),
          ("שָׁלוֹם", "שלום", "שם"), ("סֵפֶר", "ספר", "פר"), ("ö\u0301ber", None, "ber")]


@pytest.mark.parametrize("seed", range(4))
def test_a_combining_mark_stays_in_its_word(seed: int) -> None:
    """A vowel sign, virama or point is part of the word it is written in (UAX #29 word
    boundaries), not a break: a word of Devanagari, Bengali, Tamil... is one token, found by
    itself and not by another word of the same letters; Arabic harakat, tatweel and Hebrew
    points are optional, and Arabic alef, teh marbuta and yeh typed either way, so the word
    written without them is the same token."""
    rng = random.Random(seed)
    for _ in range(40):
        word, plain, other = rng.choice(MARKED)
        left, right = rng.choice(["", "x ", "9 ", "機械 "]), rng.choice(["", " y", "。", " 学"])
        toks = tokenize(f"{left}{word}{right}")
        (one,) = tokenize(word)
        assert one in toks and tokenize(other)[0] not in toks, (word, toks)
        assert len(toks) == len(tokenize(left)) + 1 + len(tokenize(right)), toks
        if plain is not None:
            assert tokenize(plain) == [one]


@pytest.mark.parametrize("seed", range(4))
def test_a_part_of_a_spaceless_run_is_a_run_of_its_tokens(seed: int) -> None:
    """Any two or more adjacent characters of a CJK/Thai run tokenise to a contiguous run of
    the whole text's tokens (what lets "学習" find 機械学習); Latin words around it stay whole."""
    rng = random.Random(seed)
    pools = ["機械学習自然言語処理東京大学病院", "ひらがなカタカナテスト", "데이터베이스한국어문법",
             "ภาษาไทยงายมาก"]
    for _ in range(50):
        pool = rng.choice(pools)
        run = "".join(rng.choice(pool) for _ in range(rng.randint(2, 12)))
        text = f"word{rng.randint(0, 9)} {run}。 Latin"
        toks = tokenize(text)
        assert toks[0].startswith("word") and toks[-1] == "latin"
        i = rng.randint(0, len(run) - 2)
        part = run[i:rng.randint(i + 2, len(run))]
        sub = tokenize(part)
        assert any(toks[k:k + len(sub)] == sub for k in range(len(toks))), (run, part)
    assert tokenize("学") == ["学"]


# Characters from U+0300 up that are no mark: punctuation a prompt holds, emoji (astral, a
# skin tone, ZWJ), Greek, Cyrillic, Latin extended, kana and an ideograph
_NO_MARK = [*"\u2019\u201c\u2014\u2026€Ωдλệ", "😀", "👍\U0001f3fb", "\u200d", "が", "學", "한"]


@pytest.mark.parametrize("seed", range(3))
def test_a_text_without_marks_compiles_no_mark_class(seed: int) -> None:
    """A prompt or query holding a curly quote or an emoji (characters from U+0300 up, no
    mark) is tokenised without compiling the mark classes (~20 ms, which `rmh hook prompt`
    paid on every such prompt: REV_hookcost.py.txt), and gives the words it gives once they are
    compiled; a text with a mark still compiles them."""
    rng = random.Random(seed)
    texts = ["".join(rng.choice([*_NO_MARK, *"aB 9_-."]) for _ in range(rng.randrange(1, 60)))
             for _ in range(200)]
    text_module._marked.cache_clear()
    before = [tokenize(t) for t in texts]
    assert text_module._marked.cache_info().currsize == 0
    text_module._marked()
    assert [tokenize(t) for t in texts] == before
    text_module._marked.cache_clear()
    assert tokenize("what\u2019s हिन्दी") == ["what", "s", "हिन्दी"]
    assert text_module._marked.cache_info().currsize == 1


# keycaps ("1️⃣": digit, VS16, U+20E3), a digit with only the keycap, enclosing circle and
# square, Cyrillic millions sign, words and digits around them
_ENCLOSED = ["1\ufe0f\u20e3", "7\u20e3", "#\ufe0f\u20e3", "a\u20dd", "x\u20de", "\u0488",
             "10", "item", " ", "9", "é"]


@pytest.mark.parametrize("seed", range(3))
def test_an_enclosing_mark_ends_its_word(seed: int) -> None:
    """An enclosing mark (the keycap U+20E3 of "1️⃣", a circle, a square) ends the word it
    closes, as a space would: a numbered list written "1️⃣2️⃣3️⃣" was the one token "123", and
    "2️⃣2" was "22", so neither "1" nor "2" found it, and "123" found it instead."""
    rng = random.Random(seed)
    for _ in range(300):
        text = "".join(rng.choice(_ENCLOSED) for _ in range(rng.randint(1, 12)))
        spaced = re.sub("[\u0488\u20dd\u20de\u20e3]", " ", text).replace("\ufe0f", "")
        want = re.findall(r"[^\W_]+", unicodedata.normalize("NFKC", spaced).casefold())
        assert tokenize(text) == want, ascii(text)
    assert tokenize("1\ufe0f\u20e32\ufe0f\u20e33\ufe0f\u20e3") == ["1", "2", "3"]
