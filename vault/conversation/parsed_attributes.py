"""Copular facts and acts of the addressee from a turn's spaCy parse (with the `nlp` extra).

`parsed_statements` takes acts ("I joined a club"); "be" is no act there. Two more shapes
state lasting facts, each one statement of kind "fact", in a sentence that is not a question:

- what the speaker is into, on or in, or is disposed towards: "be" with a first-person
  subject (as in `parsed_statements`) and a prepositional object that is a noun or a name
  ("I'm more into reading" -> ("is:into", reading)); the preposition is "into", or "on"/"in"
  with a group one belongs to (`GROUPS`: "I've been on a sports team" -> ("is:on", sports
  team)), or it hangs on an adjective of lasting disposition (`DISPOSITIONS`: "I'm
  passionate about fashion" -> ("is:passionate_about", fashion)); first person (c_obs 0.7);
- what the addressee did, congratulated on or praised for ("Congrats on opening your own car
  shop" -> (addressee, "did:open", "<addressee>'s car shop")): a gerund with an object after
  "on"/"for" on a word of congratulation (`CONGRATS`) or on "proud"; only with one
  addressee; not first person (c_obs 0.5).

A negation on the verb ("I've never been on a team", "I'm not into golf") keeps the fact
and says so in the key ("is_not:on"); a modal or conditional refuses it (`parsed_statements`).
Objects are refused and keyed as in `parsed_statements` (vague, abstract, pointed at, too
long). Same parse and speakers -> same statements, in text order.
"""

from __future__ import annotations

from typing import Any

from .entities import _fold, normalise
from .parsed_objects import _DEMONSTRATIVES, _OF_THE_MOMENT, _phrase, unpointed, vague
from .parsed_statements import _HEDGE, _NO_ACT, _first_person, stated
from .statements import MAX_OBJECT_WORDS, Statement

# Groups one is on or in: "on a team", "in a band".
GROUPS = frozenset(
    """team club band choir league committee board crew squad group society orchestra
    troupe union council""".split())
# Adjectives that state a lasting disposition towards their object (general English, not
# read off any label file): "passionate about", "good at", "allergic to".
DISPOSITIONS = frozenset(
    """passionate interested keen fond good great bad skilled experienced obsessed addicted
    hooked allergic afraid scared terrified crazy mad nuts big""".split())
# Participles of a lasting pull said of oneself in the passive ("I've always been drawn to
# strategy games", "I was fascinated by reptiles"); the dispositions above too when the parse
# makes them participles ("I'm obsessed with classic cars"). Not "inspired", "amazed",
# "impressed": a reaction to what was just said or shown.
DRAWN = frozenset("awed fascinated drawn captivated intrigued enchanted".split()) | DISPOSITIONS
_DRAWN_PREPS = frozenset({"by", "with", "to", "in", "on", "about", "of"})
CONGRATS = frozenset({"congrats", "congratulations", "congratulation", "kudos", "props"})
_NEGATIONS = frozenset({"not", "n't", "never"})


def _negated(tok: Any) -> bool | None:
    """True when `tok` is negated, None when it or a head above it is hedged."""
    negated = False
    while True:
        for child in tok.children:
            if child.dep_ not in ("aux", "mark", "advmod", "neg"):
                continue
            word = _fold(child.text)
            if word in _HEDGE:
                return None
            if word in _NEGATIONS:
                negated = True
        if tok.dep_ == "ROOT" or tok.head.i == tok.i:
            return negated
        tok = tok.head


def usable(obj: Any, *, pointed_ok: bool = False) -> bool:
    """`obj` can be a statement's object: a noun or name, not a stop or abstract noun, not
    pointed at ("this", "those": a thing of the moment); with `pointed_ok` (a congratulation
    names what it is for: "congrats on achieving that milestone") only what is shown or of
    the moment is refused when pointed at ("that pic")."""
    if obj.pos_ not in ("NOUN", "PROPN"):
        return False
    if vague(obj):  # "family time" is a thing, "the time" is not
        return False
    head = _fold(obj.lemma_ or obj.text)
    pointed = any(_fold(c.text) in _DEMONSTRATIVES for c in obj.children if c.dep_ == "det")
    return not pointed or (pointed_ok and head not in _OF_THE_MOMENT)


def _pobjs(prep: Any) -> list[Any]:
    """The prepositional objects of `prep` and their conjuncts ("into books and films")."""
    found = []
    for obj in prep.children:
        if obj.dep_ == "pobj":
            found.append(obj)
            found.extend(c for c in obj.children if c.dep_ == "conj")
    return found


def _copular(doc: Any, be: Any) -> list[tuple[str, Any]]:
    """(key tail, object) pairs of one first-person "be" (module docstring)."""
    pairs: list[tuple[str, Any]] = []
    for child in be.children:
        word = _fold(child.text)
        if child.dep_ == "prep" and word in ("into", "on", "in"):
            for obj in _pobjs(child):
                if word == "into" or _fold(obj.lemma_ or obj.text) in GROUPS:
                    pairs.append((word, obj))
        elif child.dep_ == "acomp":
            adjective = _fold(child.lemma_ or child.text)
            if adjective not in DISPOSITIONS:
                continue
            for prep in (c for c in child.children if c.dep_ == "prep"):
                for obj in _pobjs(prep):
                    pairs.append((f"{adjective}_{_fold(prep.text)}", obj))
    return pairs


def _drawn(tok: Any) -> list[tuple[str, Any]]:
    """(key tail, object) pairs of a first-person passive of `DRAWN` ("I'm drawn to owls")."""
    word = _fold(tok.text)
    if tok.tag_ != "VBN" or word not in DRAWN:
        return []
    if not any(c.dep_ == "auxpass" for c in tok.children):
        return []
    subjects = [c for c in tok.children if c.dep_ == "nsubjpass"]
    if not subjects or _fold(subjects[0].text) not in ("i", "we"):
        return []
    return [(f"{word}_{_fold(prep.text)}", obj) for prep in tok.children
            if prep.dep_ in ("agent", "prep") and _fold(prep.text) in _DRAWN_PREPS
            for obj in _pobjs(prep)]


def _congratulated(tok: Any) -> Any | None:
    """The object of a gerund said in congratulation ("congrats on opening a shop")."""
    prep = tok.head
    if tok.tag_ != "VBG" or tok.dep_ != "pcomp" or prep.dep_ != "prep":
        return None
    if _fold(prep.text) not in ("on", "for"):
        return None
    anchor = _fold(prep.head.lemma_ or prep.head.text)
    if _fold(prep.head.text) not in CONGRATS and anchor != "proud":
        return None
    objects = [c for c in tok.children if c.dep_ == "dobj"]
    return objects[0] if objects else None


def extract_attributes(doc: Any, speaker: str, addressee: str = "") -> tuple[Statement, ...]:
    """The copular and addressee statements of one parsed turn said by `speaker`."""
    found: list[Statement] = []
    for clause, tok in stated(doc):
        copula = _fold(tok.lemma_) == "be" and tok.pos_ in ("AUX", "VERB") and _first_person(tok)
        pairs = _copular(doc, tok) if copula else _drawn(tok)
        if pairs:
            negated = _negated(tok)
            if negated is None:
                continue
            for tail, obj in pairs:
                if not usable(obj):
                    continue
                value = normalise(_phrase(doc, obj), speaker=speaker, addressee=addressee)
                key = ("is_not:" if negated else "is:") + tail
                for part in value.split(" and "):  # a chunk "reading and fantasy novels"
                    if part and len(part.split()) <= MAX_OBJECT_WORDS:
                        found.append(Statement(_fold(speaker), key, part, "fact", None,
                                               True, clause))
            continue
        obj = _congratulated(tok) if addressee else None
        if obj is None or not usable(obj, pointed_ok=True):
            continue
        lemma = _fold(tok.lemma_)
        if lemma in _NO_ACT and lemma not in ("get", "make", "take", "do"):
            continue
        value = unpointed(normalise(_phrase(doc, obj), speaker=speaker, addressee=addressee))
        if value and len(value.split()) <= MAX_OBJECT_WORDS:
            found.append(Statement(_fold(addressee), f"did:{lemma}", value, "fact", None,
                                   False, clause))
    return tuple(found)
