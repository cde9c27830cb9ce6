"""The assistant's reaction to a user's report, as evidence of a task's outcome (the `nlp`
extra): what `episodes`' parsed path reads where the parse of the report finds no verdict.

A user's report of a result is often said in words no lexicon of results knows ("cracked
it", "not a peep out of it this morning", "won 3 of my 4 games"), but the assistant's answer
to it says how it went in the plainest words there are: "Brilliant, ten lengths nonstop is a
big jump", "Great to hear!", "I'm sorry, that's a rotten outcome". So:

- `reaction`: VADER's compound score (`valence`) of the *opening* of an assistant's turn
  (its first sentence), when that sentence reacts rather than advises: not a question, and
  its main predicate no imperative ("Try the drill"), no hypothesis ("It could be the
  pads", "Then it may be the valve": a modal or a condition,
  `parsed_polarity.hypothetical`) and no wish ("I hope you all get some sleep soon");
  else 0.
- `judged`: the verdict on a report from the parse's verdict and the reaction's score.
  Where the parse finds none, a score of at least `POSITIVE` is a success and at most
  `NEGATIVE` a failure. The bounds are asymmetric: VADER scores a bare "Sorry to hear it."
  -0.08 (its lexicon gives "sorry" -0.3) and an acceptance such as "Fair enough." or
  "Sounds like a plan." +0.32 / +0.36, which answer plans and give-ups, not successes.
  Against the parse's verdict only a clear reaction of the other polarity (`|score|` at
  least `OVERRULE`) decides: "Brilliant, ten lengths nonstop is a big jump" (+0.59) over a
  "failure" the parse read in "without a single gulp"; a consolation ("A tidy plain wall is
  what most interviewers prefer anyway", +0.46) does not overrule a failure.
- `reports`: the user's turn reports something that has happened: not only questions, and
  none of its statements a plan of the speaker's (a first-person future, "I'll take it to
  the park on Sunday", "gotta find out where it goes"); a reaction to a plan ("Sounds good,
  good luck!") says nothing of an outcome. `plans`: a statement of the turn is such a
  plan (`episodes` reopens a failed task on it); `trials`: such a plan is a trial of the
  advice ("will try it monday", "I'll run it past her and see", "will keep an eye on it";
  not "the same ... next spring"), and a user who leaves on one has said no result yet.

The bounds were set on the bench's tuning sets (`bench/bench_episodes.py`; "Good." scores
+0.44 and praises a step as often as a result, so `POSITIVE` is a trade-off, not a law).

VADER: C. J. Hutto and E. Gilbert, "VADER: A Parsimonious Rule-based Model for Sentiment
Analysis of Social Media Text", ICWSM 2014; package `vadersentiment` 3.3.2 (MIT licence),
a fixed lexicon and fixed rules, so the same text always scores the same. It is part of
the `nlp` extra and imported only here, only when a caller asks (the text rules, `use_nlp`
False, never call this module); without it `valence` is None and `reaction` 0.
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from typing import Any

from .parsed_polarity import INTENT, hypothetical, imperative, predicates, subject, word

# VADER compound bounds of a reaction (module docstring).
POSITIVE = 0.4
NEGATIVE = -0.05
OVERRULE = 0.5
_PLANNERS = frozenset({"i", "we"})
_FUTURE = frozenset({"will", "'ll", "wo", "shall", "gonna", "gotta", "going"})
# Acknowledgements opening a reply ("k. will try monday"), misread as a subject.
_ACKS = frozenset({"k", "kk", "ok", "okay", "sure", "cool", "alright"})
# Verbs of a trial still to come: the advice is to be tried, tested or watched.
TRIAL = frozenset("try test see check attempt watch monitor retry".split())
# Words of doing it again or elsewhere: a plan with one follows a result, it awaits none.
_AGAIN = frozenset("next again too also same other another".split())


@lru_cache(maxsize=1)
def _analyzer() -> Any | None:
    try:
        module = importlib.import_module("vaderSentiment.vaderSentiment")
    except ImportError:
        return None
    return module.SentimentIntensityAnalyzer()


@lru_cache(maxsize=4096)
def valence(text: str) -> float | None:
    """VADER's compound score of `text` in [-1, 1], or None without the package."""
    sia = _analyzer()
    return None if sia is None else float(sia.polarity_scores(text)["compound"])


def _asks(sent: Any) -> bool:
    """The sentence is a question (it ends with "?")."""
    return str(sent.text).rstrip().endswith("?")


def _advises(sent: Any) -> bool:
    """A sentence that advises or supposes rather than reacts (module docstring)."""
    if _asks(sent):
        return True
    return any(imperative(t) or hypothetical(t) or str(t.lemma_).casefold() in INTENT
               for t in predicates(sent)
               if t.dep_ == "ROOT" or (t.dep_ == "conj" and t.head.dep_ == "ROOT"))


def reaction(doc: Any) -> float:
    """VADER's compound score of the opening of an assistant's turn, 0.0 when it advises or
    supposes rather than reacts, or without the package (module docstring)."""
    first = next(iter(doc.sents), None)
    if first is None or _advises(first):
        return 0.0
    return valence(str(first.text)) or 0.0


def judged(score: float, parsed: str | None) -> str | None:
    """The verdict on a report given the reaction's `score` and the parse's verdict
    (`parsed`, None when it found none): where the parse found none, at least `POSITIVE`
    is a success and at most `NEGATIVE` a failure; against the parse's verdict only a clear
    reaction (`|score| >= OVERRULE`) of the other polarity overrules it."""
    said = "success" if score >= POSITIVE else "failure" if score <= NEGATIVE else None
    if parsed is None or said is None or said == parsed:
        return parsed or said
    return said if abs(score) >= OVERRULE else parsed


def _planned(sent: Any) -> list[Any]:
    """The predicates of a first-person future or modal act: "I'll try it tonight", "gotta
    find out", "k. will try monday" (an acknowledgement the small model takes for the
    subject counts as none)."""
    found = []
    for t in predicates(sent):
        subj = subject(t)
        future = any(word(c) in _FUTURE for c in t.children if c.dep_ in ("aux", "advmod"))
        mine = subj is None or word(subj) in _PLANNERS or word(subj).rstrip(".!,") in _ACKS
        if (future and mine) or word(t) in ("gotta", "gonna"):
            found.append(t)
    return found


def _plan(sent: Any) -> bool:
    return bool(_planned(sent))


def _trial(t: Any) -> bool:
    """A planned act that puts the advice to the test: a verb of trying or watching ("I'll
    try it tonight", "will test it on Monday", "I'll run it past her and see", "will keep an
    eye on it"); not a repeat or an extension after a result (`_AGAIN`: "I'll try the same
    trick on the peppers next spring")."""
    acts = [t, *(c for c in t.children if c.dep_ == "conj")]
    if any(word(d) in _AGAIN for a in acts for d in a.subtree):
        return False  # doing it again or elsewhere after a result: "try the same on the peppers"
    return any(str(a.lemma_).casefold() in TRIAL or (
        str(a.lemma_).casefold() == "keep" and any(word(c) == "eye" for c in a.children))
        for a in acts)


def reports(doc: Any) -> bool:
    """The user's turn reports something that happened (module docstring)."""
    said = [s for s in doc.sents if not _asks(s)]
    return bool(said) and not any(_plan(s) for s in said)


def trials(doc: Any) -> bool:
    """A statement of the turn plans a trial of the speaker's (`_trial`): the user leaves to
    try the advice, so no result is said yet (`episodes` drops the verdict so far when this
    is the speaker's last turn and it says no verdict of its own)."""
    return any(_trial(t) for s in doc.sents if not _asks(s) for t in _planned(s))


def plans(doc: Any) -> bool:
    """A statement of the turn is a plan of the speaker's (`_plan`): "I'll take it to the
    park on Sunday and try there"."""
    return any(_plan(s) for s in doc.sents if not _asks(s))
