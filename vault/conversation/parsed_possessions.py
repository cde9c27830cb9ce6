"""What the speaker has, from "my X" / "our X" in a turn's spaCy parse (with the `nlp` extra).

"My sister moved to Lisbon" says the speaker has a sister; "I welded it in my garage" that
they have a garage. For each possessive "my" or "our" on a common noun, in a sentence that is
not a question, one statement (speaker, "has", X) of kind "fact", first person (c_obs 0.7):

- X is the noun's words from the possessive to the noun, without determiners, quantifiers
  and evaluative adjectives (`parsed_entities`), the last word singular ("my online store"
  -> "online store", "our kids" -> "kid");
- refused: the object of a verb ("I sold my bike" is an act, `parsed_statements`); the
  subject of "be" ("my boss is Maria" is the pattern table's role); a noun that names no
  thing one has: vague (`entities.STOP_NOUNS`), abstract (`parsed_entities.ABSTRACT`), or a
  part or state of the self (`NOT_OWNED`: life, heart, mind, mood, way, best, skill, trip
  ...) or one the pattern table's roles refuse (`statements._ROLE_STOP`: plan, goal, idea,
  point, turn ...); what everyone has (`EVERYONE_HAS`: parents, family); a noun that is itself an
  owner ("my mom's house" is about the house); "our" on a plural ("our stories"); a proper
  name ("my Subaru" is kept by the name rows, not here); X longer than
  `statements.MAX_OBJECT_WORDS` words.

Same parse and speaker -> same statements, in text order, one per value.
"""

from __future__ import annotations

from typing import Any

from .entities import STOP_NOUNS, _fold, normalise
from .parsed_entities import _EVALUATIVE, _QUANTIFIERS, ABSTRACT
from .statements import _ROLE_STOP, MAX_OBJECT_WORDS, Statement

NOT_OWNED = frozenset(
    """life lives heart mind soul mood head face eye eyes hand hands body self voice
    best own turn side name fault pleasure journey goal goals dream dreams feeling feelings
    emotion emotions thought thoughts opinion favorite favourite favorites favourites
    attention energy spirit confidence happiness health wellbeing strength
    experience experiences memory memories skill skills talent imagination trip trips
    vacation holiday""".split())
# What everyone has: "my mom", "my dad" say no more than that the speaker was born.
EVERYONE_HAS = frozenset(
    """mom mum mother dad father parent parents family folks""".split())
_KEPT_POS = ("NOUN", "ADJ", "PROPN", "VERB")


def extract_possessions(doc: Any, speaker: str) -> tuple[Statement, ...]:
    """The ("has", X) statements of one parsed turn said by `speaker` (module docstring)."""
    found: list[Statement] = []
    seen: set[str] = set()
    for sent in doc.sents:
        if sent.text.rstrip().endswith("?"):
            continue
        for tok in sent:
            if tok.dep_ != "poss" or _fold(tok.text) not in ("my", "our"):
                continue
            noun = tok.head
            if noun.pos_ != "NOUN" or noun.i < tok.i or noun.dep_ in ("dobj", "attr"):
                continue  # "I won my fourth tournament": the act says it, not a belonging
            if noun.dep_ == "poss":
                continue  # "my mom's house": the house is what the sentence is about
            if _fold(tok.text) == "our" and noun.tag_ == "NNS":
                continue  # "our stories": everyone's, nobody's in particular
            if noun.dep_ == "nsubj" and _fold(noun.head.lemma_) == "be":
                continue  # "My boss is Maria": the pattern table's role (reports_to)
            lemma = _fold(noun.lemma_ if noun.tag_ == "NNS" and noun.lemma_ else noun.text)
            if lemma in STOP_NOUNS or lemma in ABSTRACT or _fold(noun.text) in NOT_OWNED \
                    or lemma in NOT_OWNED or lemma in EVERYONE_HAS or lemma in _ROLE_STOP:
                continue
            words = [t for t in doc[tok.i + 1 : noun.i + 1]
                     if t.pos_ in _KEPT_POS and _fold(t.text) not in _QUANTIFIERS
                     and not (t.i != noun.i and _fold(t.text) in _EVALUATIVE)
                     and any(c.isalpha() for c in t.text)]
            if not words or words[-1].i != noun.i:
                continue
            value = normalise(" ".join(t.text.lower() for t in words))
            if not value or len(value.split()) > MAX_OBJECT_WORDS or value in seen:
                continue
            seen.add(value)
            found.append(Statement(_fold(speaker), "has", value, "fact", None, True,
                                   _fold(sent.text)))
    return tuple(found)
