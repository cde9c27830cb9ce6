"""`stem`'s shortcut for tokens the stemmer leaves as they are, checked against the stemmer."""

from __future__ import annotations

import itertools
import random

import snowballstemmer

from vault.notes.text import stem, stems

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
