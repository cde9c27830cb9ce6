"""Arabic and Hindi words are found by their other written forms (notes/text.py `stem`:
Snowball's Arabic and Hindi stemmers): an Arabic noun carries its article, conjunction and
prepositions (ال و ب ل) and possessive or plural suffixes in the same written word, so
"كتاب" found none of "الكتاب", "وكتابهم", "بالكتاب" (VAULT6_arabic_stem.out: 1.7 % of the
forms found, 51.5 % now); a Hindi plural or oblique ("किताबें", "लड़कों") is found by its
base. Persian words (Arabic script, letters Arabic lacks) are left as they are."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from vault import Vault
from vault.notes.text import stem, tokenize

# (the word asked, written forms a note holds it in)
FORMS = [("كتاب", ["الكتاب", "كتابهم", "بالكتاب", "كتابها", "للكتاب"]),
         ("مدرسة", ["المدرسة", "بالمدرسة", "مدرستهم", "مدرسات", "مدرسه"]),
         ("معلم", ["المعلم", "معلمين", "المعلمون", "للمعلم"]),
         ("مسافر", ["المسافر", "مسافرون", "بالمسافر", "مسافرين"]),
         ("किताब", ["किताबें", "किताबों"]), ("लड़का", ["लड़के", "लड़कों"]),
         ("कमरा", ["कमरे", "कमरों"])]
PERSIAN = ["کتابخانه", "دانشگاه", "کتابها", "پدرم", "گفتگو", "میخواهم"]


def test_forms_share_the_stem_of_their_word_and_persian_is_left_alone() -> None:
    for word, forms in FORMS:
        (want,) = tokenize(word)
        assert {stem(tokenize(f)[0]) for f in forms} == {stem(want)}, word
    for word in PERSIAN:
        (tok,) = tokenize(word)
        assert stem(tok) == tok


@pytest.mark.parametrize("seed", range(3))
def test_a_word_finds_the_notes_holding_its_other_forms(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    root = tmp_path / "v"
    root.mkdir()
    want: dict[str, str] = {}
    for i, (word, forms) in enumerate(rng.sample(FORMS, 5)):
        name = f"n{i}.md"
        (root / name).write_text(f"# Note {i}\n\nA line: {rng.choice(forms)} here.\n", "utf-8")
        want[word] = name
    for j in range(8):
        (root / f"o{j}.md").write_text(f"Other plain words {j} درس سفر.\n", encoding="utf-8")
    with Vault.init(root) as v:
        for word, name in want.items():
            got = [h.note for h in v.search(word, k=3, learn=False).hits]
            assert got[:1] == [name], (word, got)
