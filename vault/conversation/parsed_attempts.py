"""Attempts in a task from a turn's spaCy parse (the `nlp` extra): what makes a turn of
another speaker an attempt at the goal (`advice`), and which instructions are courtesies.

In `episodes`' parsed path an outcome counts only after an attempt: a turn of the assistant,
or advice from another speaker: an instruction that is not a courtesy ("Pin the compiler";
not "Take care", "Check it out"), "you could / should / might / can ...", or "try ...". Chat
between two people ("Wow, that looks great!") advises nothing, so a want said in chat and a
later "it was great" make no episode. Same parse -> same answer.
"""

from __future__ import annotations

from typing import Any

from .parsed_polarity import imperative, lemma_key, predicates, subject, word

# Imperatives of courtesy, not of a task ("Take care", "Check it out", "Keep it up").
COURTESY = frozenset("""thank enjoy have keep take let go stay hang come say check_out
    congratulate wish""".split())


def advice(doc: Any) -> bool:
    """True when a turn of another speaker advises an attempt: an instruction that is not a
    courtesy ("Pin the compiler"; not "Take care"), "you could / should / might / can ...",
    or "try ..."."""
    for sent in doc.sents:
        for t in predicates(sent):
            lem, subj = str(t.lemma_).casefold(), subject(t)
            if imperative(t) and lemma_key(t) not in COURTESY and lem not in COURTESY:
                return True
            if lem == "try" and (subj is None or word(subj) == "you"):
                return True
            if subj is not None and word(subj) == "you" and any(
                    c.tag_ == "MD" and word(c) in ("could", "should", "might", "can")
                    for c in t.children):
                return True
    return False
