"""What the speaker plans, hopes or is working towards, from a turn's spaCy parse (`nlp` extra).

`parsed_statements` takes acts done; an intention is no act there ("want to", "going to").
Plans are still lasting facts about a speaker, so one more shape, in a sentence that is not a
question: a verb of intention whose subject is the speaker (as in `parsed_statements`,
"Planning to ..." and "Can't wait to ..." with the "I" dropped included), with an act as its
complement that has an object, gives one statement (speaker, "plans:<act lemma>[_<prep>]",
object) of kind "commitment" (c_obs 0.5, `facts.observation_confidence`):

- the verb of intention (`INTENT`): plan, hope, intend, aim, decide, consider, "think
  of/about", "plan on", "work on", "look forward to", "can't wait to" (not "try": "I'm trying
  to get the build to pass" is a task under way, the goal of an episode (episodes.py), not a
  lasting plan; as a plan it crowded the task's outcome out of a prompt's memory budget);
  the act is its "to" complement ("hoping to open a bakery") or the gerund after its
  preposition ("considering getting a dog", "thinking about adopting a cat");
- "my plan / goal / dream / aim is to <act>" states the same ("My goal is to run a marathon");
- a plan made now with a noun for its object is a thing planned, said with where it goes
  ("I'm planning a trip to Japan" -> plans:have trip to japan), and so is what the speaker
  proposes with "let's" ("Let's plan a painting session" -> plans:have painting session,
  "let's bake a pie" -> plans:bake pie; not "let's not ...");
- the act and its object are refused as `parsed_statements` refuses them: verbs of saying,
  thinking and feeling (`_NO_ACT`, with get/make/take/do/find... only on a concrete noun),
  pronouns, vague or abstract nouns, objects pointed at, too long; the object is keyed the same
  way ("my family" -> "<speaker>'s family");
- refused: a negated or hedged verb of intention ("I'm not planning to", "If I decide to",
  "I might try to"); an act done to the addressee ("can't wait to fill you in on it"); "going
  to" (the pattern table's commitment says it).

Same parse and speaker -> same statements, in text order.
"""

from __future__ import annotations

from typing import Any

from .entities import _fold, normalise
from .parsed_entities import _QUANTIFIERS
from .parsed_objects import _DEMONSTRATIVES, _phrase, dated, vague
from .parsed_statements import (
    _HEDGE,
    _LEMMA_FIXES,
    _NO_ACT,
    _WITH_OBJECT,
    _first_person,
    _object,
    stated,
)
from .statements import MAX_OBJECT_WORDS, Statement

# Verbs whose "to" complement is an act intended (general English).
INTENT = frozenset({"plan", "hope", "intend", "aim", "decide", "wait", "consider",
                    "think", "work", "look"})
# Of those, the ones that take the act as a gerund after a preposition: "think about doing".
_PREP_INTENT = {"think": ("about", "of"), "plan": ("on",), "work": ("on", "towards", "toward"),
                "look": ("to",), "consider": (), "aim": ("at", "for")}
# Nouns that, owned by the speaker and said to be an act, are a plan: "my goal is to ...".
PLAN_NOUNS = frozenset({"plan", "goal", "dream", "aim", "hope", "intention", "mission"})
# Chat acts: "hoping to share a pic" says nothing about the speaker's life.
_CHAT_ACTS = frozenset({"share", "send", "post", "hear", "chat", "talk", "catch", "meet_up"})


def _negated_or_hedged(verb: Any, *, allow_cant: bool = False) -> bool:
    """A negation or a hedge on `verb` or a verb above it ("can't wait" allowed on request)."""
    tok = verb
    while True:
        for child in tok.children:
            word = _fold(child.text)
            if child.dep_ not in ("aux", "mark", "advmod", "neg"):
                continue
            if allow_cant and tok.i == verb.i and word in ("ca", "can", "not", "n't", "cannot"):
                continue
            if word in _HEDGE | {"not", "n't", "never"}:
                return True
        if tok.dep_ == "ROOT" or tok.head.i == tok.i:
            return False
        tok = tok.head


def _cant_wait(verb: Any) -> bool:
    """"(I) can't wait to ...": the speaker's, with or without the "I"."""
    if _fold(verb.lemma_) != "wait":
        return False
    kids = {_fold(c.text) for c in verb.children if c.dep_ in ("aux", "neg")}
    if not ({"ca", "can", "cannot"} & kids and ({"n't", "not"} & kids or "cannot" in kids)):
        return False
    subjects = [c for c in verb.children if c.dep_ == "nsubj"]
    return not subjects or _fold(subjects[0].text) in ("i", "we")


def _acts(verb: Any, lemma: str) -> list[Any]:
    """The acts intended by `verb`: its "to" complement or a gerund after its preposition."""
    found = []
    for child in verb.children:
        if child.dep_ == "xcomp" and child.pos_ == "VERB" and (
                child.tag_ == "VB" or (child.tag_ == "VBG" and lemma == "consider")):
            found.append(child)
        if child.dep_ == "prep" and _fold(child.text) in _PREP_INTENT.get(lemma, ()):
            found.extend(g for g in child.children
                         if g.dep_ == "pcomp" and g.tag_ == "VBG" and g.pos_ == "VERB")
    return found


def _ongoing(verb: Any, lemma: str) -> bool:
    """Intentions said as now or lasting; "work on", "look forward to", "think about" only as
    going on."""
    if lemma in ("work", "look", "think"):
        return verb.tag_ in ("VBG", "VBP", "VBZ")
    return True


def _statement(doc: Any, act: Any, speaker: str, addressee: str, clause: str) -> Statement | None:
    """The plan of one intended act, refused as `parsed_statements` refuses an act."""
    lemma = _fold(act.lemma_)
    planned = lemma == "plan"
    if planned:
        lemma = "have"  # "planning a trip", "let's plan a picnic" -> plans:have trip
    if (lemma in _NO_ACT and lemma not in _WITH_OBJECT) or lemma in _CHAT_ACTS:
        return None
    if any(c.dep_ == "dobj" and _fold(c.text) == "you" for c in act.children):
        return None  # "can't wait to fill you in on the details": a promise to the addressee
    got = _object(act)
    if got is None:
        return None
    prep, obj = got
    if vague(obj):  # "a game night" is a thing, "the time" is not
        return None
    if lemma in _WITH_OBJECT and (obj.pos_ != "NOUN" or prep):
        return None
    if any(_fold(c.text) in _DEMONSTRATIVES for c in obj.children if c.dep_ == "det"):
        return None
    words = _phrase(doc, obj).split()
    while len(words) > 1 and _fold(words[0]) in _QUANTIFIERS:
        words = words[1:]  # "do more yoga" plans yoga
    value = normalise(" ".join(words), speaker=speaker, addressee=addressee)
    bound = _bound_for(doc, obj) if planned and value else ""
    bound = normalise(bound, speaker=speaker, addressee=addressee) if bound else ""
    if bound and len(f"{value} to {bound}".split()) <= MAX_OBJECT_WORDS:
        value = f"{value} to {bound}"
    if not value or len(value.split()) > MAX_OBJECT_WORDS:
        return None
    particle = [_fold(c.text) for c in act.children if c.dep_ == "prt"]
    key = "plans:" + "_".join([lemma, *particle, *([prep] if prep else [])])
    return Statement(_fold(speaker), key, value, "commitment", None, True, clause)


def _bound_for(doc: Any, obj: Any) -> str:
    """Where a thing planned goes: "a trip to Japan" -> "Japan" (not a date)."""
    for prep in obj.children:
        if prep.dep_ == "prep" and _fold(prep.text) == "to":
            for place in prep.children:
                if place.dep_ == "pobj" and place.pos_ in ("NOUN", "PROPN") and not (
                        vague(place) or dated(place)):
                    return _phrase(doc, place)
    return ""


def _lets_us(verb: Any) -> bool:
    """`verb` is the "let" of "let's" / "let us" with no subject of its own: what follows is
    the speaker's proposal."""
    doc = verb.doc
    if _fold(verb.lemma_) != "let" or any(  # "art lets us get our emotions out": no proposal
            c.dep_ == "nsubj" and c.i != verb.i + 1 for c in verb.children):
        return False
    return verb.i + 1 < len(doc) and _fold(doc[verb.i + 1].text) in ("'s", "’s", "us")


def _plan_noun(tok: Any) -> list[Any]:
    """"My goal is to run a marathon": the act of a "be" whose subject is an owned plan."""
    if _fold(tok.lemma_) != "be":
        return []
    subjects = [c for c in tok.children if c.dep_ == "nsubj"]
    if not subjects or _fold(subjects[0].lemma_) not in PLAN_NOUNS or not any(
            c.dep_ == "poss" and _fold(c.text) in ("my", "our") for c in subjects[0].children):
        return []
    return [c for c in tok.children if c.dep_ == "xcomp" and c.tag_ == "VB"]


def extract_plans(doc: Any, speaker: str, addressee: str = "") -> tuple[Statement, ...]:
    """The ("plans:<act>", object) statements of one parsed turn said by `speaker`."""
    found: list[Statement] = []
    for clause, tok in stated(doc):
        acts = _plan_noun(tok)
        if acts:
            if _negated_or_hedged(tok):
                continue
        elif tok.pos_ == "VERB" and _lets_us(tok):
            acts = [c for c in tok.children if c.dep_ in ("ccomp", "xcomp") and c.tag_ == "VB"
                    and not _negated_or_hedged(c)]  # "let's not go"
        elif tok.pos_ == "VERB":
            lemma = _LEMMA_FIXES.get(_fold(tok.text), _fold(tok.lemma_))
            if lemma not in INTENT or not _ongoing(tok, lemma):
                continue
            cant = _cant_wait(tok)
            if lemma == "wait" and not cant:
                continue
            if not cant and not _first_person(tok):
                continue
            if _negated_or_hedged(tok, allow_cant=cant):
                continue
            acts = _acts(tok, lemma)
            if lemma == "plan" and not acts and tok.tag_ in ("VBG", "VBP", "VBZ"):
                acts = [tok]  # "I'm planning a trip to Japan": the plan is the thing
        for act in acts:
            st = _statement(doc, act, speaker, addressee, clause)
            if st is not None and st not in found:
                found.append(st)
    return tuple(found)
