"""A note's conjunctive units come from its first MAX_NOTE_TERMS content terms only
(signals/unit_codes.py): a long note of distinct words costs the index a bounded number of
units, the same in a full build and an incremental update."""

from __future__ import annotations

import numpy as np
import pytest

from vault.notes.text import content_terms, tokenize
from vault.retrieval.signals.conjunctive import ConjunctiveIndex
from vault.retrieval.signals.unit_codes import (
    MAX_NOTE_TERMS,
    WINDOW,
    coded,
    text_codes,
)


def words(n: int, start: int = 0) -> str:
    """`n` distinct content terms, a stop word after every third (they are not counted)."""
    return " ".join(f"q{i}" + (" the" if i % 3 == 0 else "") for i in range(start, start + n))


@pytest.mark.parametrize("n", [MAX_NOTE_TERMS - 1, MAX_NOTE_TERMS, MAX_NOTE_TERMS + 1,
                               3 * MAX_NOTE_TERMS])
def test_a_long_note_makes_the_units_of_its_head(n: int) -> None:
    text = words(n)
    head = words(min(n, MAX_NOTE_TERMS))
    assert len(content_terms(tokenize(head))) == min(n, MAX_NOTE_TERMS)
    codes = text_codes(text)
    np.testing.assert_array_equal(codes, text_codes(head))
    assert codes.size <= MAX_NOTE_TERMS * WINDOW
    flat, counts, _ = coded(["alpha beta", text, "gamma"])  # a build: the same units
    assert counts.tolist() == [text_codes("alpha beta").size, codes.size, 1]
    np.testing.assert_array_equal(flat[counts[0] : counts[0] + counts[1]], codes)


def test_an_update_with_a_long_note_equals_a_fresh_build() -> None:
    base = ["alpha beta gamma", "beta delta", words(10, 0)]
    long = words(2 * MAX_NOTE_TERMS, 5)  # shares q5..q9 with the third note
    index = ConjunctiveIndex.from_texts(base).updated({3: (None, long)}, 4)
    fresh = ConjunctiveIndex.from_texts([*base, long])
    assert int(index.m[3]) == int(fresh.m[3]) <= MAX_NOTE_TERMS * WINDOW
    def held(ix: ConjunctiveIndex) -> dict[int, int]:  # unit code -> n_u (columns differ)
        return {c: d for c, d in zip(ix.vocab.tolist(), ix.df.tolist(), strict=True) if d}

    assert held(index) == held(fresh)
    for name in ("m", "s1", "s2"):
        np.testing.assert_array_equal(getattr(index, name), getattr(fresh, name))
    for query in ("q6 q7", "beta", f"q{MAX_NOTE_TERMS} q{MAX_NOTE_TERMS + 1}", "q9 the q8"):
        np.testing.assert_array_equal(index.score(query), fresh.score(query))
