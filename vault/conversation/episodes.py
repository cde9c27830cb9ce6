"""Episodic memory (4D seed, "Past tasks -> Episodic memory"): a task, what was tried, the
outcome and the lesson, found in a session's turns by fixed patterns, or from the parse.

"In the implementation, episodic memory captures the task, approach, outcome, and lesson
rather than storing only the topic." An episode is task-shaped: it opens on a *goal* turn and
closes on an *outcome* turn of the same session, at most WINDOW turns later. Patterns (tested
on the casefolded turn, curly quotes straightened; the first pattern of each part that matches
names the label):

=========  ==========================================================================
part       patterns (goal also: "keeps failing", "is broken", "won't build", "returns
           ... errors")
=========  ==========================================================================
goal       `task_words.is_goal` (a want/try/need or a problem said of a thing: "the job
           fails", "pods are stuck", "the printer won't print", "emails are landing in
           spam"), or "I'm trying to", "I need to", "I want to", "how do/can I", "help
           me", "I'm getting (a|an) ... error", "I'm stuck", "I have a problem/issue", "... isn't
           working", "I can't get"
step       every turn between the goal and the outcome (what was said or tried), marked
           "tried" when it matches "I tried", "I've tried", "try", "I added", "I changed",
           "I ran", "I installed", "I switched", "I updated", "I removed", "you could",
           "make sure", "is missing"
outcome    by lemma (`outcomes`): a clause reporting that something worked / was fixed /
           passes / was solved ("Pinning the compiler worked", "the build passes now") is
           a success; failed / broke / crashed, or a negated success ("didn't help") a
           failure; intents ("get the build to pass") and activities ("working on") are
           neither. The last verdict on the goal closes the episode (`_close`: a later
           failure overrides a partial success, failed attempts before a final success
           are steps tried), up to a lesson after it or a new request of the speaker
lesson     "lesson", "next time", "note for later", "good to know", "turns out", "the
           trick is/was", "I learned", "I realised", "note to self", "takeaway", "from now
           on", "in future" (the outcome turn, a later turn that ended the search, or
           up to LESSON_AFTER turns after the outcome)
=========  ==========================================================================

With the `nlp` extra (and `use_nlp`) goals and outcomes come from each turn's parse instead
(`parsed_episodes`: dependency relations, lemmas, negation and a polarity flip against the
goal's subject / object / wanted verb). Where the parse finds no goal in a user turn of an
agent's session (one with an assistant) but the text rules do, the turn is a goal all the
same, anchored on its own nouns and verbs (`parsed_episodes.turn_goal`; `combine`): the parse
misses goals it mis-parses, the rules miss phrasings they have no pattern for, and the
outcome is read by the parse either way. Between people the rules' patterns fire on small
talk, so there the parse alone decides. Two rules keep chat out: the outcome is said by
the goal's speaker (or the assistant), and an attempt comes between goal and outcome (an
assistant's turn or another speaker's advice, `parsed_attempts`). The steps' "tried" marks
and the lesson stay the patterns above in both paths.

On the parsed path the assistant's reaction to a user's report is evidence too
(`reactions`, VADER's valence of the opening of the assistant's next turn): where the parse
reads no verdict in a report ("swam 10 lengths nonstop ... cracked it" → "Brilliant, ten
lengths nonstop is a big jump") the reaction gives it, and a clear reaction overrules the
parse's verdict ("it went through the whole bed" read as the idiom of success → "I'm sorry,
that's a rotten outcome"). A report that announces a plan ("I'll try it at the park on
Sunday") takes no verdict from the reaction (a "Sounds like a plan!" answers the plan), and
a plan of a further attempt after a failure, with no verdict of its own, reopens the task:
the failure was a step, and a session that ends there has no outcome yet. A lesson turn
that opens with a report ("uploads save fine now. takeaway: ...") has its verdict read
from the part before the lesson's marker (both paths). A user's last turn that leaves to
try the advice, with no verdict of its own (`reactions.trials`: "will try it monday"),
drops the verdict so far: no result is said yet. A session's opening request that neither
reading finds a goal in is the goal all the same (`openings`).

An assistant's verdict that repeats the user's ("Sorry it didn't work out") leaves the
user's turn the outcome. A goal with no outcome in its window is no episode (precision
first). Episodes do not overlap: the next search starts after the outcome (or lesson). Same
events -> same episodes.
Every part keeps the tick of its turn, so the episode note links to the turns it came from.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from .events import Event
from .nlp import parse, pipeline
from .openings import opening
from .outcomes import Terms
from .outcomes import outcome as outcome_of
from .parsed_attempts import advice
from .parsed_episodes import Goal, parsed_goal, turn_goal
from .parsed_outcomes import parsed_outcome
from .reactions import judged, plans, reaction, reports, trials
from .task_words import goal_terms, is_goal

WINDOW = 12
LESSON_AFTER = 2


def _rx(*alts: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(alts) + r")\b")


GOAL = _rx(r"i'?m trying to", r"i am trying to", r"i need to", r"i want to", r"how (?:do|can) i",
           r"help me", r"i'?m getting (?:an?|this|the) [\w\s-]{0,30}error", r"i'?m stuck",
           r"i have (?:a|an) (?:problem|issue)", r"(?:isn't|is not|doesn't|won't) work(?:ing)?",
           r"i can'?t get", r"keeps? (?:failing|crashing|breaking)",
           r"(?:is|are) (?:failing|broken|crashing)", r"won'?t (?:build|start|run|compile)",
           r"(?:getting|returns?|throws?|shows?|seeing) (?:an? )?[\w\s-]{0,20}errors?")
# A new request in a later turn ("how do I ...", "I also need to ..."): `_Rules.new_task`.
WANT = _rx(r"i'?m trying to", r"i am trying to", r"i need to", r"i want to",
           r"how (?:do|can) i", r"help me", r"can you")
TRIED = _rx(r"i tried", r"i'?ve tried", r"try", r"i added", r"i changed", r"i ran",
            r"i installed", r"i switched", r"i updated", r"i removed", r"you could",
            r"make sure", r"is missing")
LESSON = _rx(r"lesson", r"next time", r"note for later", r"good to know", r"turns out",
             r"the trick (?:is|was)", r"i learned", r"i reali[sz]ed", r"note to self",
             r"takeaway", r"from now on", r"in future")


def _fold(text: str) -> str:
    return " ".join(text.replace("’", "'").replace("‘", "'").casefold().split())


@dataclass(frozen=True)
class Beat:
    """One beat of an episode (its goal, a step, its outcome or its lesson): which turn
    (tick), who said it, what, which label."""

    tick: int
    speaker: str
    text: str
    label: str  # "goal" | "step" | "tried" | "success" | "failure" | "lesson"


@dataclass(frozen=True)
class Episode:
    """A task-shaped exchange of one session."""

    conversation: str
    session: str
    goal: Beat
    steps: tuple[Beat, ...]
    outcome: Beat
    lesson: Beat | None

    @property
    def ticks(self) -> tuple[int, ...]:
        last = self.lesson.tick if self.lesson else self.outcome.tick
        return tuple(range(self.goal.tick, last + 1))

    @property
    def succeeded(self) -> bool:
        return self.outcome.label == "success"

    def summary(self) -> str:
        """One line: "Goal: ... Tried: ... Outcome (success): ... Lesson: ..."."""
        out = f"Goal: {self.goal.text}"
        tried = [p.text for p in self.steps if p.label == "tried"] or [p.text for p in self.steps]
        if tried:
            out += " Tried: " + " / ".join(tried)
        out += f" Outcome ({self.outcome.label}): {self.outcome.text}"
        if self.lesson:
            out += f" Lesson: {self.lesson.text}"
        return out


class _Rules:
    """The text-only reading (no parse): `task_words` goals, `outcomes` outcomes."""

    attempts = False

    def goal(self, ev: Event) -> Terms | None:
        folded = _fold(ev.text)
        return goal_terms(folded) if GOAL.search(folded) or is_goal(folded) else None

    def outcome(self, ev: Event, goal: Terms, by: str) -> str | None:
        return outcome_of(ev.text, goal if ev.role == "user" else (frozenset(), frozenset()))

    def helped(self, ev: Event, by: str) -> bool:
        return True

    def reacted(self, evs: Sequence[Event], j: int, by: str, parsed: str | None) -> str | None:
        return parsed

    def plans(self, ev: Event) -> bool:
        return False

    def trials(self, ev: Event) -> bool:
        return False

    def opening(self, evs: Sequence[Event], i: int) -> Terms | None:
        return None

    def new_task(self, ev: Event, goal: Terms) -> bool:
        """A want (`WANT`) whose terms share nothing with the goal's."""
        folded = _fold(ev.text)
        if not WANT.search(folded):
            return False
        wanted, problems = goal_terms(folded)
        return not (wanted & goal[0] or problems & goal[1])


class _Parsed:
    """The parsed reading (`parsed_episodes`), on each turn's cached parse (`nlp.parse`)."""

    attempts = True

    def __init__(self, agent: bool, combine: bool) -> None:
        self.agent = agent  # a session with an assistant: instructions are goals too
        # the text rules' goal where the parse finds none: in an agent's session only (the
        # rules' want / trouble patterns fire on small talk between people)
        self.combine = combine and agent

    def goal(self, ev: Event) -> Goal | None:
        """The parse's goal; with `combine`, where the parse finds none but the text rules
        do (`_Rules.goal`), the turn's own anchors (`turn_goal`): the outcome is still read
        by the parse, under its chat guards. Only in a session with an assistant."""
        doc = parse(re.sub(r"\[[^\]]*\]", " ", ev.text))
        if doc is None:
            return None
        found = parsed_goal(doc, instructions=self.agent)
        if found is None and self.combine and (terms := _Rules().goal(ev)) is not None:
            return turn_goal(doc, problem=bool(terms[1]))
        return found

    def outcome(self, ev: Event, goal: Goal, by: str) -> str | None:
        if ev.role != "assistant" and ev.speaker != by:
            return None  # the one with the task reports its outcome (or the assistant)
        doc = parse(ev.text)
        return None if doc is None else parsed_outcome(doc, goal, user=ev.role == "user")

    def opening(self, evs: Sequence[Event], i: int) -> Goal | None:
        """The goal of a session's opening request that neither reading found a goal in
        (`openings.opening`): with `combine`, in an agent's session only."""
        if not self.combine:
            return None
        doc = parse(re.sub(r"\[[^\]]*\]", " ", evs[i].text))
        if doc is None:
            return None
        return opening(evs, i, doc)

    def new_task(self, ev: Event, goal: Goal) -> bool:
        """A want of the user's that shares no anchor (noun, wanted or problem verb) with
        the goal's."""
        doc = parse(re.sub(r"\[[^\]]*\]", " ", ev.text))
        other = None if doc is None else parsed_goal(doc, instructions=self.agent)
        return other is not None and other.kind == "want" and not (
            goal.nouns & other.nouns or goal.wanted & other.wanted
            or goal.problems & other.problems)

    def reacted(self, evs: Sequence[Event], j: int, by: str, parsed: str | None) -> str | None:
        """The verdict on user turn `j` given the parse's (`parsed`) and the assistant's
        reaction to it (`reactions.judged`): where the parse reads no verdict in a report of
        the goal's speaker, the opening of the assistant's next turn ("Great to hear!",
        "I'm sorry, that's frustrating") says how it went, and a clear one overrules it."""
        ev = evs[j]
        if ev.role != "user" or ev.speaker != by or j + 1 >= len(evs):
            return parsed
        nxt = evs[j + 1]
        if nxt.role != "assistant" or nxt.session != ev.session:
            return parsed
        said, answer = parse(ev.text), parse(nxt.text)
        if said is None or answer is None or not reports(said):
            return parsed
        return judged(reaction(answer), parsed)

    def plans(self, ev: Event) -> bool:
        """The turn announces a further act of its speaker (`reactions.plans`)."""
        doc = parse(ev.text)
        return doc is not None and plans(doc)

    def trials(self, ev: Event) -> bool:
        """The turn announces a trial of its speaker's still to come (`reactions.trials`)."""
        doc = parse(ev.text)
        return doc is not None and trials(doc)

    def helped(self, ev: Event, by: str) -> bool:
        """An attempt between goal and outcome: an assistant's turn, or advice from another
        speaker (`parsed_episodes.advice`)."""
        if ev.role == "assistant":
            return True
        if ev.speaker == by:
            return False
        text = ev.text.strip()
        # "Pin the compiler": a capitalised instruction the small model reads as a name
        # is read again with a lower-case first letter
        return any(doc is not None and advice(doc)
                   for doc in (parse(text), parse(text[:1].lower() + text[1:])))


_LESSON_ANY_CASE = re.compile(LESSON.pattern, re.IGNORECASE)


def _before_lesson(ev: Event) -> Event | None:
    """`ev` cut before its lesson's marker, or None when the lesson opens the turn."""
    text = ev.text.replace("’", "'").replace("‘", "'")
    m = _LESSON_ANY_CASE.search(text)
    said = text[: m.start()].strip() if m else ""
    return replace(ev, text=said) if any(c.isalpha() for c in said) else None


def _close(evs: Sequence[Event], i: int, reader: Any,
           goal: Any) -> tuple[int, str, int | None] | None:
    """The outcome turn of the goal at `i`, its label and the lesson turn that ended the
    search (or None): the last verdict on the goal in its window; None without one.

    Every verdict (success or failure) overrides the one before it: a partial success
    followed by a failure of the same task is a failure, failed attempts before a final
    success are steps tried. The search ends at the end of the session or the window, at a
    lesson said after a verdict (the task is wrapped up), and before a user turn with no
    verdict that asks for something new (`reader.new_task`: a want sharing no anchor with
    the goal). An assistant's verdict that only
    repeats the user's ("Sorry it didn't work out" after "no luck") leaves the user's turn
    the outcome. On the parsed path a user's report also takes the assistant's reaction
    (`reader.reacted`), and a plan of the goal's speaker after a failure reopens the task
    (`reader.plans`); a lesson turn's verdict is read before its marker (module docstring).
    `goal` is what `reader` found in the goal turn (its anchors)."""
    verdict: tuple[int, str] | None = None
    helped = not reader.attempts  # the text rules need no attempt before an outcome
    for j in range(i + 1, min(len(evs), i + 1 + WINDOW)):
        ev = evs[j]
        if ev.session != evs[i].session:
            break
        if verdict is not None and LESSON.search(_fold(ev.text)):
            # a lesson after the verdict: the task is wrapped up; a report said before the
            # lesson in the same turn ("uploads save fine now. takeaway: ...") is the last
            # verdict
            said = _before_lesson(ev)
            label = reader.outcome(said, goal, evs[i].speaker) if said is not None else None
            return (j if label else verdict[0], label or verdict[1], j)
        # an assistant's turn is its own attempt ("I pinned the compiler; the build passes")
        helped = helped or ev.role == "assistant"
        label = reader.outcome(ev, goal, evs[i].speaker) if helped else None
        if helped:
            label = reader.reacted(evs, j, evs[i].speaker, label)
        helped = helped or reader.helped(ev, evs[i].speaker)
        if label is not None and not (
                verdict is not None and verdict[1] == label and ev.role == "assistant"
                and evs[verdict[0]].role != "assistant"):
            verdict = (j, label)
        if label is None and verdict is not None and verdict[1] == "failure" and (
                ev.speaker == evs[i].speaker and reader.plans(ev)):
            verdict = None  # a further attempt announced: the failure so far was a step
        if label is None and verdict is not None and ev.speaker == evs[i].speaker and (
                reader.trials(ev)) and not any(e.session == ev.session and e.speaker == ev.speaker
                                               for e in evs[j + 1 : i + 1 + WINDOW]):
            verdict = None  # the user leaves to try it: no result said yet
        if label is None and verdict is not None and ev.speaker == evs[i].speaker and (
                reader.new_task(ev, goal)):
            break  # the same speaker asks for something new: this task ended before it
    return None if verdict is None else (*verdict, None)


def find_episodes(events: Sequence[Event], *, use_nlp: bool = True,
                  combine: bool = True) -> tuple[Episode, ...]:
    """Every episode of `events` (one conversation, tick order), in tick order.

    Goals and outcomes come from each turn's parse (`parsed_episodes`) when the NLP
    pipeline is installed and `use_nlp`, else from the text rules (`task_words`,
    `outcomes`). `combine` (parsed path, agent sessions): the rules' goal where the parse
    finds none (module docstring)."""
    agent = any(e.role == "assistant" for e in events)
    reader: Any = _Parsed(agent, combine) if use_nlp and pipeline() is not None else _Rules()
    evs = sorted(events, key=lambda e: e.tick)
    pos = {e.tick: n for n, e in enumerate(evs)}
    out: list[Episode] = []
    i = 0
    while i < len(evs):
        g = evs[i]
        goal = reader.goal(g) if g.role == "user" else None
        if goal is None and g.role == "user" and (opened := reader.opening(evs, i)) is not None:
            # an opening request; a greeting or a story before one the reading finds (the
            # session's next user turn) leaves the goal to that turn when it closes
            k = next((n for n in range(i + 1, len(evs)) if evs[n].session == g.session
                      and evs[n].role == "user"), i)
            later = reader.goal(evs[k]) if k > i else None
            goal = None if later is not None and _close(evs, k, reader, later) else opened
        if goal is None:
            i += 1
            continue
        end = _close(evs, i, reader, goal)
        if end is None:
            i += 1
            continue
        j, label, told = end
        steps = tuple(Beat(e.tick, e.speaker, e.text,
                           "tried" if TRIED.search(_fold(e.text)) or outcome_of(e.text)
                           else "step")
                      for e in evs[i + 1 : j])
        lesson = None
        # the lesson: in the outcome turn, or up to the one that ended the search (else
        # LESSON_AFTER turns on)
        stop = told + 1 if told is not None else j + 1 + LESSON_AFTER
        for k in range(j, min(len(evs), stop)):
            if evs[k].session == g.session and LESSON.search(_fold(evs[k].text)):
                lesson = Beat(evs[k].tick, evs[k].speaker, evs[k].text, "lesson")
                break
        outcome = Beat(evs[j].tick, evs[j].speaker, evs[j].text, label)
        out.append(Episode(g.conversation, g.session, Beat(g.tick, g.speaker, g.text, "goal"),
                           steps, outcome, lesson))
        i = pos[lesson.tick if lesson else outcome.tick] + 1
    return tuple(out)
