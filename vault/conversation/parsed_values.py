"""What the speaker values, said with the speaker as the object or in a relative clause, from a
turn's spaCy parse (with the `nlp` extra).

`parsed_preferences` takes "X is important to me" and "X means a lot to me"; two more general
English shapes say that a thing matters to the speaker, each one statement of kind
"preference", first person (c_obs 0.7), in a part of a sentence that does not ask
(`parsed_statements.asked`):

- the thing does the speaker good: a clause whose object (or indirect object, or its
  complement's subject: "helps me stay motivated") is "me"/"us" and whose verb is one of a
  good effect on a person (`UPLIFTS`: "Painting inspires me", "Yoga calms me") or a verb of
  keeping, bringing, giving or making whose complement says the good done (`GOOD`:
  "Creativity and family keep me at peace", "Music brings me joy", "Running makes me
  happy"; "The rain makes me sad" is none), or that struck a chord ("Their support spoke to
  me", "resonates with me": `RESONATES`) -> ("values", X) for X the subject and each noun
  conjoined to it (a relative pronoun: the noun its clause hangs on, not a ", which" that
  stands for the whole clause before it);
- the thing is one the speaker enjoys: "X is something (/ one thing / what) I enjoy" (a
  relative clause whose verb is one of liking, `LIKING`, with a first-person subject, on the
  attribute of "be") -> ("opinion:X", "likes"), X the subject; a gerund subject is said with
  its own object ("Being a positive role model for them is something I enjoy" -> "being a
  positive role model").

The subject is a noun or a name (not a pronoun, a vague or abstract noun, one pointed at, or
the addressee's: "your words keep me going" is thanks) or a gerund with its object; a
negation or a hedge on the verb refuses it (`parsed_preferences._refused`). Same parse and
speaker -> same statements, in text order.
"""

from __future__ import annotations

from typing import Any

from .entities import _fold, normalise
from .parsed_attributes import usable
from .parsed_objects import _phrase
from .parsed_preferences import _refused
from .parsed_statements import _NO_ACT, stated
from .statements import MAX_OBJECT_WORDS, Statement

# Verbs whose object is done good by their subject, whatever follows (general English).
UPLIFTS = frozenset(
    """inspire motivate calm relax soothe comfort ground energize energise uplift fulfil
    fulfill delight heal recharge refresh rejuvenate centre center""".split())
# Verbs whose "to me" / "with me" says a thing struck a chord: "it spoke to me".
RESONATES = frozenset({"speak", "resonate", "appeal"})
# Verbs that do good only with a complement that says it ("keeps me sane", "brings me joy").
_WITH_GOOD = frozenset({"keep", "bring", "give", "make", "fill", "help"})
# The good such a verb's complement names (lemmas).
GOOD = frozenset(
    """peace joy happiness comfort calm calmness balance sanity purpose hope strength
    motivation inspiration smile alive grounded sane going motivated inspired focused
    balanced content relaxed peaceful grateful proud whole happy happier free positive
    fulfilled fulfil fulfill relax unwind cope heal grow thrive peace""".split())
# Verbs of liking in a relative clause on "something": "something I enjoy".
LIKING = frozenset({"enjoy", "love", "like", "adore", "cherish", "treasure", "value"})
# Abstract nouns (`parsed_entities.ABSTRACT`, refused as entities) that name a good one holds.
HELD = frozenset(
    "creativity positivity passion joy fun love acceptance support".split())
_SOMETHING = frozenset({"something", "thing", "what", "one"})
_ME = frozenset({"me", "us"})


def _subjects(verb: Any) -> list[Any]:
    """The subject of `verb` and the nouns conjoined to it ("creativity and family"); a
    relative pronoun stands for the noun its clause hangs on ("a quote that helps me")."""
    found: list[Any] = []
    for child in verb.children:
        if child.dep_ not in ("nsubj", "csubj"):
            continue
        if child.tag_ in ("WDT", "WP") and verb.dep_ == "relcl":
            if _fold(child.text) == "which" and child.i > 0 and child.doc[child.i - 1].text == ",":
                continue  # "I bring snacks to work, which helps me": the whole clause
            child = verb.head
        found.append(child)
        if child.tag_ != "VBG":  # "seeing progress and results": one gerund
            found.extend(c for c in child.children if c.dep_ == "conj")
    return found


def _on_me(verb: Any) -> bool:
    """The speaker is what `verb` acts on: its object or indirect object ("keeps me", "brings
    me joy"), or the subject of its complement ("helps me stay motivated")."""
    for c in verb.children:
        if c.dep_ in ("dobj", "dative") and _fold(c.text) in _ME:
            return True
        if c.dep_ in ("ccomp", "xcomp") and any(
                g.dep_ == "nsubj" and _fold(g.text) in _ME for g in c.children):
            return True
    return False


def _does_good(verb: Any) -> bool:
    """`verb` does the speaker good (module docstring)."""
    if verb.pos_ != "VERB":
        return False
    lemma = _fold(verb.lemma_)
    if lemma in RESONATES and any(
            c.dep_ == "prep" and _fold(c.text) in ("to", "with") and any(
                g.dep_ == "pobj" and _fold(g.text) in _ME for g in c.children)
            for c in verb.children):
        return True  # "their support really spoke to me"
    if not _on_me(verb):
        return False
    if lemma in UPLIFTS:
        return True
    return lemma in _WITH_GOOD and any(
        (_fold(t.lemma_) in GOOD or _fold(t.text) in GOOD) for t in verb.subtree
        if t.i > verb.i and t.pos_ in ("NOUN", "ADJ", "VERB", "ADV"))


def _enjoyed(be: Any) -> bool:
    """`be` says its subject is something the speaker enjoys: "X is something I enjoy"."""
    if _fold(be.lemma_) != "be":
        return False
    for attr in (c for c in be.children if c.dep_ == "attr"):
        if _fold(attr.text) not in _SOMETHING:
            continue
        for rel in (c for c in attr.children if c.dep_ == "relcl"):
            if _fold(rel.lemma_) in LIKING and any(
                    c.dep_ == "nsubj" and _fold(c.text) in ("i", "we") for c in rel.children):
                return True
    return False


def _valuable(noun: Any) -> bool:
    """`noun` can be valued: `parsed_attributes.usable`, or an abstract noun that names a good
    one holds (`HELD`: "creativity", "faith")."""
    return usable(noun) or (noun.pos_ == "NOUN" and _fold(noun.lemma_) in HELD and not any(
        c.dep_ == "det" for c in noun.children))


def _words(doc: Any, subject: Any, speaker: str, addressee: str) -> str:
    """The subject's words: a noun's phrase, or a gerund with its attribute or object, or
    with its first prepositional phrase ("hiking with my dog")."""
    if any(_fold(c.text) == "your" for c in subject.children):
        return ""
    if subject.tag_ == "VBG":
        objects = [c for c in subject.children if c.dep_ in ("attr", "dobj")]
        preps = [c for c in subject.children if c.dep_ == "prep"]
        if objects:
            obj, lead = objects[0], _fold(subject.text)
        elif preps and [g for g in preps[0].children if g.dep_ == "pobj"]:
            obj = next(g for g in preps[0].children if g.dep_ == "pobj")
            lead = f"{_fold(subject.text)} {_fold(preps[0].text)}"
        else:
            bare = subject.pos_ == "VERB" and _fold(subject.lemma_) not in _NO_ACT
            return _fold(subject.text) if bare else ""
        if not usable(obj):
            return ""
        inner = normalise(_phrase(doc, obj), speaker=speaker, addressee=addressee)
        return f"{lead} {inner}" if inner else ""
    if not _valuable(subject):
        return ""
    return normalise(_phrase(doc, subject), speaker=speaker, addressee=addressee)


def extract_values(doc: Any, speaker: str, addressee: str = "") -> tuple[Statement, ...]:
    """What `speaker` values (module docstring), from one parsed turn."""
    found: list[Statement] = []
    for clause, tok in stated(doc):
        good, enjoyed = _does_good(tok), _enjoyed(tok)
        if not (good or enjoyed) or _refused(tok):
            continue
        for subject in _subjects(tok):
            value = _words(doc, subject, speaker, addressee)
            if not value or len(value.split()) > MAX_OBJECT_WORDS:
                continue
            st = (Statement(_fold(speaker), "values", value, "preference", None, True, clause)
                  if good else Statement(_fold(speaker), f"opinion:{value}", "likes",
                                         "preference", None, True, clause))
            if st not in found:
                found.append(st)
    return tuple(found)
