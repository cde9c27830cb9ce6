"""The object of a statement from a turn's spaCy parse (with the `nlp` extra): which noun it
is and its words. Shared by `parsed_statements` and its siblings.

- a quantity gives what it holds ("lots of books" -> books), a noun with a name in apposition
  the name ("this amazing woman, Jean" -> Jean), a partitive head what it is made of ("a
  group of hikers" -> "group of hiker");
- "this"/"these" on a noun of the moment point at what is shown ("this pic"), elsewhere they
  bring in a new thing ("I read this book"); "that"/"those" always point;
- a vague noun alone says nothing ("the time"); named by a noun before it, it is a thing
  ("family time");
- where an object was had or done is its own "at" phrase, or "in" phrase after a verb of
  taking part ("had a letdown in a video game tourney"), not a date ("a trip in June");
- the place one took someone or something to says more than what was taken ("We took them to
  the dog park" -> ("to", park)).
"""

from __future__ import annotations

import re
from typing import Any

from .entities import STOP_NOUNS, _fold
from .parsed_entities import _EVALUATIVE, ABSTRACT, PARTITIVE

_DEMONSTRATIVES = frozenset({"this", "that", "these", "those"})
# "this"/"these" also bring in a new thing ("I read this awesome book about castles", "I got
# this trophy"); on these nouns they point at what is shown or at the moment ("this pic").
_OF_THE_MOMENT = frozenset(
    """photo photos pic pics picture pictures post message video videos snap shot shots
    moment moments time times day days week weekend year place spot spots piece pieces pose
    mindset feeling attitude one ones""".split())
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)?")
# Verbs of having or taking part, whose object's "in" phrase is where it happened.
TAKING_PART = frozenset(
    """have take attend give book hold host win lose play teach run compete perform""".split())
# "in" objects that are no place or event: spans and parts of one's life.
NOT_PLACES = frozenset(
    """past present future meantime meanwhile life general particular case end process mind
    fact world work works""".split())
# Heads that only count what they hold ("lots of books"): the object is what is counted.
QUANTITIES = frozenset(
    """lot lots plenty bunch couple number load loads ton tons handful dozen dozens
    few several""".split())


def _pointed(obj: Any) -> bool:
    """A noun pointed at ("that car", "this pic", "this moment"): which one is said elsewhere
    or shown; "this"/"these" on another noun bring in a new thing ("I read this book")."""
    for c in obj.children:
        word = _fold(c.text)
        if c.dep_ == "det" and word in _DEMONSTRATIVES:
            return word in ("that", "those") or _fold(obj.lemma_ or obj.text) in _OF_THE_MOMENT
    return False


def _destination(verb: Any, lemma: str) -> Any | None:
    """Where one took someone or something: "We took them to the dog park" -> park, said as
    one more statement beside what was taken ("took the kids to the museum"); not a date
    ("from the 20th to the 27th")."""
    if lemma != "take":
        return None
    for child in verb.children:
        if child.dep_ == "prep" and _fold(child.text) == "to":
            for obj in child.children:
                if obj.dep_ == "pobj" and obj.pos_ in ("NOUN", "PROPN") and not (
                        vague(obj) or dated(obj) or _pointed(obj)):
                    return _named(obj)
    return None


def dated(tok: Any) -> bool:
    """`tok` lies in a date or time expression ("on March 1st", "in June") or is a number or
    an ordinal ("to the 27th", which the small model's entities miss)."""
    if _ORDINAL.fullmatch(tok.text.casefold()) or tok.like_num:
        return True
    return any(e.start <= tok.i < e.end and e.label_ in ("DATE", "TIME") for e in tok.doc.ents)


def vague(obj: Any) -> bool:
    """A vague noun (`entities.STOP_NOUNS`) or an abstract one (`parsed_entities.ABSTRACT`)
    alone; a vague head named by a noun before it is a thing ("family time", "game night")."""
    if obj.pos_ != "NOUN":
        return False
    head = _fold(obj.lemma_ or obj.text)
    if head in ABSTRACT:
        return True
    return head in STOP_NOUNS and not any(
        c.dep_ == "compound" and c.pos_ in ("NOUN", "PROPN") for c in obj.children)


def _counted(obj: Any) -> Any:
    """What a quantity holds: "lots of books", "plenty of photos" -> the books, the photos."""
    if _fold(obj.lemma_ or obj.text) not in QUANTITIES and _fold(obj.text) not in QUANTITIES:
        return obj
    for prep in obj.children:
        if prep.dep_ == "prep" and _fold(prep.text) == "of":
            for inner in prep.children:
                if inner.dep_ == "pobj" and inner.pos_ in ("NOUN", "PROPN"):
                    return inner
    return obj


def _named(obj: Any) -> Any:
    """The name a noun is said to be: "this amazing woman, Jean" -> Jean."""
    names = [c for c in obj.children if c.dep_ == "appos" and c.pos_ == "PROPN"]
    return names[0] if obj.pos_ == "NOUN" and names else obj


def _phrase(doc: Any, head: Any) -> str:
    """The object's words: its noun chunk (or named entity), determiners kept for keying;
    a partitive head keeps what it is made of ("a group of globetrotters")."""
    for ent in doc.ents:
        if ent.start <= head.i < ent.end:
            return str(ent.text)
    words = str(head.text)
    for chunk in doc.noun_chunks:
        if chunk.root.i == head.i:
            words = str(chunk.text)
    if _fold(head.lemma_ or head.text) in PARTITIVE:
        for prep in head.children:
            if prep.dep_ == "prep" and _fold(prep.text) == "of":
                for obj in prep.children:
                    if obj.dep_ == "pobj" and obj.pos_ in ("NOUN", "PROPN"):
                        inner = next((str(c.text) for c in doc.noun_chunks
                                      if c.root.i == obj.i), str(obj.text))
                        words = f"{words} of {inner}"
    return words


def unpointed(value: str) -> str:
    """A value without the demonstrative that brought it in, nor the praise after it: "this
    awesome book about castles" -> "book about castles"."""
    words = value.split()
    if len(words) < 2 or words[0] not in _DEMONSTRATIVES:
        return value
    words = words[1:]
    while len(words) > 1 and words[0] in _EVALUATIVE:
        words = words[1:]
    return " ".join(words)


def _setting(tok: Any, lemma: str) -> tuple[str, Any] | None:
    """Where or at what an object was had or done: its own "at" phrase ("a great time at the
    fair"), or its "in" phrase after a verb of having or taking part (`TAKING_PART`: "had a
    letdown in a video game tourney", "gave a talk in class"; "noticed a trend in the data"
    is none); a noun or a name that is not vague, not a pronoun, not pointed at, not a date or
    time ("a trip in June") and not a span of one's life (`NOT_PLACES`: "in the past")."""
    for prep in tok.children:
        word = _fold(prep.text)
        if prep.dep_ != "prep" or not (word == "at" or (word == "in" and lemma in TAKING_PART)):
            continue
        for place in prep.children:
            if place.dep_ != "pobj" or place.pos_ not in ("NOUN", "PROPN") or vague(place):
                continue
            if dated(place) or _pointed(place) or _fold(place.lemma_) in NOT_PLACES:
                continue
            return word, _named(place)
    return None
