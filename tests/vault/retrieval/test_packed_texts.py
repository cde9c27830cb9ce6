"""PackedTexts gives back exactly the texts it was given, by index and by slice."""

from __future__ import annotations

import random

import pytest

from vault.retrieval.packed_texts import PackedTexts

ALPHABET = "ab \n\x00é漢🙂\ud800"  # NUL, accents, CJK, astral, a lone surrogate


def test_every_index_and_slice_equals_the_list() -> None:
    rng = random.Random(7)
    texts = ["".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 12)))
             for _ in range(103)]
    packed = PackedTexts(block=10)
    packed.extend(texts[:55])
    packed.extend(texts[55:])
    assert len(packed) == len(texts)
    assert list(packed) == texts
    for i in (0, 9, 10, 99, 100, 102, -1, -103):
        assert packed[i] == texts[i]
    for _ in range(200):
        a, b = sorted(rng.randrange(-5, 110) for _ in range(2))
        step = rng.choice((1, 1, 2, 3))
        assert packed[a:b:step] == texts[a:b:step]
    with pytest.raises(IndexError):
        packed[103]


def test_empty() -> None:
    packed = PackedTexts(block=4)
    assert len(packed) == 0 and packed[0:5] == [] and list(packed) == []
