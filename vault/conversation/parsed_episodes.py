"""Goals and outcomes of a task from a turn's spaCy parse (the `nlp` extra): the parsed
path of `episodes` (the text rules of `task_words` / `outcomes` are the fallback).

A **goal** is a user sentence (questions included) among the first `GOAL_SENTENCES` of its
turn (a task is said up front, not in the middle of a story) that either

- states a want of the speaker: a verb of intent (want, need, try, wish, aim; like / love
  with a modal: "I'd love to"; "have to") whose subject is "I" / "we", a question for a way
  ("how do I ...", "is there a way to ..."), "help me ...", "I can't get X to V", or the
  speaker stuck / having / getting a problem ("I'm getting a TypeError", "I have a problem
  with", "I'm stuck");
- or says that a thing is in trouble: a predicate whose subject is not a person, said as
  happened (`parsed_polarity.hypothetical` is False), with negative polarity: a verb of
  malfunction ("freezes", "keeps erroring out", "gets rejected"), a negation of a verb that
  is not of the mind ("won't pair", "hasn't run", "hardly bubbles"), "keep" + V-ing, a bad
  state ("is slow", "too old", "shows empty boxes"), a change of state ("are turning
  yellow"), or a problem noun ("returns 502 errors");
- or, in a session with an assistant (an agent's transcript, `instructions`), is an
  instruction in the turn's first sentence that is no courtesy ("Fix the flaky test").
A want with no act in it ("I'd love to see a photo") is none.

Its **anchors** are what the outcome is judged against: the nouns of the goal sentence
(`nouns`: "build", "printer", "sofa"), the verbs it wants (`wanted`: the verbs of the
intent's complement, "pass", "play", "rise"; light verbs left out) and its problem
predicates (`problems`: "freeze", "drop"; the verbs under stop / prevent / avoid too).

An **outcome** sentence (not a question) of a later turn reports, for a predicate said as
happened and not an instruction (the last one with a verdict wins, then the last sentence):

- a success verb (work, fix, solve, pass ...): success, negated a failure ("didn't help");
- a problem verb (the general ones and the goal's): failure, negated a success ("hasn't
  filled up once"); a problem coming back ("came back", "happened again") a failure;
- polarity flip against the anchors, in the user's turns: a wanted verb said of a thing
  ("the TV plays every one of them") is a success, negated a failure ("it didn't rise");
  a clause about an anchor noun ("the replica caught up", "the sofa is safe", "the laptop
  never sees them") is a success unless its polarity is negative (negated, "nothing" /
  "nobody" as subject, a bad state, "still"); a pronoun of the thing ("it", "they", "she")
  counts with a state, "now", "still" or a negation, not in a plain past ("it was great");
  a problem as subject that stops or is gone is a success, back or still there a failure;
  "didn't change anything" a failure;
- "now" on a predicate of positive or neutral polarity ("Opens instantly now") a success,
  "still" on one that is no success a failure ("the charts still show UTC");
- a good state ("the tests are green") a success, a bad one with "now" or "worse" a failure;
- problem nouns denied ("no errors", "without conflicts") a success, repeated ("the same
  error") a failure; and a small lexicon of idioms (`IDIOMS`: "did the trick", "no luck").

In the assistant's turns only results said in the past or with "now" count and the anchors
are not used ("both work well" is advice, not an outcome). Same parse -> same answers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .parsed_attempts import COURTESY
from .parsed_polarity import (
    GAVE_UP,
    MIND,
    PROBLEM,
    PROBLEM_NOUNS,
    RECUR,
    SUCCESS,
    Token,
    has_child,
    hypothetical,
    imperative,
    is_person,
    lemma_key,
    negated,
    nouns,
    predicates,
    state,
    subject,
    word,
)

# How many sentences of a turn may state its goal.
GOAL_SENTENCES = 2
_WANT = frozenset("want need try wish aim struggle strive attempt".split())
_WANT_MODAL = frozenset("like love prefer".split())
_LIGHT = frozenset("""be have get make do go take keep let find stop help try need want use
    start put give see look come""".split())
# The speaker meeting a problem: "I'm getting a TypeError", "I have a problem with".
_MEET = frozenset("get have see hit face run_into encounter".split())
# Verbs of seeing and meeting: wanting only these is no task ("I'd love to see it").
_PERCEIVE = frozenset("""see hear know check visit meet chat talk catch come join watch look
    share hang read""".split())
_STOPPING = frozenset("stop prevent avoid".split())
_CHANGE = frozenset("turn go become grow get come_out".split())
_FIRST = frozenset({"i", "we"})
_SPEAKERS = frozenset({"i", "we", "you", "me", "us"})
_THIRD = frozenset({"it", "they", "she", "he", "this", "them"})
# Verbs of a problem ending ("the flicker stopped") and of an attempt's effect ("the update
# didn't change anything").
_ENDING = frozenset("stop disappear vanish end cease go_away clear_up".split())
_EFFECT = frozenset("change improve affect".split())
_PAST = frozenset({"VBD", "VBN"})
# Idioms whose words say nothing alone: (pattern on the folded sentence, verdict).
IDIOMS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(rf"\b(?:{p})\b"), v) for p, v in (
        (r"(?:did|done) the trick|that (?:did|was) it|(?:went|gone|is|are) through|"
         r"up and running|back to normal|like a charm|"
         r"(?:just|exactly) what (?:i|we) (?:wanted|needed|was after|were after)", "success"),
        (r"no luck|no dice|same (?:\w+ )?(?:thing|error|problem|issue|reason|result)|"
         r"no (?:real )?(?:change|difference)|out of ideas|rolled (?:\w+ ){0,2}back|"
         r"went (?:wrong|down)", "failure")))
_NEGATORS = re.compile(r"\b(?:not|never|no|n't|don't|didn't|haven't|hasn't|won't)\s+$")


@dataclass(frozen=True)
class Goal:
    """What a goal sentence is about (module docstring): its kind ("want" | "problem"),
    anchor nouns, wanted verbs and problem predicates (lemma keys)."""

    kind: str
    nouns: frozenset[str]
    wanted: frozenset[str]
    problems: frozenset[str]


def _problem_noun(tok: Token) -> bool:
    """A noun naming a problem ("an error", "a TypeError", "an issue")."""
    return tok.pos_ in ("NOUN", "PROPN") and (str(tok.lemma_).casefold() in PROBLEM_NOUNS
                                              or word(tok).endswith(("error", "exception")))


def _first_person(tok: Token | None) -> bool:
    return tok is not None and word(tok) in _FIRST


def _complement(tok: Token) -> list[Token]:
    return [c for c in tok.children if c.dep_ in ("xcomp", "ccomp", "dobj", "attr", "relcl",
                                                   "acl", "advcl", "prep", "pcomp")]


def _anchors(kind: str, sent: Any, heads: list[Token], problems: set[str]) -> Goal | None:
    """The goal's anchors from the sentence and the heads of what is wanted; None for a want
    with no act in it ("I'd love to see a photo", "I need some time off")."""
    wanted: set[str] = set()
    act = False
    for h in heads:
        for t in h.subtree:
            if t.pos_ != "VERB":
                continue
            key = lemma_key(t)
            act = act or str(t.lemma_).casefold() not in _PERCEIVE
            under_stop = any(str(a.lemma_).casefold() in _STOPPING for a in t.ancestors
                             if a in h.subtree or a is h)
            if under_stop or key in PROBLEM:
                problems.add(key)
            elif kind == "want" and str(t.lemma_).casefold() not in _LIGHT:
                wanted.add(key)
            elif kind == "problem" and negated(t) and str(t.lemma_).casefold() not in MIND:
                wanted.add(key)  # "the printer won't print": printing is wanted
    if kind == "want" and not act:
        return None
    return Goal(kind, nouns(sent.root) | frozenset().union(*(nouns(h) for h in heads)),
                frozenset(wanted), frozenset(problems))


def _want(sent: Any) -> Goal | None:
    """A want / way / stuck of the speaker in `sent`, or None (module docstring)."""
    for t in sent:
        lem, subj = str(t.lemma_).casefold(), subject(t)
        mine = _first_person(subj)
        if t.pos_ in ("VERB", "AUX") and mine and not negated(t) and t.tag_ not in _PAST and (
                lem in _WANT or (lem in _WANT_MODAL and any(c.tag_ == "MD" for c in t.children))
                or (lem == "have" and any(c.dep_ == "xcomp" for c in t.children))):
            return _anchors("want", sent, _complement(t), set())
        if lem == "how" and t.dep_ == "advmod" and _first_person(subject(t.head)):
            return _anchors("want", sent, [t.head], set())
        if lem == "possible" and t.dep_ == "acomp" and str(sent.text).rstrip().endswith("?") and (
                any(c.dep_ == "xcomp" for c in t.head.children)):
            return _anchors("want", sent, [c for c in t.head.children if c.dep_ == "xcomp"],
                            set())  # "Is it possible to merge two playlists?"
        if lem == "way" and any(c.dep_ in ("relcl", "acl") for c in t.children) and str(
                sent.text).rstrip().endswith("?"):
            return _anchors("want", sent, [c for c in t.children if c.dep_ in ("relcl", "acl")],
                            set())
        if lem == "help" and t.pos_ == "VERB" and any(
                word(g) in ("me", "us") for c in t.children for g in (c, *c.children)):
            return _anchors("want", sent, _complement(t), set())
        if lem == "get" and mine and negated(t) and _complement(t):
            return _anchors("want", sent, [t], set())  # "I can't get the VPN to connect"
        if mine and not hypothetical(t) and (word(t) == "stuck" or (lem in _MEET and any(
                _problem_noun(d) for d in t.subtree))):
            return _anchors("problem", sent, [t], set())
    return None


def _trouble(t: Token) -> str | None:
    """The problem predicate `t` states of a thing, or None (module docstring)."""
    subj = subject(t)
    if subj is None or hypothetical(t) or imperative(t):
        return None
    key, lem = lemma_key(t), str(t.lemma_).casefold()
    kept = [c for c in t.children if c.dep_ == "xcomp" and (c.tag_ == "VBG" or any(
        a.dep_ == "auxpass" for a in c.children))]
    if lem == "keep" and kept and any(a.dep_ == "auxpass" for a in kept[0].children):
        return lemma_key(kept[0])  # "I keep getting logged out", "invoices keep getting flagged"
    if is_person(subj):
        return None
    if key in PROBLEM or lem in PROBLEM:
        return key if not negated(t) else None
    if negated(t):  # "the printer won't print"; not "it won't take long"
        return key if lem not in MIND and subj.pos_ in ("NOUN", "PROPN") else None
    if lem == "keep" and kept and lemma_key(kept[0]) not in SUCCESS:
        return lemma_key(kept[0])
    if lem == "stop" and kept and not negated(t):
        return key  # "the bot stopped answering commands"
    if state(t) < 0 or any(state(c) < 0 for c in t.children if c.dep_ == "dobj"):
        return key
    if (lem in _CHANGE or key in _CHANGE) and any(
            c.dep_ in ("acomp", "oprd") and c.pos_ == "ADJ" and state(c) == 0
            for c in t.children):  # "are turning yellow", "comes out gummy"
        return key
    if any(c.dep_ in ("dobj", "attr") and str(c.lemma_).casefold() in PROBLEM_NOUNS
           for c in t.children):
        return key
    return None


def parsed_goal(doc: Any, *, instructions: bool = False) -> Goal | None:
    """The goal a user turn's parse states, or None (module docstring). With
    `instructions` (a session with an assistant: an agent's transcript) an instruction in
    the turn's first sentence is a goal too ("Fix the flaky login test")."""
    first = next(iter(doc.sents), None)
    if instructions and first is not None:
        for t in predicates(first):
            if imperative(t) and lemma_key(t) not in COURTESY and str(
                    t.lemma_).casefold() not in COURTESY:
                return _anchors("want", first, [t], set())
    for n, sent in enumerate(doc.sents):
        if n >= GOAL_SENTENCES:
            break  # a task is said up front, not in the middle of a story
        want = _want(sent)
        if want is not None:
            return want
        if str(sent.text).rstrip().endswith("?"):
            continue  # "Are you okay?": a question states no trouble
        for t in predicates(sent):
            problem = _trouble(t)
            if problem is not None:
                said = problem in PROBLEM or str(t.lemma_).casefold() in PROBLEM
                return _anchors("problem", sent, [t], {problem} if said else set())
    return None


def _idiom(text: str) -> str | None:
    found: str | None = None
    for rx, verdict in IDIOMS:
        for m in rx.finditer(text):
            if not _NEGATORS.search(text[: m.start()]):
                found = verdict
    return found


def _nouns_of(tok: Token | None) -> frozenset[str]:
    if tok is None:
        return frozenset()
    return frozenset(str(t.lemma_).casefold() for t in tok.subtree
                     if t is tok or (t.pos_ in ("NOUN", "PROPN") and t.dep_ == "compound"))


def _verdict(t: Token, goal: Goal | None, user: bool) -> str | None:
    """What predicate `t` says of the task (module docstring), or None."""
    if hypothetical(t) or imperative(t):
        return None
    subj, key, lem = subject(t), lemma_key(t), str(t.lemma_).casefold()
    if subj is not None and word(subj) == "you":
        return None  # "you are passing the wrong flag": a diagnosis
    neg, now, still = negated(t), has_child(t, "now"), has_child(t, "still")
    told = t.tag_ in _PAST or now or neg or user
    if lem == "sort" and any(c.dep_ in ("dobj", "prt") for c in t.children):
        key = "sort_out"  # "that sorted it"
    if (key in SUCCESS or lem in SUCCESS) and told and t.dep_ not in ("relcl", "acl"):
        if lem == "work" and (is_person(subj) or (t.tag_ in ("VB", "VBG") and not (
                subj is not None and any(a.dep_ == "aux" for a in t.children)))):
            return None  # "I work at", "keep working hard"; not "it's working", "it works"
        if lem == "help" and not (neg or (t.tag_ in _PAST and (subj is None or word(subj) in (
                "that", "it", "this", "which")))):
            return None  # "it helps me relax", "your words helped": no result of a task
        return "failure" if neg else "success"
    problems = goal.problems if goal else frozenset()
    if (key in PROBLEM or lem in PROBLEM or key in problems) and not is_person(subj):
        if neg:
            return "success" if user else None
        return "failure" if user or t.tag_ in _PAST else None
    if key in GAVE_UP and not neg:
        return "failure"
    if key in RECUR or (lem in ("happen", "occur") and has_child(t, "again")):
        return "failure"
    polarity = -1 if neg else state(t)
    if not user:
        return "success" if polarity > 0 and now else None
    if goal is None or (subj is not None and word(subj) in _SPEAKERS):
        return _plain(t, polarity, now, still)
    about = _about(subj, goal)
    if _nouns_of(subj) & (PROBLEM_NOUNS | goal.problems):  # "the noise is gone"
        if lem in _ENDING or has_child(t, "gone", "away"):
            return "failure" if neg else "success"
        if still or has_child(t, "back", "again"):
            return "failure"
    if still and ((polarity <= 0 and (about or key in goal.wanted or goal.kind == "problem"))
                  or polarity < 0):
        return "failure"  # "the boxes are still there", "the charts still show UTC"
    if key in goal.wanted:
        return "failure" if neg else "success"
    named = about and subj is not None and subj.pos_ != "PRON"
    if about and (polarity or now or has_child(t, "again") or (named and t.tag_ in _PAST)):
        return "failure" if polarity < 0 else "success"  # "the replica caught up"
    return _plain(t, polarity, now, still)


def _plain(t: Token, polarity: int, now: bool, still: bool) -> str | None:
    """A verdict without the goal's anchors: a state said now, still or again."""
    if polarity < 0 and (now or still or has_child(t, "yet") or "worse" in (
            word(c) for c in t.subtree)):
        return "failure"
    if str(t.lemma_).casefold() in _EFFECT and negated(t):
        return "failure"  # "the update didn't change anything"
    if polarity > 0 and (now or has_child(t, "again") or str(t.lemma_).casefold() in (
            "run", "go", "work")):
        return "success"  # "it went smoothly", "the backup ran fine", "main is green again"
    if now and polarity == 0 and not is_person(subject(t)):
        return "success"
    return None


def _about(subj: Token | None, goal: Goal) -> bool:
    """The subject is the goal's thing: one of its nouns, or a third-person pronoun."""
    if subj is None:
        return False
    if subj.pos_ == "PRON":
        return word(subj) in _THIRD
    return bool(_nouns_of(subj) & goal.nouns)


def _noun_verdict(t: Token) -> str | None:
    """"no errors", "without conflicts": success; "the same error": failure."""
    if str(t.lemma_).casefold() not in PROBLEM_NOUNS:
        return None
    denied = any(word(c) == "no" for c in t.children) or any(
        word(g) == "no" for c in t.children if c.dep_ == "amod" for g in c.children)
    if (denied and (t.tag_ == "NNS" or has_child(t, "more"))) or (
            t.head is not t and word(t.head) == "without"):
        return "success"  # "no errors", "no more conflicts"; not "no problem!" (courtesy)
    if any(word(c) == "same" for c in t.children) or has_child(t, "again"):
        return "failure"
    return None


def parsed_outcome(doc: Any, goal: Goal | None, *, user: bool) -> str | None:
    """"success", "failure" or None for a later turn's parse (module docstring)."""
    result: str | None = None
    for sent in doc.sents:
        text = " ".join(str(sent.text).replace("’", "'").casefold().split())
        if text.endswith("?"):
            continue
        found: str | None = None
        preds = predicates(sent)
        for t in sent:
            said = None
            if t.pos_ in ("NOUN", "PROPN"):
                said = _noun_verdict(t)
            if t in preds:
                said = _verdict(t, goal, user) or said
            if said is not None:
                found = said
        if text.split(" ", 1)[0].rstrip(",.!") == "worse" and user:
            found = "failure"
        found = _idiom(text) or found
        if found is not None:
            result = found
    return result
