"""Use read from the agent's answer: which retrieved notes an answer text draws on (issue 31).

    answer_uses(answer, texts, min_terms) -> sorted note ids

`texts` holds, for every note the session retrieved, its title and body. A note's distinctive
terms are its content terms (`tokenize`, stop words removed, at least 3 characters or holding
a digit) that no other retrieved note of the session holds: what sets this note apart from the
rest of what the agent saw (a year, a name, a rare word). The answer uses the note when it
holds at least min(min_terms, the note's distinctive term count) of them, and at least one.
Deterministic: a pure function of its arguments (sets only for membership; ids sorted).
The harness calls it at session.end with the answer the agent passes, and logs the ids it
returns in the end event, so replay never needs the note texts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from ..notes.text import STOPWORDS, tokenize


def _terms(text: str) -> set[str]:
    return {t for t in tokenize(text)
            if t not in STOPWORDS and (len(t) >= 3 or any(c.isdigit() for c in t))}


def distinctive_terms(texts: Mapping[int, str]) -> dict[int, set[str]]:
    """Per note, its terms that no other note of `texts` holds."""
    terms = {note: _terms(texts[note]) for note in sorted(texts)}
    seen = Counter(t for note in sorted(terms) for t in terms[note])
    return {note: {t for t in terms[note] if seen[t] == 1} for note in sorted(terms)}


def answer_uses(answer: str, texts: Mapping[int, str], min_terms: int = 2) -> list[int]:
    """The notes of `texts` whose distinctive terms the answer uses (module docstring)."""
    said = _terms(answer)
    out = []
    for note, own in sorted(distinctive_terms(texts).items()):
        need = max(1, min(min_terms, len(own)))
        if own and len(own & said) >= need:
            out.append(note)
    return out
