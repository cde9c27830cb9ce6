"""Outcomes of a task from a turn's spaCy parse (the `nlp` extra): what a later turn
reports on a goal found by `parsed_episodes` (its anchors).

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
  a mild good state only with "now" / "again" ("we're good now"; not "it was good to see
  you"); the speaker stuck ("so I'm stuck with Friday") a failure; "still" on a neutral
  state is a failure only of an anchor or a problem's symptom ("water still stands"), not of
  a thing merely still being there or of a person ("she still practises");
- without such a verb (`parsed_reports`): a thing said done ("Migration done") a success;
  better / worse against before or as a fragment ("Much better than before") in the user's
  turns; the attempt judged bad ("that's a dead end") a failure;
- problem nouns denied ("no errors", "without conflicts", "no knee pain") a success,
  repeated ("the same error", "still a TimeoutError") a failure; and a small lexicon of
  idioms (`IDIOMS`: "did the trick", "no luck").

In the assistant's turns only results said in the past or with "now" count and the anchors
are not used ("both work well" is advice, not an outcome). Same parse -> same answers.
"""

from __future__ import annotations

import re
from typing import Any

from .parsed_episodes import Goal
from .parsed_polarity import (
    GAVE_UP,
    MILD,
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
    predicates,
    problem_noun,
    state,
    subject,
    word,
)
from .parsed_reports import comparative, completion

_SPEAKERS = frozenset({"i", "we", "you", "me", "us"})
_THIRD = frozenset({"it", "they", "she", "he", "this", "them"})
# Verbs of a problem ending ("the flicker stopped") and of an attempt's effect ("the update
# didn't change anything").
_ENDING = frozenset("stop disappear vanish end cease go_away clear_up".split())
_EFFECT = frozenset("change improve affect".split())
_COMPLEMENTS = frozenset({"acomp", "attr", "oprd", "advmod", "advcl", "xcomp"})
# Verbs of the speaker losing what the task was for ("we'll miss the ceremony").
LOSS = frozenset("miss lose forfeit".split())
_PAST = frozenset({"VBD", "VBN"})
# Idioms whose words say nothing alone: (pattern on the folded sentence, verdict).
IDIOMS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(rf"\b(?:{p})\b"), v) for p, v in (
        (r"(?:did|done) the trick|that (?:did|was) it|(?:went|gone|is|are) through|"
         r"up and running|back to normal|like a charm|"
         r"(?:just|exactly) what (?:i|we) (?:wanted|needed|was after|were after)", "success"),
        (r"no luck|no dice|same (?:\w+ )?(?:thing|error|problem|issue|reason|result)|"
         r"no (?:real )?(?:change|difference)|out of ideas|rolled (?:\w+ ){0,2}back|"
         r"went (?:wrong|down)|still (?:exactly |just )?the same(?= *(?:[,.;:!]|$))",
         "failure")))
_NEGATORS = re.compile(r"\b(?:not|never|no|n't|don't|didn't|haven't|hasn't|won't)\s+$")



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
                     if t == tok or (t.pos_ in ("NOUN", "PROPN") and t.dep_ == "compound"))


def _verdict(t: Token, goal: Goal | None, user: bool) -> str | None:
    """What predicate `t` says of the task (module docstring), or None."""
    if user and _lost(t, goal):
        return "failure"
    if hypothetical(t) or imperative(t):
        return None
    subj, key, lem = subject(t), lemma_key(t), str(t.lemma_).casefold()
    if subj is not None and word(subj) == "you":
        return None  # "you are passing the wrong flag": a diagnosis
    if completion(t) or any(completion(c) for c in t.children if c.dep_ == "acomp"):
        return "success"  # "Migration done", "the upgrade is complete"
    neg, now, still = negated(t), has_child(t, "now"), has_child(t, "still")
    if user and not neg and subj is not None and word(subj) in ("i", "we") and (
            word(t) == "stuck" or has_child(t, "stuck")):
        return "failure"  # the speaker stuck after an attempt: "so I'm stuck with it"
    told = t.tag_ in _PAST or now or neg or user
    if lem == "sort" and any(c.dep_ in ("dobj", "prt") for c in t.children):
        key = "sort_out"  # "that sorted it"
    if (key in SUCCESS or lem in SUCCESS) and told and t.dep_ not in ("relcl", "acl") and not (
            t.dep_ == "xcomp" and t.head.pos_ == "ADJ"):  # not "it's not worth fixing"
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
    # a give-up or a recurrence; the assistant's only in the past or now ("a tray keeps it
    # from coming back" is no report)
    if (user or t.tag_ in _PAST or now) and ((key in GAVE_UP and not neg) or key in RECUR or (
            lem in ("happen", "occur") and has_child(t, "again"))):
        return "failure"
    polarity = -1 if neg else state(t)
    if user and not neg and (now or has_child(t, "again")) and (
            _mild(t)):
        return "success"  # "we're good now", "all OK again"
    if not user:
        return "success" if polarity > 0 and now else None
    if polarity < 0 and subj is not None and word(subj) in ("that", "this"):
        return "failure"  # the attempt judged: "that's a dead end"
    if goal is None or (subj is not None and word(subj) in _SPEAKERS):
        return _plain(t, polarity, now, still)
    about = _about(subj, goal)
    if _nouns_of(subj) & (PROBLEM_NOUNS | goal.problems):  # "the noise is gone"
        if lem in _ENDING or has_child(t, "gone", "away"):
            return "failure" if neg else "success"
        if still or has_child(t, "back", "again"):
            return "failure"
    person = subj is not None and word(subj) in ("he", "she")
    if still and (polarity < 0 or (polarity == 0 and not person and (
            about or key in goal.wanted or (goal.kind == "problem" and lem != "be")))):
        # "the boxes are still there", "water still stands in the tray"; a thing that is no
        # anchor still *being* somewhere, or a person still doing something, is neutral:
        # "the account is still there", "she still practises every day"
        return "failure"
    if key in goal.wanted:
        return "failure" if neg else "success"
    named = about and subj is not None and subj.pos_ != "PRON"
    if about and (polarity or now or has_child(t, "again") or (named and t.tag_ in _PAST)):
        return "failure" if polarity < 0 else "success"  # "the replica caught up"
    return _plain(t, polarity, now, still)


def _lost(t: Token, goal: Goal | None) -> bool:
    """The speaker's loss, said as happened or as certain ("we missed the flight", "we'll
    miss the ceremony", "I'm going to lose the deposit"): a verb of losing (`LOSS`), not
    negated, first-person subject, in the past or a plain future (no condition on it or in
    a clause under it: "if the coach is full we'll miss it"), not of a person ("we'll miss
    you") and not what the goal wanted ("I want to lose 5 kg")."""
    going = t.dep_ == "xcomp" and t.head.i != t.i and word(t.head) == "going"
    verb = t.head if going else t  # "I'm going to lose it": "going" carries the clause
    lem, subj = str(t.lemma_).casefold(), subject(verb)
    if lem not in LOSS or negated(t) or negated(verb) or subj is None or word(subj) not in (
            "i", "we"):
        return False
    if goal is not None and lemma_key(t) in goal.wanted:
        return False
    if any(c.dep_ == "dobj" and is_person(c) for c in t.children):
        return False  # "we'll miss you": a feeling for a person, no loss
    kids = list(verb.children)
    if any(c.dep_ == "mark" or (c.dep_ == "advcl" and any(g.dep_ == "mark" for g in c.children))
           for c in kids) or verb.dep_ not in ("ROOT", "conj", "ccomp"):
        return False
    future = going or any(c.dep_ == "aux" and word(c) in ("will", "'ll") for c in kids)
    modal = any(c.tag_ == "MD" and word(c) not in ("will", "'ll") for c in kids)
    return not modal and (t.tag_ == "VBD" or future)


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
    if now and polarity == 0 and not is_person(subject(t)) and not (
            _compared(t) or _understood(t)):
        return "success"
    return None


def _mild(t: Token) -> bool:
    """A mild good state on `t` (`MILD`), not an acknowledgement hung on it ("ok that makes
    sense now": "ok" is an interjection, not a state)."""
    return word(t) in MILD or any(
        word(c) in MILD or any(word(g) in MILD for g in c.children if c.dep_ in _COMPLEMENTS)
        for c in t.children if c.dep_ != "intj")


def _understood(t: Token) -> bool:
    """Understanding, not a result: a verb of the mind or "makes sense" ("that makes sense
    now": the advice is clear, nothing has been done yet)."""
    return str(t.lemma_).casefold() in MIND or any(
        c.dep_ == "dobj" and str(c.lemma_).casefold() == "sense" for c in t.children)


def _compared(t: Token) -> bool:
    """A comparison ("more brown than pink", "darker than before"): a change whose direction
    no good / bad word gives (`comparative` reads "better" / "worse") is no verdict."""
    return t.tag_ in ("JJR", "RBR") or has_child(t, "more", "less", "than")


def _about(subj: Token | None, goal: Goal) -> bool:
    """The subject is the goal's thing: one of its nouns, or a third-person pronoun."""
    if subj is None:
        return False
    if subj.pos_ == "PRON":
        return word(subj) in _THIRD
    return bool(_nouns_of(subj) & goal.nouns)


def _noun_verdict(t: Token) -> str | None:
    """"no errors", "without conflicts": success; "the same error": failure."""
    if not problem_noun(t):
        return None
    denied = any(word(c) == "no" for c in t.children) or any(
        word(g) == "no" for c in t.children if c.dep_ == "amod" for g in c.children)
    named = any(c.dep_ == "compound" for c in t.children) or has_child(t, "all")
    if (denied and (t.tag_ == "NNS" or named or has_child(t, "more"))) or (
            t.head is not t and word(t.head) == "without"):
        return "success"  # "no errors", "no more conflicts"; not "no problem!" (courtesy)
    if any(word(c) in ("same", "still") for c in t.children) or has_child(t, "again"):
        return "failure"  # "same error", "still ModuleNotFoundError", "the warning again"
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
            if user and comparative(t) and not hypothetical(t.head if t.dep_ == "acomp" else t):
                said = "success" if comparative(t) > 0 else "failure"  # "much better than before"
            if said is not None:
                found = said
        if text.split(" ", 1)[0].rstrip(",.!") == "worse" and user:
            found = "failure"
        found = _idiom(text) or found
        if found is not None:
            result = found
    return result
