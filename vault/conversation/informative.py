"""Which statements of a turn say something durable about a person (issue 29 item 3).

A statement can be true and still say nothing worth remembering: judged "trivial" on the
labelled LoCoMo sets (bench/data/fact_*_verdicts.tsv), most of them fall into a few general
kinds, each dropped here by `informative`, read off the statement (its predicate, key, value
and clause, so the pattern table's statements are read the same way; the turn's parse only
for the exception below):

- a belonging that is no thing one has: the head of X in ("has"/"uses", X) names a quality,
  an outcome, an undertaking, a feeling, a talk or a measure (`HOLLOW`: "your empathy", "my
  achievement", "your search", "our last chat", "our community", "my influence"), a generic
  thing (`GENERIC`: "your project") or ends in "-ness" ("your willingness"; not the things
  of `NESS_THINGS`: "your business", "my illness"); a body part
  (`BODY`: "your back", said in instructions); an event (`EVENTS`: "your party", "your
  exams") said of the addressee or as "our" (shared with the addressee: "our hike"), while
  the speaker's own ("my dinner party") is kept;
- an act or a plan whose object's head is `HOLLOW` ("had a letdown", "got some great
  feedback", "made a decision", "having some issues", "show warmth") or, after a light verb
  (`LIGHT`: have, get, make, do, give, put, experience), `GENERIC` ("put in work", "give
  them activities", "got some cool projects"; "completed 4 projects" is kept); "news" is
  singularised to "new" by the lemmatiser ("got great news" -> did:get great new): also
  `HOLLOW`;
- an opinion whose whole topic is `HOLLOW` ("I love their work");
- a commitment that answers the chat rather than plans a life (`_answers_chat`): it takes up
  something just said or shown (a verb of trying or checking, `_TAKING_UP`, on "it", "them",
  "those", "these": "I will check them out", "try out these tips"; "I will drop them off at
  the cobbler" is kept), its clause says "you"/"your" ("take your advice", "see you around",
  "get the video to you"), or it is a light verb with a generic object ("I will do some
  research").

A hollow or generic head named by a noun before it is a thing, as in `parsed_objects.vague`
("completed a charity fitness challenge", "my blood sugar levels", "my next art project"),
read in the turn's parse where there is one.

The word lists name general English kinds (qualities, outcomes, undertakings, measures, body
parts, events); their words are those of the statements judged trivial on the labelled sets
and more of the same kinds. How many trivial and correct statements each kind drops on every
labelled set, and out of sample, is in docs/measurements/session15/NOTES-F6.md.
"""

from __future__ import annotations

import re
from typing import Any

from .entities import _fold
from .statements import Statement

# Heads that name a quality, an outcome, an undertaking, a feeling, a talk, a span of the
# world or a measure: no thing one has or acts on for good.
HOLLOW = frozenset(
    """empathy sympathy compassion understanding willingness drive ambition belief value
    honesty bravery wisdom humor humour warmth vibe ethic integrity motivation inspiration
    perseverance persistence grit influence optimism enthusiasm dedication talent strength
    resilience courage patience kindness confidence mindset attitude outlook perspective
    spirit energy vision insight encouragement
    success victory achievement accomplishment failure letdown setback progress growth
    improvement struggle challenge hardship difficulty obstacle mistake breakthrough loss
    endeavor endeavour search quest mission venture attempt process journey task
    pursuit goal
    blast bonding feedback news new lease friendship mem memory issue information decision
    plunge excitement pride relief satisfaction gratitude joy happiness
    chat conversation discussion community society world addition list work
    situation life aspect
    level score distance amount rate percentage""".split())
# Things so generic that only the act around them could say something.
GENERIC = frozenset(
    """activity item work stuff thing resource ingredient money cost batch research
    project""".split())
# Events: had with someone, not owned ("your party", "our hike").
EVENTS = frozenset(
    """party hike exam test meeting event trip walk ride visit game picnic concert match
    race""".split())
BODY = frozenset("""back shoulder knee leg arm foot feet neck skin hair stomach""".split())
# Nouns in "-ness" that are things one has, not qualities ("my business", "her illness").
NESS_THINGS = frozenset("business illness witness harness wilderness".split())
LIGHT = frozenset("have get make do give put experience".split())
# Taking up what was just said or shown ("I will check them out", "try these tips").
_TAKING_UP = frozenset(
    "check try explore look consider keep take give read watch follow use apply".split())
_POINTED = frozenset("it them those these".split())
_TO_YOU = re.compile(r"\b(?:you|your)\b")


def informative(st: Statement, doc: Any = None) -> bool:
    """False for a statement of one of the trivial kinds of the module docstring; with the
    turn's parse `doc`, a hollow or generic head named by a noun before it is a thing ("a
    food drive", "my blood sugar levels", "my art project": `_named_by_noun`)."""
    pred, _, topic = st.key.partition(":")
    words = st.value.split()
    if not words:
        return False
    head = words[-1]
    named = len(words) > 1 and _named_by_noun(words[-2], head, doc)
    if pred in ("has", "uses"):
        return not (((head in HOLLOW or head in GENERIC) and not named)
                    or (head.endswith("ness") and head not in NESS_THINGS) or head in BODY
                    or (head in EVENTS and _shared(st)))
    if pred in ("did", "plans"):
        verb = topic.split("_", 1)[0]
        return named or not (head in HOLLOW or (verb in LIGHT and head in GENERIC))
    if pred == "opinion":
        return topic not in HOLLOW
    if pred == "commitment":
        return not _answers_chat(words, st.said)
    return True


def _shared(st: Statement) -> bool:
    """An event that is the addressee's ("your party") or shared with them ("our hike")."""
    return not st.first_person or f"our {st.value}" in st.said


def _answers_chat(words: list[str], said: str) -> bool:
    """A commitment that answers the chat (module docstring); `words` are its act's words."""
    if _TO_YOU.search(said) or (words[0] in _TAKING_UP and any(w in _POINTED for w in words)):
        return True
    return words[0] in LIGHT and words[-1] in GENERIC


def _named_by_noun(modifier: str, head: str, doc: Any) -> bool:
    """In the parse `doc`, `modifier` is a noun or name compounded on a noun `head` (its
    word or its lemma): "food drive", "fitness challenge"; False without a parse."""
    if doc is None:
        return False
    return any(
        tok.dep_ == "compound" and tok.pos_ in ("NOUN", "PROPN") and _fold(tok.text) == modifier
        and head in (_fold(tok.head.text), _fold(tok.head.lemma_)) for tok in doc)


def informative_only(found: tuple[Statement, ...], doc: Any = None) -> tuple[Statement, ...]:
    """`found` without the statements that are not `informative`, in the same order."""
    return tuple(st for st in found if informative(st, doc))
