"""Use read from the answer (vault/learning/answer.py): golden cases and invariants."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from vault.learning.answer import answer_uses, distinctive_terms

TEXTS = {
    1: "Dana Reyes\nDana Reyes is a chemist born in 1987 in Porto. She works for Halvorsen Labs.",
    2: "Ilse Marr\nIlse Marr is a chemist born in 1950 in Lumen. She works for Halvorsen Labs.",
    3: "Halvorsen Labs\nHalvorsen Labs is an organisation founded in 1911.",
}


def test_distinctive_terms_are_those_no_other_retrieved_note_holds() -> None:
    terms = distinctive_terms(TEXTS)
    assert terms[1] == {"dana", "reyes", "1987", "porto"}
    assert "chemist" not in terms[1] and "halvorsen" not in terms[3]  # shared
    assert terms[3] == {"organisation", "founded", "1911"}


def test_golden_answers() -> None:
    assert answer_uses("Dana Reyes was born first, in 1987.", TEXTS) == [1]
    assert answer_uses("Dana (1987) is older than Ilse (1950).", TEXTS) == [1, 2]
    # one distinctive term is not enough when the note has two or more
    assert answer_uses("Porto.", TEXTS) == []
    assert answer_uses("Halvorsen Labs, a chemist's employer.", TEXTS) == []  # shared terms
    assert answer_uses("", TEXTS) == [] and answer_uses("Dana Reyes", {}) == []


@given(st.text(max_size=200), st.dictionaries(st.integers(0, 20), st.text(max_size=80),
                                               max_size=6))
def test_deterministic_and_only_retrieved_notes(answer: str, texts: dict[int, str]) -> None:
    got = answer_uses(answer, texts)
    assert got == sorted(got) and set(got) <= set(texts)
    assert answer_uses(answer, dict(reversed(list(texts.items())))) == got
