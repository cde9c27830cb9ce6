"""DMF survival score (seed 001): how much an interaction deserves to be kept.

Source: "DMF: A Deterministic Memory Framework for Conversational AI Agents", arXiv:2606.03463
(2026), its survival score Ω and interaction-count decay Ω_eff(Δn).

    Ω = σ(w·x + b),   σ(z) = 1 / (1 + e^(−z))

over deterministic features x of one turn, each in [0, 1]:

=============  ===========================================================  ======
feature        definition                                                    weight
=============  ===========================================================  ======
density        distinct content terms / tokens · min(1, content terms / 8)   +2.0
question       the turn asks something ("?")                                 +0.6
commitment     "I will", "I'll", "I'm going to", "I plan to", "let's", ...    +1.2
preference     "I like/love/prefer/hate/enjoy", "my favourite", ...           +1.2
dates          min(1, resolved date expressions / 2)                         +1.0
names          min(1, named entities / 3)                                    +0.8
provenance     who said it: user 1.0, assistant 0.4, system/tool 0.0         +0.6
statement      the turn states a fact, relation, preference or commitment    +1.2
               (`statements.extract_statements` finds one: "I live in Paris.")
filler         at most 3 content terms, no question, no statement            −1.5
               ("haha thanks!")
bias b                                                                       −1.5
=============  ===========================================================  ======

The coefficients are fixed by hand from what the DMF paper names as signals; they were NOT
fitted to LoCoMo or LongMemEval. Interaction-count decay (DMF's Ω_eff(Δn), no wall clock):

    Ω_eff(Δn) = Ω · 2^(−Δn / H(Ω)),   H(Ω) = H0 · (1 + 4Ω),   H0 = 100 interactions

so a strong memory (Ω = 0.9, H = 460) outlives a weak one (Ω = 0.2, H = 180). A turn whose
Ω_eff falls below ARCHIVE_BELOW is a candidate for reversible archiving.

The "statement" feature (issue 16) exists because short factual turns were scored as filler:
"I live in Paris." has two content terms, so it read Ω = 0.10 without it; with it Ω ≈ 0.69.
Its weight equals the preference and commitment weights (not fitted).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..notes.clocks import TimeRef
from ..notes.text import content_terms, tokenize
from .entities import Entity
from .statements import extract_statements

FEATURES: tuple[str, ...] = (
    "density",
    "question",
    "commitment",
    "preference",
    "dates",
    "names",
    "provenance",
    "statement",
    "filler",
)
WEIGHTS: dict[str, float] = {
    "density": 2.0,
    "question": 0.6,
    "commitment": 1.2,
    "preference": 1.2,
    "dates": 1.0,
    "names": 0.8,
    "provenance": 0.6,
    "statement": 1.2,
    "filler": -1.5,
}
BIAS = -1.5
H0 = 100.0
ARCHIVE_BELOW = 0.05
PROVENANCE: dict[str, float] = {"user": 1.0, "assistant": 0.4, "system": 0.0, "tool": 0.0}

_COMMIT = re.compile(
    r"\b(i will|i'll|i am going to|i'm going to|i'm gonna|i plan to|i'm planning|i am planning|"
    r"i promise|we will|we'll|let's|i need to|i have to|remind me)\b",
    re.I,
)
_PREFER = re.compile(
    r"\b(i (?:really |absolutely )?(?:like|love|prefer|hate|dislike|enjoy|adore)|"
    r"my favou?rite|i'm (?:a )?(?:big )?fan of|i can't stand)\b",
    re.I,
)


@dataclass(frozen=True)
class Survival:
    """Ω with the feature values that produced it (the receipt)."""

    omega: float
    features: dict[str, float]

    def effective(self, newer: int) -> float:
        """Ω_eff after `newer` later interactions."""
        return effective(self.omega, newer)


def logistic(z: float) -> float:
    """σ(z), computed without overflow."""
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def features(
    text: str, entities: Sequence[Entity], time_refs: Sequence[TimeRef], role: str = "user"
) -> dict[str, float]:
    """The feature vector x of one turn (keys in FEATURES order)."""
    plain = text.replace("’", "'")
    toks = tokenize(plain)
    content = content_terms(toks)
    density = (len(set(content)) / len(toks)) * min(1.0, len(content) / 8) if toks else 0.0
    asks = "?" in text
    names = sum(1 for e in entities if e.kind == "name")
    states = bool(extract_statements(plain, "speaker"))
    return {
        "density": density,
        "question": 1.0 if asks else 0.0,
        "commitment": 1.0 if _COMMIT.search(plain) else 0.0,
        "preference": 1.0 if _PREFER.search(plain) else 0.0,
        "dates": min(1.0, len(time_refs) / 2),
        "names": min(1.0, names / 3),
        "provenance": PROVENANCE.get(role, 1.0),
        "statement": 1.0 if states else 0.0,
        "filler": 1.0 if len(content) <= 3 and not asks and not states else 0.0,
    }


def score(
    text: str, entities: Sequence[Entity], time_refs: Sequence[TimeRef], role: str = "user"
) -> Survival:
    """Ω = σ(w·x + b) for one turn."""
    x = features(text, entities, time_refs, role)
    z = BIAS + sum(WEIGHTS[f] * x[f] for f in FEATURES)
    return Survival(logistic(z), x)


def half_life(omega: float) -> float:
    """H(Ω) = H0 · (1 + 4Ω), in interactions."""
    return H0 * (1.0 + 4.0 * omega)


def effective(omega: float, newer: int) -> float:
    """Ω_eff(Δn) = Ω · 2^(−Δn / H(Ω)); Δn < 0 is treated as 0."""
    return float(omega * 2.0 ** (-max(0, newer) / half_life(omega)))


def archivable(omega: float, newer: int) -> bool:
    """True when Ω_eff(Δn) < ARCHIVE_BELOW (archiving is reversible: a frontmatter flag)."""
    return effective(omega, newer) < ARCHIVE_BELOW
