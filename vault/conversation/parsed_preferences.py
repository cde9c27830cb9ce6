"""What the speaker values or counts among favourites, from a turn's spaCy parse (`nlp` extra).

The pattern table (`statements`) takes "I like X" and "my favourite T is X"; two more
general English shapes state a lasting preference, each one statement of kind "preference",
first person (c_obs 0.7), in a part of a sentence that does not ask (`parsed_statements.asked`):

- "one of my favo(u)rites is X" -> ("opinion:X", "likes"), X the name given to it when there is
  one ("a track called Savana" -> savana), else its noun phrase; "X is one of my favo(u)rites"
  or "one of my favo(u)rite Ts" the same, X its subject (a noun or a name, as below);
- what matters to the speaker: "X is (so) important / dear / special to me", "X means a lot /
  the world / so much / everything to me", "X is (a big) part of my life" -> ("values", X); X
  the subject, a noun or a name (not a pronoun, a vague or abstract noun, one pointed at, or
  the addressee's: "your friendship means a lot to me" is thanks).

A negation or a hedge on the verb ("X isn't important to me", "X would mean a lot to me")
refuses the statement. Same parse and speaker -> same statements, in text order.
"""

from __future__ import annotations

from typing import Any

from .entities import _fold, normalise
from .parsed_attributes import usable
from .parsed_objects import _phrase
from .parsed_statements import _HEDGE, stated
from .statements import MAX_OBJECT_WORDS, Statement

FAVOURITES = frozenset(
    {"favorite", "favourite", "favorites", "favourites", "fave", "faves", "fav", "favs"})
# Adjectives that say a thing matters to the one it is "to": "important to me".
MATTERS = frozenset({"important", "dear", "special", "precious", "meaningful", "valuable"})
# Objects of "mean": "means a lot to me", "means the world to me".
MEANS = frozenset({"lot", "world", "much", "everything", "so much"})
_NEG = frozenset({"not", "n't", "never", "no"})


def _refused(tok: Any) -> bool:
    """A negation or a hedge on `tok` or a word above it."""
    while True:
        for child in tok.children:
            if child.dep_ in ("aux", "mark", "advmod", "neg") and _fold(child.text) in (
                    _HEDGE | _NEG):
                return True
        if tok.dep_ == "ROOT" or tok.head.i == tok.i:
            return False
        tok = tok.head


def _to_me(tok: Any) -> bool:
    return any(c.dep_ == "prep" and _fold(c.text) == "to" and any(
        g.dep_ == "pobj" and _fold(g.text) in ("me", "us") for g in c.children)
        for c in tok.children)


def _subject(tok: Any) -> Any | None:
    subjects = [c for c in tok.children if c.dep_ == "nsubj"]
    return subjects[0] if subjects else None


def _valued(tok: Any) -> Any | None:
    """The thing a predicate says matters to the speaker (module docstring), or None."""
    lemma = _fold(tok.lemma_)
    if tok.pos_ == "ADJ" and lemma in MATTERS and _to_me(tok):
        if tok.dep_ == "acomp":
            return _subject(tok.head)
        if tok.dep_ == "amod" and any(c.dep_ == "case" and c.text in ("'s", "’s")
                                      for c in tok.head.children):
            return tok.head  # "Family's so important to me" parsed as a possessive
        return None
    if lemma == "mean" and _to_me(tok) and any(
            c.dep_ == "dobj" and _fold(c.text) in MEANS for c in tok.children):
        return _subject(tok)
    if lemma == "be":
        for attr in (c for c in tok.children if c.dep_ == "attr"):
            if _fold(attr.lemma_) == "part" and any(
                    p.dep_ == "prep" and _fold(p.text) == "of" and any(
                        g.dep_ == "pobj" and _fold(g.text) == "life" and any(
                            _fold(o.text) in ("my", "our") for o in g.children)
                        for g in p.children) for p in attr.children):
                return _subject(tok)
    return None


def _one_of_mine(tok: Any) -> bool:
    """`tok` is the "one" of "one of my favo(u)rites" or "one of my favorite shows"."""
    return _fold(tok.text) == "one" and any(
        p.dep_ == "prep" and _fold(p.text) == "of" and any(
            (_fold(g.text) in FAVOURITES or any(
                a.dep_ == "amod" and _fold(a.text) in FAVOURITES for a in g.children))
            and any(o.dep_ == "poss" and _fold(o.text) in ("my", "our") for o in g.children)
            for g in p.children if g.dep_ == "pobj") for p in tok.children)


def _favourite(tok: Any) -> Any | None:
    """The X of "one of my favourites is X" (a "be" whose subject is that "one") or of "X is
    one of my favourites" (whose attribute is)."""
    if _fold(tok.lemma_) != "be":
        return None
    subject = _subject(tok)
    if subject is not None and any(
            c.dep_ == "attr" and _one_of_mine(c) for c in tok.children):
        return subject  # "The Hobbit is one of my favorites"; a pronoun is refused later
    if subject is None or _fold(subject.text) != "one" or not any(
            p.dep_ == "prep" and _fold(p.text) == "of" and any(
                _fold(g.text) in FAVOURITES for g in p.children) for p in subject.children):
        return None
    attrs = [c for c in tok.children if c.dep_ == "attr"]
    if not attrs:
        return None
    for acl in (c for c in attrs[0].children if c.dep_ == "acl"):
        if _fold(acl.lemma_) in ("call", "name"):
            names = [g for g in acl.children if g.dep_ in ("oprd", "attr", "dobj")]
            if names and names[0].pos_ in ("PROPN", "NOUN"):
                return names[0]
    return attrs[0]


def extract_preferences(doc: Any, speaker: str, addressee: str = "") -> tuple[
        Statement, ...]:
    """The favourites and the things valued of one parsed turn said by `speaker`."""
    found: list[Statement] = []
    for clause, tok in stated(doc):
        fav, valued = _favourite(tok), _valued(tok)
        obj = fav if fav is not None else valued
        if obj is None or not usable(obj) or _refused(tok) or any(
                _fold(c.text) == "your" for c in obj.children):
            continue  # "your friendship means a lot to me": thanks, not a value
        value = normalise(_phrase(doc, obj), speaker=speaker, addressee=addressee)
        if not value or len(value.split()) > MAX_OBJECT_WORDS:
            continue
        st = (Statement(_fold(speaker), f"opinion:{value}", "likes", "preference", None,
                        True, clause) if fav is not None else
              Statement(_fold(speaker), "values", value, "preference", None, True, clause))
        if st not in found:
            found.append(st)
    return tuple(found)
