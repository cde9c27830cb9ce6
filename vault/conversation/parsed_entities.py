"""Entities of one turn from its spaCy parse (used when `nlp.pipeline()` is installed).

Rows, in text order, deduplicated by key (first wins):

- "date" rows from `clocks` (as `entities.extract`), and numbers (same pattern);
- "name": a named entity of a kind that names a thing (PERSON, ORG, GPE, LOC, NORP, FAC,
  PRODUCT, EVENT, WORK_OF_ART, LANGUAGE, LAW), keyed casefolded without a leading "the" and
  a trailing "'s" ("speaker" when it is one of the conversation's speakers);
- "name" too: a noun chunk headed by a proper noun that no named entity covers, keyed by its
  proper nouns ("the Payments API" -> "payments api");
- "thing": a noun chunk whose head is a common noun, keyed by `entities.normalise` ("my vase"
  said by Bob -> "bob's vase"; determiners dropped; last word singular), after leading
  quantifiers ("some", "all", "a lot of") and adverbs are dropped; a chunk whose head is a
  vague noun (`entities.STOP_NOUNS`), or that lies inside a date expression or a named
  entity, is none. "Alice's vase" gives both "alice" (name) and "alice's vase" (thing).
  Also none: a partitive head alone ("a group of bowls": `PARTITIVE`, the bowls are their own
  chunk), an owned state of the self ("my heart": `SELF_STATES`), a one-word chunk that is
  part of a preposition ("in front of"). "our" on a plural is nobody's in particular ("our
  stories" -> "story"); "diet and exercise tips" gives "diet" and "exercise tip"; words
  tagged SCONJ ("that", "how") are dropped; "mom`s" is "mom's".

Same text, speaker, addressee and model -> same entities.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..notes.clocks import TimeRef
from .common_words import COMMON
from .entities import (
    _NUMBER,
    _TITLE_STOP,
    STOP_NOUNS,
    Entity,
    _fold,
    date_entities,
    dedupe,
    normalise,
)

NAME_LABELS = frozenset(
    "PERSON ORG GPE LOC NORP FAC PRODUCT EVENT WORK_OF_ART LANGUAGE LAW".split())
_QUANTIFIERS = frozenset(
    """some any all many much more most few several lots lot bunch couple each every such
    both other another no own""".split())
# Evaluative adjectives say how the speaker feels, not which thing it is ("great pic" is the
# pic); descriptive ones stay ("big screen", "domestic abuse").
_EVALUATIVE = frozenset(
    """great best better good nice cool awesome amazing fun helpful main top huge new
    different wonderful lovely beautiful fantastic incredible exciting perfect special whole
    real little favorite favourite true hard tough super crazy fave recent alright""".split())
# Abstract heads that name no thing when they stand alone ("the difference", "thanks");
# with a noun before them they can ("family support").
ABSTRACT = frozenset(
    """thanks thank congrats congratulation step love guidance acceptance fun people person
    place difference part sale support joy ton problem question chance mind progress air
    trouble example reminder memory idea thought feeling sense reason point matter fact
    luck care effort experience opportunity advice help kind lot deal way creativity
    positivity passion lesson takeaway tip version try gut heart dream future subject
    purpose congrat""".split())
# Owners that name nobody ("someone's car" is a car).
_NOBODY = frozenset({"someone", "somebody", "anyone", "anybody", "everyone", "everybody",
                     "no one", "nobody"})
_DROP_POS = frozenset({"DET", "ADV", "PRON", "PUNCT", "NUM", "PART", "CCONJ", "SCONJ", "INTJ",
                       "AUX"})
# Partitive heads: "a group of bowls", "a mix of emotions" are the bowls and the emotions,
# which are their own chunk; the head alone names nothing.
PARTITIVE = frozenset(
    """group mix bunch pair piece kind sort type lot couple number variety series handful
    bit surge world set range plenty load sense lots""".split())
# A state or part of the self is no thing one owns ("warmed my heart", "our lives",
# "your feelings", "one of my favorites").
SELF_STATES = frozenset(
    """life heart mind soul mood feeling emotion favorite favourite best""".split())
_APOSTROPHES = ("'s", "’s", "`s")


def _name_key(text: str) -> str:
    words = _fold(text).split()
    while words and (words[0] == "the" or words[0] in _TITLE_STOP):
        words = words[1:]
    if words and words[-1].endswith("'s"):
        words[-1] = words[-1][:-2]
    return " ".join(words).strip(".,!?;:\"'()[]")


def _joint(doc: Any, tok: Any, words: Sequence[Any], root: int) -> str:
    """What follows `tok` in a key: its own spacing before the next kept word, a hyphen when
    one joins them ("low-impact", spaCy splits it), else one space."""
    if tok.i >= root:
        return " "
    nxt = doc[tok.i + 1]
    if nxt in words:
        return str(tok.whitespace_)
    if (nxt.text == "-" and not tok.whitespace_ and not nxt.whitespace_
            and tok.i + 2 <= root and doc[tok.i + 2] in words):
        return "-"
    return " "


def extract_parsed(
    doc: Any,
    *,
    speaker: str,
    addressee: str = "",
    speakers: Sequence[str] = (),
    refs: Sequence[TimeRef] = (),
) -> tuple[Entity, ...]:
    """The entities of one parsed turn (module docstring)."""
    text = doc.text
    spoken = {_fold(s) for s in speakers}
    blocked: list[tuple[int, int]] = []
    for ref in refs:
        at = text.find(ref.expr)
        if at >= 0:
            blocked.append((at, at + len(ref.expr)))
    found: list[tuple[int, Entity]] = []
    names: list[tuple[int, int]] = []
    for ent in doc.ents:
        if ent.label_ not in NAME_LABELS:
            continue
        if any(a < ent.end_char and ent.start_char < b for a, b in blocked):
            continue
        key = _name_key(ent.text)
        if not key or not any(c.isalpha() for c in key):
            continue
        if len(ent) == 1 and ent[0].is_sent_start and (key in ABSTRACT or key in COMMON):
            continue  # "Lesson learned:" read as a person
        names.append((ent.start, ent.end))
        written = ent.text[:-2] if ent.text.endswith(("'s", "’s")) else ent.text
        found.append((ent.start_char,
                      Entity(key, written, "speaker" if key in spoken else "name")))
    for chunk in doc.noun_chunks:
        root = chunk.root
        if root.pos_ == "PROPN" and not any(s <= root.i < e for s, e in names):
            # A name the tagger saw but the recogniser did not label ("the Payments API").
            if len(chunk) == 1 and root.is_sent_start:
                continue  # "Lesson learned", "Pin the compiler": a capital, not a name
            words = [t.text for t in chunk if t.pos_ == "PROPN"]
            key = _name_key(" ".join(words))
            if key:
                found.append((chunk.start_char, Entity(
                    key, " ".join(words), "speaker" if key in spoken else "name")))
            continue
        if root.pos_ != "NOUN" or _fold(root.text) in STOP_NOUNS:
            continue
        if (len(chunk) == 1 and root.is_sent_start and root.i + 1 < len(doc)
                and doc[root.i + 1].pos_ == "DET"):
            continue  # "Pin the compiler": an imperative verb tagged as a noun
        if any(a < chunk.end_char and chunk.start_char < b for a, b in blocked):
            continue
        toks = [t for t in chunk if t.i <= root.i]
        # Possessive owner: "my X", "Alice's X" stay (normalise keys them by owner).
        owner = ""
        possessed = bool(toks) and toks[0].dep_ == "poss"
        if toks and toks[0].dep_ == "poss" and _fold(toks[0].text) not in _NOBODY:
            owner = toks[0].text
            if toks[0].i + 1 < len(doc) and doc[toks[0].i + 1].text in _APOSTROPHES:
                owner += "'s"
            elif _fold(owner) == "our" and root.tag_ == "NNS":
                owner = ""  # "our stories", "our passions": everyone's, nobody's in particular
        if any(s <= root.i < e for s, e in names):
            continue
        words = [t for t in toks if t.pos_ not in _DROP_POS and t.text not in _APOSTROPHES
                 and _fold(t.text) not in _QUANTIFIERS and t.dep_ != "poss"
                 and not (t.i != root.i and _fold(t.text) in _EVALUATIVE)
                 and any(c.isalpha() for c in t.text)]
        while words and words[0].pos_ in ("VERB", "ADP") and words[0].dep_ != "amod":
            words = words[1:]
        if not words or words[-1].i != root.i:
            continue
        # The lemma only undoes a plural: a word the model does not know keeps its spelling
        # ("Subaru" is no "subarunt").
        head = _fold(root.lemma_ if root.tag_ in ("NNS", "NNPS") and root.lemma_ else root.text)
        if len(words) == 1 and not owner and (head in ABSTRACT or head.endswith("ness")):
            continue
        if len(words) == 1 and head in PARTITIVE and any(
                c.dep_ == "prep" and _fold(c.text) == "of" for c in root.children):
            continue
        if possessed and len(words) == 1 and head in SELF_STATES:
            continue
        if (len(words) == 1 and root.dep_ == "pobj" and len(chunk) == 1 and any(
                c.dep_ == "prep" and _fold(c.text) == "of" for c in root.children)):
            continue  # "in front of", "on top of": part of a preposition
        # "diet and exercise tips": the first conjunct is a thing of its own, the phrase
        # starts at the second.
        for t in words[:-1]:
            second = [c for c in t.children if c.dep_ == "conj" and c in words]
            if second and t.pos_ == "NOUN":
                first = _fold(t.text)
                if first not in STOP_NOUNS and first not in ABSTRACT:
                    found.append((t.idx, Entity(normalise(first), t.text, "thing")))
                words = words[words.index(second[0]):]
                break
        # Common nouns are written lower case for the key, so "Pets" is "pet"; the head is
        # its lemma ("focuses" -> "focus"); words keep their spacing ("low-impact").
        phrase = "".join(
            (head if t.i == root.i else t.text if t.pos_ == "PROPN"
             else t.text.lower().replace("`", "'"))
            + _joint(doc, t, words, root.i) for t in words).strip()
        key = normalise(f"{owner} {phrase}".strip(), speaker=speaker, addressee=addressee)
        if key:
            found.append((chunk.start_char, Entity(key, chunk.text, "thing")))
    for m in _NUMBER.finditer(text):
        if not any(a < m.end() and m.start() < b for a, b in blocked):
            found.append((m.start(), Entity(m.group(0).replace(",", ""), m.group(0), "number")))
    found.sort(key=lambda p: (p[0], p[1].kind, p[1].key))
    return dedupe((*date_entities(refs), *(e for _, e in found)))
