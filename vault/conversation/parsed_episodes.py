"""Goals of a task from a turn's spaCy parse (the `nlp` extra): the parsed path of
`episodes` (the text rules of `task_words` / `outcomes` are the fallback).

A **goal** is a user sentence (questions included) among the first `GOAL_SENTENCES` of its
turn (a task is said up front, not in the middle of a story; in an agent's session, a
greeting or other short verbless fragment before it, "Hi! Quick one.", does not count; between
people the opening exclamations are the norm and what follows is a story) that either

- states a want of the speaker: a verb of intent (want, need, try, wish, aim; like / love
  with a modal: "I'd love to"; "have to") whose subject is "I" / "we", a question for a way
  ("how do I ...", "is there a way to ..."), "help me ...", "I can't get X to V", or the
  speaker stuck / having / getting a problem ("I'm getting a TypeError", "I have a problem
  with", "I'm stuck"), a question for the speaker's own act ("what can I do to save them",
  "what am I doing wrong?", a wh-word opening it when the "?" is left out);
- or states a need / want of the speaker's own person or thing ("my daughter needs a
  volcano that erupts", "our team needs to cut the bill");
- or says that a thing is in trouble (in a statement, or a why-question: "Why does my
  sourdough keep collapsing?"): a predicate whose subject is not a person, said as
  happened (`parsed_polarity.hypothetical` is False), with negative polarity: a verb of
  malfunction ("freezes", "keeps erroring out", "gets rejected"), a negation of a verb that
  is not of the mind ("won't pair", "hasn't run", "hardly bubbles"), "keep" + V-ing, a
  problem noun under an onset ("started making a noise"), a pronoun after a thing that is
  denied an act ("the parcel says delivered but it never arrived"), a bad state ("is
  slow", "too old", "shows empty boxes"), a change of state ("are turning yellow"), or a
  problem noun ("returns 502 errors");
- or, in a session with an assistant (an agent's transcript, `instructions`), is an
  instruction in the turn's first sentence that is no courtesy ("Fix the flaky test").
In an agent's session the turn's last sentence is read as well when it is a question: a
request put after its context ("evening. got a backup script that ... crontab has ... how
do i get it going nightly?").
A want with no act in it ("I'd love to see a photo") is none.

Its **anchors** are what the outcome is judged against: the nouns of the goal sentence
(`nouns`: "build", "printer", "sofa"), the verbs it wants (`wanted`: the verbs of the
intent's complement, "pass", "play", "rise"; light verbs left out) and its problem
predicates (`problems`: "freeze", "drop"; the verbs under stop / prevent / avoid too, except
under a thing's own "stopped": "the derailleur stopped shifting" wants shifting back).

The outcomes later turns report on a goal are read by `parsed_outcomes`. Same parse ->
same answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .parsed_attempts import COURTESY
from .parsed_polarity import (
    MIND,
    PROBLEM,
    PROBLEM_NOUNS,
    SUCCESS,
    Token,
    hypothetical,
    imperative,
    is_person,
    lemma_key,
    negated,
    nouns,
    predicates,
    problem_noun,
    state,
    subject,
    word,
)
from .parsed_reports import lapse, still_after_act

# How many sentences of a turn may state its goal.
GOAL_SENTENCES = 2
# The most words of a verbless opener that does not count among them ("Hi there!").
OPENER_WORDS = 3
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
# Verbs of an onset whose V-ing complement is said of their subject ("started making a noise").
_ONSET = frozenset("start begin keep".split())
_CHANGE = frozenset("turn go become grow get come_out".split())
_FIRST = frozenset({"i", "we"})
_PAST = frozenset({"VBD", "VBN"})
@dataclass(frozen=True)
class Goal:
    """What a goal sentence is about (module docstring): its kind ("want" | "problem"),
    anchor nouns, wanted verbs and problem predicates (lemma keys)."""

    kind: str
    nouns: frozenset[str]
    wanted: frozenset[str]
    problems: frozenset[str]


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
            # "I want to stop the fan rattling": rattling is a problem; "the derailleur
            # stopped shifting" (a problem said of a thing): shifting is wanted
            under_stop = any(str(a.lemma_).casefold() in _STOPPING for a in t.ancestors
                             if (a in h.subtree or a == h) and not (kind == "problem" and a == h))
            if under_stop or key in PROBLEM:
                problems.add(key)
            elif (kind == "want" and str(t.lemma_).casefold() not in _LIGHT) or (
                    kind == "problem" and t != h and str(h.lemma_).casefold() == "stop") or (
                    kind == "problem" and negated(t) and str(t.lemma_).casefold() not in MIND):
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
        if t.pos_ in ("VERB", "AUX") and lem in ("want", "need") and _ours(subj) and not (
                negated(t) or t.tag_ in _PAST):
            return _anchors("want", sent, _complement(t), set())  # "my daughter needs a ..."
        if t.pos_ in ("VERB", "AUX") and mine and not negated(t) and t.tag_ not in _PAST and (
                lem in _WANT or (lem in _WANT_MODAL and any(c.tag_ == "MD" for c in t.children))
                or (lem == "have" and any(c.dep_ == "xcomp" for c in t.children))):
            return _anchors("want", sent, _complement(t), set())
        if lem == "how" and t.dep_ == "advmod" and _first_person(subject(t.head)):
            return _anchors("want", sent, [t.head], set())
        if lem in ("what", "which") and t.dep_ == "dobj" and _first_person(subject(t.head)) and (
                _question(sent)):
            return _anchors("want", sent, [t.head], set())  # "what can I do to save them"
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
                problem_noun(d) for d in t.subtree))):
            return _anchors("problem", sent, [t], set())
    return None


def _question(sent: Any) -> bool:
    """A question: it ends with "?", or opens with a wh-word ("what can i do to save them",
    typed without one)."""
    return str(sent.text).rstrip().endswith("?") or sent[0].tag_ in ("WP", "WRB", "WDT")


def _ours(subj: Token | None) -> bool:
    """A noun subject of the speaker's own: "my daughter", "our team"."""
    return subj is not None and subj.pos_ in ("NOUN", "PROPN") and any(
        c.dep_ == "poss" and word(c) in ("my", "our") for c in subj.children)


def _earlier_thing(t: Token, subj: Token) -> bool:
    """A pronoun subject ("it", "they") after a noun subject that is no person in the same
    sentence: "My package says delivered but it never arrived"."""
    return word(subj) in ("it", "they") and any(
        d.dep_ in ("nsubj", "nsubjpass") and d.pos_ in ("NOUN", "PROPN") and d.i < subj.i
        for d in t.sent)


def _trouble(t: Token) -> str | None:
    """The problem predicate `t` states of a thing, or None (module docstring)."""
    subj = subject(t)
    if subj is None and t.dep_ == "xcomp" and str(t.head.lemma_).casefold() in _ONSET:
        subj = subject(t.head)  # "the fridge started making a noise"
    if subj is None or hypothetical(t) or imperative(t):
        return None
    key, lem = lemma_key(t), str(t.lemma_).casefold()
    kept = [c for c in t.children if c.dep_ == "xcomp" and (c.tag_ == "VBG" or any(
        a.dep_ == "auxpass" for a in c.children))]
    if lem == "keep" and kept and any(a.dep_ == "auxpass" for a in kept[0].children):
        return lemma_key(kept[0])  # "I keep getting logged out", "invoices keep getting flagged"
    if lapse(t) is not None or still_after_act(t):
        return lapse(t) or key  # "I keep forgetting words", "I moved it and they still see"
    if is_person(subj):
        return None
    if key in PROBLEM or lem in PROBLEM:
        return key if not negated(t) else None
    if negated(t):  # "the printer won't print"; not "it won't take long"
        return key if lem not in MIND and (subj.pos_ in ("NOUN", "PROPN") or (
            _earlier_thing(t, subj) and not any(c.dep_ in ("dobj", "acomp", "attr", "advmod")
                                                for c in t.children))) else None
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


def _opener(sent: Any) -> bool:
    """A greeting or opener: a short fragment (at most `OPENER_WORDS` words) with no verb,
    "Hi!", "Quick one.", "Hello there :)"; not a sentence whose verb the small model took for
    a noun ("The podcast audio crackles in the right channel.")."""
    said = [t for t in sent if t.is_alpha]
    return len(said) <= OPENER_WORDS and not any(t.pos_ in ("VERB", "AUX") for t in sent)


def parsed_goal(doc: Any, *, instructions: bool = False) -> Goal | None:
    """The goal a user turn's parse states, or None (module docstring). With
    `instructions` (a session with an assistant: an agent's transcript) an instruction in
    the turn's first sentence is a goal too ("Fix the flaky login test"), and openers (a
    greeting, `_opener`) do not count among the first `GOAL_SENTENCES`."""
    first = next(iter(doc.sents), None)
    if instructions and first is not None:
        for t in predicates(first):
            if imperative(t) and lemma_key(t) not in COURTESY and str(
                    t.lemma_).casefold() not in COURTESY:
                return _anchors("want", first, [t], set())
    n = 0
    sents = list(doc.sents)
    for k, sent in enumerate(sents):
        if instructions and _opener(sent):
            continue  # a greeting to the agent ("Hi!", "Quick one.") is no sentence said
        # a task is said up front, not in the middle of a story; to an agent it may also be
        # the question that closes the turn, after the context ("... how do I get it going?")
        asked = instructions and k == len(sents) - 1 and _question(sent)
        if n >= GOAL_SENTENCES and not asked:
            continue
        n += 1
        want = _want(sent)
        if want is not None:
            return want
        if str(sent.text).rstrip().endswith("?") and not any(
                word(t) == "why" and t.dep_ == "advmod" for t in sent):
            continue  # "Are you okay?" states no trouble; "Why does the tap drip?" does
        for t in predicates(sent):
            problem = _trouble(t)
            if problem is not None:
                said = problem in PROBLEM or str(t.lemma_).casefold() in PROBLEM
                return _anchors("problem", sent, [t], {problem} if said else set())
    return None


def turn_goal(doc: Any, *, problem: bool) -> Goal:
    """The anchors of a goal turn the parse found no goal in (a sentence it mis-parsed, a
    phrasing it has no class for, a goal after a greeting) but the text rules did (they read
    the whole turn): the nouns of the turn's sentences, their verbs of problem (`problems`)
    and their other verbs that are no light verb (`wanted`). A "problem" goal when the rules
    found a problem in it (`problem`), else a "want"."""
    sents = list(doc.sents)
    verbs = [t for s in sents for t in s if t.pos_ == "VERB"]
    problems = frozenset(lemma_key(t) for t in verbs if lemma_key(t) in PROBLEM)
    wanted = frozenset(lemma_key(t) for t in verbs if lemma_key(t) not in PROBLEM
                       and str(t.lemma_).casefold() not in _LIGHT)
    return Goal("problem" if problem else "want",
                frozenset().union(*(nouns(s.root) for s in sents)), wanted, problems)
