"""Subject–predicate–object statements from a turn's spaCy parse (with the `nlp` extra).

They add to the pattern table of `statements` (which still runs first and wins a clause):
for each verb of a sentence that is not a question, whose subject is "I" (the speaker; "we"
and "my friends and I" too, still keyed by the speaker; a verb with no subject of its own takes
the subject of the verb it is conjoined to, "I cleaned and greased them", or of a verb of
starting or going on, "I started to paint", "we ended up going", or of a past "had to", "I
had to sell it", or whose purpose it is after a past act, "I saved up to buy a van"; a
sentence that drops its "I" and opens with a past or -ing verb, "Explored some trails", is the
speaker's, an imperative is not; "a photo of me singing at a wedding" is the speaker's) and
that has an object, one statement
(speaker, "did:<lemma>[_<particle>][_<preposition>]", object) of kind "fact":

- the object is the noun a relative clause hangs on when the verb has no object of its own
  ("a sunset we watched together" -> did:watch sunset), else the verb's direct object, else
  the object of its first preposition ("I went to a fair" -> did:go_to fair; not after a
  pronoun object unless it is a place, "at"/"in"/"to": "I marinated it with herbs" is none,
  "I bought it at the market" is did:buy_at market), else the
  object of a preposition of that object ("I'm in need of a reset" is none: "be" is no
  act); its head must be a noun or a name, not a
  pronoun, one pointed at ("that pic", "this mindset"), a vague noun (`entities.STOP_NOUNS`)
  or an abstract one alone (`parsed_entities.ABSTRACT`); it is keyed like an entity row
  ("my own movie" -> "<speaker>'s movie"), at most `statements.MAX_OBJECT_WORDS` words; a
  partitive head keeps what it holds ("joined a group of hikers" -> "group of hiker");
- where one took someone or something says more than what was taken ("We took them to the
  dog park" -> did:take_to dog park); an object's own "at"/"in" place or event gives one more
  statement keyed with the object ("I had a letdown in a tourney" -> did:have_letdown_in
  tourney; a vague object gives only that one: "had a great time at the fair" ->
  did:have_time_at fair; `parsed_objects`);
- refused: a negated verb, a verb with a modal or conditional ("would", "could", "if",
  "when", "whether"...) on it or on a verb above it (not across a spaced dash, colon or
  semicolon: "I had a letdown - I didn't do great" keeps the letdown), verbs of saying,
  thinking and feeling that report no act (`_NO_ACT`; get, make, take, have, find, give,
  show, do and try count with a concrete object), and those the pattern table owns (like,
  love, live, work, be ...: their statements come from there); an exclaimed object ("quite
  the adventure") and "have" of one's own thing ("we all have our paths");
- a verb of starting or giving up with a bare gerund and nothing else keeps the gerund as
  its object ("I started running" -> did:start running; "kept going" is none);
- `first_person` is True (c_obs 0.7, `facts.observation_confidence`);
- with one addressee, a past act whose own subject is "you" ("You captured the sunset so
  well", "you've built a shed") is the addressee's, refused and keyed the same way, with
  `first_person` False (c_obs 0.5); "you should try it", "you could paint" are none.

Same parse and speaker -> same statements, in text order.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .entities import _fold, normalise
from .parsed_objects import (
    _counted,
    _destination,
    _named,
    _phrase,
    _pointed,
    _setting,
    dated,
    unpointed,
    vague,
)
from .statements import _ROLE_STOP, MAX_OBJECT_WORDS, Statement

_SUBJECTS = frozenset({"i", "we"})
_NO_ACT = frozenset(
    """be have do say tell ask think know feel guess mean see hope wish want need like love
    enjoy adore prefer hate dislike live work move relocate seem look sound get let make
    take keep come try miss thank appreciate remember forget wonder believe imagine
    realize realise agree check help give show find use own depend rely report replace
    supersede plan intend promise""".split())
# Acts that take "get"/"make"... only with a concrete object are informative; the verbs
# above are refused outright except these object-bearing forms.
_WITH_OBJECT = frozenset(
    {"get", "make", "take", "have", "find", "give", "show", "do", "try"})
_HEDGE = frozenset(
    """would could should might may must can will shall if when whenever whether unless
    maybe perhaps probably wish hope 'll 'd wo ca""".split())
# Verbs whose complement is an act the speaker does ("I started to paint"); intents ("want
# to", "try to", "going to") are not acts.
_ONGOING = frozenset(
    {"start", "begin", "keep", "continue", "finish", "stop", "quit", "end"})  # "ended up going"
# Of those, the ones whose bare gerund is a lasting change ("started running"; "kept going"
# is none).
_BEGIN_OR_END = frozenset({"start", "begin", "stop", "quit"})
# The small model lemmatises some forms wrongly ("hoping" -> "hop").
_LEMMA_FIXES = {"hoping": "hope", "hoped": "hope", "hopes": "hope"}
# What the addressee "did" in the chat itself or merely has: "you shared a photo", "you've
# got a plan", "you put in the work".
_SHOWN_TO_ME = frozenset(
    "get have show give share send post mention put say tell".split())
_OBJ_DEPS = ("dobj", "attr")


def _subject_is_speaker(verb: Any) -> bool | None:
    """True/False when `verb` has a subject ("I", "we", or "my friends and I"), else None."""
    subjects = [c for c in verb.children if c.dep_ == "nsubj"]
    if not subjects:
        return None
    subject = subjects[0]
    if verb.tag_ == "VBG" and _fold(subject.text) in ("me", "us"):
        return True  # "a photo of me singing at a wedding"
    return _fold(subject.text) in _SUBJECTS or any(
        c.dep_ == "conj" and _fold(c.text) in _SUBJECTS for c in subject.children)


def _first_person(verb: Any) -> bool:
    """The speaker does `verb`: its own subject is first person, or it has none and is
    conjoined to a verb that does ("I cleaned and greased them"), or is the complement of a
    verb of starting or going on ("I started to paint", "I kept running") or of a past "had
    to" ("I had to sell it"), or the purpose of a past act ("I saved up to buy a van"), or a
    gerund on a picture of the speaker ("a picture of me speaking at a charity event")."""
    tok = verb
    for _ in range(6):
        own = _subject_is_speaker(tok)
        if own is not None:
            return own
        if (tok.dep_ == "ROOT" and tok.tag_ in ("VBD", "VBG") and _opens(tok)
                and not any(c.dep_ in ("aux", "auxpass", "nsubjpass", "expl")
                            for c in tok.children)):
            return True  # "Explored some trails.", "Did an analysis": chat drops the "I"
        if tok.dep_ == "acl" and tok.tag_ == "VBG" and _of_me(tok.head):
            return True  # "a picture of me speaking at a charity event"
        if tok.dep_ == "advcl" and any(c.dep_ == "aux" and _fold(c.text) == "to"
                                       for c in tok.children) and _done(tok.head):
            tok = tok.head  # "I had to research a lot to design a purifier": its purpose
            continue
        conjoined = tok.dep_ == "conj" and tok.head.pos_ in ("VERB", "AUX")
        had_to = _fold(tok.head.lemma_) == "have" and tok.head.tag_ == "VBD"  # "I had to sell it"
        if not (conjoined or (tok.dep_ == "xcomp" and (
                _fold(tok.head.lemma_) in _ONGOING or had_to))):
            return False
        tok = tok.head
    return False


def _done(verb: Any) -> bool:
    """`verb` is past ("I saved up", "I had to plan") or the bare verb of a past one ("had to
    plan and research")."""
    for _ in range(3):
        if verb.tag_ == "VBD":
            return True
        if verb.dep_ not in ("conj", "xcomp") or verb.head.i == verb.i:
            return False
        verb = verb.head
    return False


def _of_me(tok: Any) -> bool:
    """`tok` is "me"/"us" or a noun of them ("a picture of me")."""
    if _fold(tok.text) in ("me", "us"):
        return True
    return any(p.dep_ == "prep" and _fold(p.text) == "of" and any(
        g.dep_ == "pobj" and _fold(g.text) in ("me", "us") for g in p.children)
        for p in tok.children)


_BREAKS = frozenset({"-", "--", "–", "—", ";", ":"})


def asked(tok: Any) -> bool:
    """`tok` is in the part of its sentence that asks: the sentence ends with "?" and no
    dash set apart by a space ("dairy-free" is one word), colon or semicolon comes between
    `tok` and the end ("I moved - how about you?" states the move)."""
    sent = tok.sent
    if not sent.text.rstrip().endswith("?"):
        return False
    doc = tok.doc
    return not any(t.text in _BREAKS and (t.text in (";", ":") or doc[t.i - 1].whitespace_)
                   for t in sent if t.i > tok.i)


def stated(doc: Any) -> Iterator[tuple[str, Any]]:
    """(its sentence's folded text, token) for every token of `doc` that is not `asked`."""
    for sent in doc.sents:
        clause = _fold(sent.text)
        for tok in sent:
            if not asked(tok):
                yield clause, tok


def _opens(verb: Any) -> bool:
    """`verb` opens its sentence, or only its own adverbs come before it ("Just finished a
    quilt", "Still working on it")."""
    return all(t.dep_ == "advmod" and t.head.i == verb.i and t.pos_ == "ADV"
               for t in verb.sent if t.i < verb.i)


def _addressee_did(verb: Any) -> bool:
    """The addressee did `verb`, said as done: its own subject is "you" and it is past
    ("You captured the sunset", "you've built a shed"), not "you should try it"."""
    subjects = [c for c in verb.children if c.dep_ == "nsubj"]
    if not subjects or _fold(subjects[0].text) != "you":
        return False
    perfect = verb.tag_ == "VBN" and any(
        c.dep_ == "aux" and _fold(c.lemma_) == "have" for c in verb.children)
    return verb.tag_ == "VBD" or perfect


def _relative_head(verb: Any) -> tuple[str, Any] | None:
    """The object of a relative clause with no object of its own, or whose object is the
    relative pronoun ("a sunset we watched", "a pose that we tried") -> ("", sunset)."""
    head = verb.head
    if verb.dep_ not in ("relcl", "ccomp") or head.pos_ not in ("NOUN", "PROPN") or any(
            c.dep_ == "nsubj" and _fold(c.text) in ("me", "us") for c in verb.children):
        return None  # "a photo of me singing": no relative clause
    objects = [c for c in verb.children if c.dep_ in _OBJ_DEPS]
    if not objects and verb.dep_ == "relcl":
        return "", head
    if objects and all(c.tag_ in ("WDT", "WP") and c.i < verb.i for c in objects):
        return "", head
    return None


def _hedged(verb: Any) -> bool:
    tok = verb
    while True:
        for child in tok.children:
            if child.dep_ in ("aux", "mark", "advmod", "neg") and _fold(child.text) in (
                    _HEDGE | {"not", "n't", "never"}):
                return True
        if tok.dep_ in ("ROOT",) or tok.head.i == tok.i or _contrasted(tok) or _apart(tok):
            return False
        tok = tok.head


def _apart(tok: Any) -> bool:
    """A break (`asked`: a spaced dash, a colon or semicolon) stands between `tok` and its head:
    "I had a letdown in a tourney - I didn't do great" states the letdown whatever the parse
    hangs it on."""
    doc = tok.doc
    low, high = sorted((tok.i, tok.head.i))
    return any(doc[i].text in _BREAKS and (doc[i].text in (";", ":") or doc[i - 1].whitespace_)
               for i in range(low + 1, high))


def _contrasted(tok: Any) -> bool:
    """`tok` is a verb set against the one it is conjoined to ("Haven't talked in a while but
    wanted to say I read a book", "I didn't win, but I learned a lot"): the other verb's
    negation or hedge is not its own."""
    if tok.dep_ != "conj":
        return False
    return any(c.dep_ == "cc" and _fold(c.text) in ("but", "yet") for c in tok.head.children)


def _object(verb: Any) -> tuple[str, Any] | None:
    """(preposition path, object token) of the verb (module docstring)."""
    for child in verb.children:
        if child.dep_ in _OBJ_DEPS and child.pos_ in ("NOUN", "PROPN"):
            return "", _named(_counted(child))
    # "marinated it with herbs": what was done to a thing said elsewhere; where it was done
    # ("bought it at the market") or taken ("narrowed it down to two") still says something
    pronoun = any(c.dep_ == "dobj" and c.pos_ == "PRON" for c in verb.children) and not any(
        c.dep_ == "prt" for c in verb.children)
    for child in verb.children:
        if child.dep_ == "prep" and pronoun and _fold(child.text) not in ("at", "in", "to"):
            return None
        if child.dep_ == "prep":
            for obj in child.children:
                if obj.dep_ == "pobj" and obj.pos_ in ("NOUN", "PROPN"):
                    if dated(obj):
                        break  # "went back on March 1st": a when, not an object
                    return _fold(child.text), _named(_counted(obj))
            else:
                return None
    return None


def _bare_act(verb: Any, lemma: str) -> str | None:
    """The gerund begun or given up, with no object of its own: "I started running" ->
    "running", "I quit drinking" -> "drinking" (acts of saying or feeling are none)."""
    if lemma not in _BEGIN_OR_END and lemma != "go":
        return None
    # "went hiking with friends": an outing keeps its gerund whatever follows it
    own = ("dobj", "ccomp", "xcomp") if lemma == "go" else ("dobj", "prep", "ccomp", "xcomp")
    for child in verb.children:
        if child.dep_ == "xcomp" and child.tag_ == "VBG" and not any(
                c.dep_ in own and c.pos_ not in ("ADJ", "ADV") for c in child.children):
            if _fold(child.lemma_) in _NO_ACT | {"go", "come"}:
                return None
            better = [_fold(c.text) for c in child.children
                      if c.dep_ in ("dobj", "advmod", "acomp") and c.tag_ in ("JJR", "RBR")]
            return " ".join([_fold(child.text), *better[:1]])
    return None


def _trivial(verb_lemma: str, obj: Any) -> bool:
    """An object that says nothing lasting: exclaimed ("quite the adventure", "such a
    blast"), the subject's own thing merely had ("we all have our different paths"), or had
    or got done by another ("had it made")."""
    if any(c.dep_ == "predet" or _fold(c.text) in ("quite", "such") for c in obj.children):
        return True
    if verb_lemma == "do" and _fold(obj.lemma_) in ("job", "work"):
        return True  # "you did a great job": praise, not an act
    if verb_lemma in ("have", "get") and any(
            c.dep_ == "acl" and c.tag_ == "VBN" and _fold(c.lemma_) not in ("name", "call")
            for c in obj.children):  # "got a cat named Bailey" is had
        return True  # "I had this custom made", "got my car fixed": the act is someone else's
    owned = any(c.dep_ == "poss" and _fold(c.text) in ("my", "our") for c in obj.children)
    return verb_lemma == "have" and owned


def extract_parsed_statements(doc: Any, speaker: str, addressee: str = "") -> tuple[
        Statement, ...]:
    """The subject–verb–object statements of one parsed turn said by `speaker`."""
    found: list[Statement] = []
    for sent in doc.sents:
        for verb in sent:
            if verb.pos_ != "VERB" or asked(verb):
                continue
            first = _first_person(verb)
            if not first and not (addressee and _addressee_did(verb)):
                continue
            who = _fold(speaker if first else addressee)
            lemma = _LEMMA_FIXES.get(_fold(verb.text), _fold(verb.lemma_))
            if lemma in _NO_ACT and lemma not in _WITH_OBJECT:
                continue
            if _hedged(verb):
                continue
            got = _relative_head(verb)
            if got is None or _pointed(got[1]):  # "this moment that I captured at a gig"
                got = _object(verb)
            dest = _destination(verb, lemma)
            if dest is not None:  # "we took them to the dog park"
                to = normalise(_phrase(doc, dest), speaker=speaker, addressee=addressee)
                if to and len(to.split()) <= MAX_OBJECT_WORDS:
                    found.append(Statement(who, f"did:{lemma}_to", to, "fact", None, first,
                                           _fold(sent.text)))
            bare = _bare_act(verb, lemma)
            if bare:  # "I started running", "we went hiking": the act is the object
                found.append(Statement(who, f"did:{lemma}", bare, "fact", None, first,
                                       _fold(sent.text)))
            if got is None:
                continue
            prep, obj = got
            head = _fold(obj.lemma_ or obj.text)
            where = None if prep else _setting(obj, lemma)
            if where is None and not prep and vague(obj):
                where = _setting(verb, lemma)  # "had a great time at the fair"
            if where is not None and not (not first and lemma in _SHOWN_TO_ME) and not (
                    _pointed(obj) or _trivial(lemma, obj)):
                place = normalise(_phrase(doc, where[1]), speaker=speaker, addressee=addressee)
                if place and len(place.split()) <= MAX_OBJECT_WORDS:  # "had a letdown in a
                    found.append(Statement(  # tourney", "spent time at the beach"
                        who, f"did:{lemma}_{head}_{where[0]}", place, "fact", None, first,
                        _fold(sent.text)))
            if vague(obj):
                continue
            if lemma in _WITH_OBJECT and (obj.pos_ != "NOUN" or prep or (
                    head in _ROLE_STOP and not any(c.dep_ == "compound" for c in obj.children))):
                continue  # "got a plan", "made a mistake": no act of note ("a meal plan" is)
            if not first and lemma in _SHOWN_TO_ME:
                continue  # "you've got a community", "you shared a photo": no act of their life
            if _pointed(obj):
                continue  # "that pic": which one is said elsewhere
            if _trivial(lemma, obj):
                continue
            value = unpointed(normalise(_phrase(doc, obj), speaker=speaker,
                                        addressee=addressee))
            if not value or len(value.split()) > MAX_OBJECT_WORDS:
                continue
            particle = [_fold(c.text) for c in verb.children if c.dep_ == "prt"]
            key = "did:" + "_".join([lemma, *particle, *([prep] if prep else [])])
            found.append(Statement(who, key, value, "fact", None, first, _fold(sent.text)))
    return tuple(found)
