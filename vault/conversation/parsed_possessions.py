"""What the speaker has, from "my X" / "our X" in a turn's spaCy parse (with the `nlp` extra).

"My sister moved to Lisbon" says the speaker has a sister; "I welded it in my garage" that
they have a garage. For each possessive "my" or "our" on a common noun, in a part of a
sentence that does not ask (`parsed_statements.asked`), one statement (speaker, "has", X) of
kind "fact", first person (c_obs 0.7); "your" the same of the addressee, when there is one
("Your store looks great" -> (addressee, "has", store)), not first person (c_obs 0.5), and
not of what is shown or given in the chat (`SHOWN`: "your pic", "your encouragement"):

- X is the noun's words from the possessive to the noun, without determiners, quantifiers
  and evaluative adjectives (`parsed_entities`), the last word singular ("my online store"
  -> "online store", "our kids" -> "kid");
- refused: the object of a verb ("I sold my bike" is an act, `parsed_statements`); the
  subject or attribute of "be" ("my boss is Maria" is the pattern table's role), unless a
  "this is" / "here's" shows the speaker's own ("This is my husband", "Here's my new
  painting": `_shown`); a noun that names no
  thing one has: vague (`entities.STOP_NOUNS`), abstract (`parsed_entities.ABSTRACT`), or a
  part or state of the self (`NOT_OWNED`: life, heart, mind, mood, way, best, skill, trip
  ...) or one the pattern table's roles refuse (`statements._ROLE_STOP`: plan, goal, idea,
  point, turn ...); what everyone has (`EVERYONE_HAS`: parents, family); a noun that is itself an
  owner ("my mom's house" is about the house); a noun with an "of"/"for" complement, which
  names a kind, choice or pursuit of something ("my own form of therapy", "your quest for
  better health"); a noun said to be a favourite ("my favorite
  dishes"); "our" on a plural ("our stories"); a proper
  name ("my Subaru" is kept by the name rows, not here); X longer than
  `statements.MAX_OBJECT_WORDS` words.

Same parse and speaker -> same statements, in text order, one per value.
"""

from __future__ import annotations

from typing import Any

from .entities import STOP_NOUNS, _fold, normalise
from .parsed_entities import _EVALUATIVE, _QUANTIFIERS, ABSTRACT
from .parsed_statements import asked
from .statements import _ROLE_STOP, MAX_OBJECT_WORDS, Statement

NOT_OWNED = frozenset(
    """life lives heart mind soul mood head face eye eyes hand hands body self voice
    best own turn side name fault pleasure journey goal goals dream dreams feeling feelings
    fave faves fav favs
    emotion emotions thought thoughts opinion favorite favourite favorites favourites
    attention energy spirit confidence happiness health wellbeing strength
    experience experiences memory memories skill skills talent imagination trip trips
    vacation holiday enthusiasm commitment dedication determination attitude style
    courage kindness resilience patience work friendship power action approach adventure
    adventures""".split())
# What everyone has: "my mom", "my dad" say no more than that the speaker was born.
EVERYONE_HAS = frozenset(
    """mom mum mother dad father parent parents family folks""".split())
_KEPT_POS = ("NOUN", "ADJ", "PROPN", "VERB")


# What the addressee is shown to have in chat, not in life: "your pic", "your message",
# and what they give the speaker in it: "your encouragement", "your offer".
SHOWN = frozenset(
    """photo photos pic pics picture pictures post posts message messages story stories word
    words text texts video videos snap snaps shot shots encouragement backing offer
    compliment compliments feedback input suggestion suggestions thoughts kindness
    generosity""".split())
FAVOURITE = frozenset({"favorite", "favourite", "fave"})
_OWNERS = {"my": True, "our": True, "your": False}  # possessive -> said of the speaker


def extract_possessions(doc: Any, speaker: str, addressee: str = "") -> tuple[
        Statement, ...]:
    """The ("has", X) statements of one parsed turn said by `speaker` (module docstring)."""
    found: list[Statement] = []
    seen: set[tuple[str, str]] = set()
    for sent in doc.sents:
        for tok in sent:
            own = _OWNERS.get(_fold(tok.text))
            if tok.dep_ != "poss" or own is None or asked(tok) or not (own or addressee):
                continue
            noun = tok.head
            if not own and (_fold(noun.text) in SHOWN or _fold(noun.lemma_) in SHOWN):
                continue  # "your pic": what was just shown, not a belonging
            if any(c.dep_ == "amod" and _fold(c.text) in FAVOURITE for c in noun.children):
                continue  # "my favorite dishes": a preference, not a belonging
            if noun.pos_ != "NOUN" or noun.i < tok.i or noun.dep_ == "dobj" or (
                    noun.dep_ == "attr" and not (own and _shown(noun))):
                continue  # "I won my fourth tournament": the act says it, not a belonging
            if noun.dep_ == "poss":
                continue  # "my mom's house": the house is what the sentence is about
            if any(c.dep_ == "prep" and _fold(c.text) in ("of", "for") for c in noun.children):
                continue  # "my own form of therapy", "our choice of apartment": no belonging
            if _fold(tok.text) == "our" and noun.tag_ == "NNS":
                continue  # "our stories": everyone's, nobody's in particular
            if noun.dep_ == "nsubj" and _fold(noun.head.lemma_) == "be" and not (
                    own and _shown(noun)):
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
            owner = _fold(speaker if own else addressee)
            if not value or len(value.split()) > MAX_OBJECT_WORDS or (owner, value) in seen:
                continue
            seen.add((owner, value))
            found.append(Statement(owner, "has", value, "fact", None, own, _fold(sent.text)))
    return tuple(found)


_POINTERS = frozenset({"this", "that", "these", "those", "here"})


def _shown(noun: Any) -> bool:
    """`noun` is what "this is" / "here's" presents: "This is my brother", "These are my
    kids", "Here's my new painting" (the owner shows a belonging), not a picture of the
    moment (`SHOWN`); "Maria is my boss" is the pattern table's role, "It's my new hobby"
    says no more than the turn before."""
    verb = noun.head
    if _fold(verb.lemma_) != "be" or _fold(noun.lemma_) in SHOWN:
        return False  # "Here is our photo together": the photo shown, no belonging
    dep = "nsubj" if noun.dep_ == "attr" else "advmod"
    return any(c.dep_ == dep and _fold(c.text) in _POINTERS for c in verb.children)
