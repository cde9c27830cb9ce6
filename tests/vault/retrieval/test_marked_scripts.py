"""Search in scripts whose vowels, viramas or points are combining marks (Devanagari, Bengali,
Tamil, Arabic, Hebrew): a word is one token (notes/text.py `tokenize`), so a query finds the
note holding the word, not notes sharing its letters; Arabic and Hebrew found with or without
their optional points, Arabic alef/teh marbuta typed either way; by `init` and by a new
process on the persisted store."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from vault import Vault

# (word, the word without its optional points or None, words of the same letters)
WORDS = [("हिन्दी", None, "हम दिन में नदी देखते हैं"), ("विज्ञान", None, "वन में ज्ञानी नाना जी"),
         ("पुस्तकालय", None, "पुल पर सत्य कल आलय"), ("শান্তি", None, "শত নদী তির শান"),
         ("தமிழ்", None, "தம் மிழ ழகர"), ("مُحَمَّد", "محمد", "حمامة مد محم دم"),
         ("الْكِتَابُ", "الكتاب", "كتب الكت ابو لك"), ("שָׁלוֹם", "שלום", "של לום שם לו"),
         ("סֵפֶר", "ספר", "ספ פר רס"), ("أحمد", "احمد", "حمد مد اح"),
         ("مدرسة", "مدرسه", "درس مدر سة")]


@pytest.mark.parametrize("seed", range(3))
def test_a_word_written_with_combining_marks_is_found_and_only_it(tmp_path: Path,
                                                                    seed: int) -> None:
    rng = random.Random(seed)
    root = tmp_path / "v"
    root.mkdir()
    want: dict[str, str] = {}
    for i, (word, plain, others) in enumerate(rng.sample(WORDS, 6)):
        if rng.random() < 0.3:  # in the title only
            name = f"{word} {i}.md"
            (root / name).write_text(f"Note {i}.\n", encoding="utf-8")
        else:
            name = f"n{i}.md"
            (root / name).write_text(f"# Note {i}\n\nA line about {word} here.\n", "utf-8")
        for j in range(3):
            (root / f"d{i}-{j}.md").write_text(f"{others} {j}\n", encoding="utf-8")
        want[word] = name
        if plain is not None:
            want[plain] = name
    for j in range(6):
        (root / f"o{j}.md").write_text(f"Other plain words {j}.\n", encoding="utf-8")
    for opened in (Vault.init, Vault.open):
        with opened(root) as v:
            for query, name in want.items():
                got = [h.note for h in v.search(query, k=3, learn=False).hits]
                assert got[:1] == [name] and not [g for g in got if g.startswith("d")], \
                    (query, got)
