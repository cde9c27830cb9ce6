"""L2 facts and preferences from a conversation's statements (4D seed, tier L1 -> L2 -> L3).

Statements (`statements.extract_statements`) of the turns said by a user (role "user"; the
assistant's and tools' turns are not evidence about anyone) are folded, in the order they were
said (the turn's time; ties: tick, the file order), into a fact book keyed by (subject, key,
value), so a repeated statement confirms the same fact:

- an observation's own confidence c_obs is 0.7 for a first-person statement ("I live in
  Paris", said by its subject) and 0.5 for a statement about someone or something else ("Dan
  reports to Maria") and for a commitment ("I will call the plumber");
- a confirmation combines by noisy-or, c <- 1 - (1 - c)(1 - c_obs) (`lifecycle.observe`), so
  a first-person fact reads 0.7, 0.91, 0.973 after 1, 2, 3 confirmations: three sightings in
  three sessions over >= 30 days promote it to L3 (`lifecycle.promotable`); a commitment needs
  five;
- a session confirms a fact at most once (saying it again in the same sitting is not new
  evidence: the repeats are listed as evidence but do not raise the confidence or the count);
  first observed / last confirmed are the turns' anchored dates (the conversation's clock,
  never the wall clock);
- for a single-valued key (`statements.functional`: lives_in, works_at, reports_to,
  opinion:X, favourite:T, some roles) a different value is a conflict: both facts are kept side
  by side with sources, dates and confidences, and the value said later discounts the other,
  c_other <- c_other · (1 - c_obs) (it is weakened, never overwritten or deleted); a later
  re-confirmation raises it again by noisy-or. "Later" is by the turns' times, not by where
  they stand in the file (CONV6: a file listing its 2024 session before its 2023 one made the
  2023 value the newest, weakening the 2024 one; the same turns in date order gave the
  opposite).

`fact_from_frontmatter` reads a fact back from its note, for the archive rule.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import Any

from .events import Event
from .formats import naive_utc
from .informative import informative_only
from .layout import as_date, turn_path
from .lifecycle import Fact, observe
from .nlp import parse
from .parsed_attributes import extract_attributes
from .parsed_plans import extract_plans
from .parsed_possessions import extract_possessions
from .parsed_preferences import extract_preferences
from .parsed_statements import extract_parsed_statements
from .parsed_values import extract_values
from .statements import Statement, extract_statements, functional

FIRST_PERSON_CONFIDENCE = 0.7
OTHER_CONFIDENCE = 0.5
COMMITMENT_CONFIDENCE = 0.5
_REL_WORDS = {
    "works_on": "works on", "owns": "owns", "uses": "uses", "depends_on": "depends on",
    "reports_to": "reports to", "affected_by": "is affected by", "supersedes": "supersedes",
    "has": "has",
}


@dataclass(frozen=True)
class Evidence:
    """One turn that stated a fact."""

    when: date
    tick: int
    session: str
    turn_id: str
    path: str
    instant: datetime  # the turn's time, naive UTC: "said later" is by this, then tick


@dataclass(frozen=True)
class FactRecord:
    """A fact with what the note shows besides the numbers: kind, relation, wording, evidence."""

    fact: Fact
    kind: str
    relation: str | None
    said: str
    evidence: tuple[Evidence, ...]

    @property
    def triple(self) -> tuple[str, str, str]:
        return (self.fact.subject, self.fact.key, self.fact.value)

    @property
    def sentence(self) -> str:
        return sentence(self.fact.subject, self.fact.key, self.fact.value)


def sentence(subject: str, key: str, value: str) -> str:
    """The fact as a plain sentence (also the note's title)."""
    pred, _, topic = key.partition(":")
    if pred == "opinion":
        return f"{subject} {value} {topic}"
    if pred == "favourite":
        return f"{subject}'s favourite {topic} is {value}"
    if pred == "role":
        return f"{subject}'s {topic} is {value}"
    if pred == "commitment":
        return f"{subject} will {value}"
    if pred == "is_a":
        return f"{subject} is a {value}"
    if pred in ("is", "is_not"):  # a parsed copula: "is_not:on" -> "tim is not on team"
        return f"{subject} {pred.replace('_', ' ')} {topic.replace('_', ' ')} {value}"
    if pred == "plans":  # a parsed intention: "plans:adopt" -> "rosa plans to adopt dog"
        return f"{subject} plans to {topic.replace('_', ' ')} {value}"
    if pred == "did":  # a parsed act: "did:go_to" -> "nate go to fair"
        return f"{subject} {topic.replace('_', ' ')} {value}"
    words = _REL_WORDS.get(pred) or pred.replace("_", " ")
    return f"{subject} {words} {value}"


def observation_confidence(st: Statement) -> float:
    """c_obs of one statement (module docstring)."""
    if st.kind == "commitment":
        return COMMITMENT_CONFIDENCE
    return FIRST_PERSON_CONFIDENCE if st.first_person else OTHER_CONFIDENCE


def turn_statements(text: str, speaker: str, speakers: Sequence[str], *,
                    use_nlp: bool = True) -> tuple[Statement, ...]:
    """The pattern table's statements of a turn, then (with the NLP pipeline installed and
    `use_nlp`) the parse's subject–verb–object ones (`parsed_statements`) and what the
    speaker says they have (`parsed_possessions`: "my sister" -> has sister) and plans
    (`parsed_plans`: "I'm hoping to open a bakery" -> plans:open bakery) and what they value
    or count among favourites (`parsed_preferences`) or say does them good or enjoy
    (`parsed_values`), then copular
    facts and the addressee's acts (`parsed_attributes`) not already said; statements of a
    trivial kind (`informative`: "your empathy", "had a letdown", "I will check them out")
    are dropped."""
    found = extract_statements(text, speaker, speakers)
    doc = parse(text) if use_nlp else None
    if doc is None:
        return informative_only(found)
    others = [s for s in speakers if s != speaker]
    addressee = others[0] if len(others) == 1 else ""
    found = (found + extract_parsed_statements(doc, speaker, addressee)
             + extract_possessions(doc, speaker, addressee) + extract_plans(doc, speaker, addressee)
             + extract_preferences(doc, speaker, addressee)
             + extract_values(doc, speaker, addressee))
    said = {(s.subject, s.value) for s in found} | {
        (s.subject, s.key.partition(":")[2]) for s in found}  # "opinion:fashion": said
    return informative_only(found + tuple(a for a in extract_attributes(doc, speaker, addressee)
                                          if (a.subject, a.value) not in said), doc)


def build_facts(events: Sequence[Event], *, use_nlp: bool = True) -> tuple[FactRecord, ...]:
    """The fact book of one conversation's events, sorted by (subject, key, value)."""
    speakers = tuple(dict.fromkeys(e.speaker for e in events))
    book: tuple[Fact, ...] = ()
    first: dict[tuple[str, str, str], Statement] = {}
    evidence: dict[tuple[str, str, str], list[Evidence]] = {}
    seen: set[tuple[str, tuple[str, str, str]]] = set()  # (session, triple) already counted
    for ev in sorted(events, key=lambda e: (naive_utc(e.when), e.tick)):
        if ev.role != "user":
            continue
        in_turn: set[tuple[str, str, str]] = set()
        for st in turn_statements(ev.text, ev.speaker, speakers, use_nlp=use_nlp):
            triple = (st.subject, st.key, st.value)
            if triple in in_turn:
                continue
            in_turn.add(triple)
            path = turn_path(ev.conversation, ev.session, ev.turn_id)
            if (ev.session, triple) in seen:
                evidence[triple].append(
                    Evidence(ev.when.date(), ev.tick, ev.session, ev.turn_id, path,
                             naive_utc(ev.when)))
                continue
            seen.add((ev.session, triple))
            c_obs = observation_confidence(st)
            if functional(st.key):
                book = tuple(
                    replace(f, confidence=f.confidence * (1.0 - c_obs))
                    if (f.subject, f.key) == (st.subject, st.key) and f.value != st.value
                    else f
                    for f in book
                )
            book = observe(book, st.subject, st.key, st.value, confidence=c_obs,
                           when=ev.when.date(), session=ev.session, source=path)
            first.setdefault(triple, st)
            evidence.setdefault(triple, []).append(
                Evidence(ev.when.date(), ev.tick, ev.session, ev.turn_id, path,
                         naive_utc(ev.when)))
    return tuple(
        FactRecord(f, first[t].kind, first[t].relation, first[t].said, tuple(evidence[t]))
        for f in book
        for t in [(f.subject, f.key, f.value)]
    )


def conflict_groups(records: Sequence[FactRecord]) -> dict[tuple[str, str], list[FactRecord]]:
    """(subject, key) -> its records, for single-valued keys with two or more values."""
    groups: dict[tuple[str, str], list[FactRecord]] = {}
    for r in records:
        if functional(r.fact.key):
            groups.setdefault((r.fact.subject, r.fact.key), []).append(r)
    return {k: v for k, v in sorted(groups.items()) if len(v) > 1}


def latest(group: Sequence[FactRecord]) -> FactRecord:
    """The most recently stated value of a conflict (by the time of its last statement, then
    its tick; ties: confidence, value)."""
    return max(group, key=lambda r: (r.evidence[-1].instant, r.evidence[-1].tick,
                                     r.fact.confidence, r.fact.value))


def fact_from_frontmatter(fm: Mapping[str, Any]) -> Fact | None:
    """The Fact a fact note's frontmatter describes; None if it is not a readable fact note."""
    if fm.get("tier") not in ("L2", "L3") or "key" not in fm:
        return None
    first, last = as_date(fm.get("first_observed")), as_date(fm.get("last_confirmed"))
    conf, count = fm.get("confidence"), fm.get("confirmations")
    if first is None or last is None or not isinstance(conf, (int, float)):
        return None
    if not isinstance(count, int) or isinstance(count, bool):
        return None
    sessions = fm.get("sessions") or []
    return Fact(
        str(fm.get("subject", "")), str(fm["key"]), str(fm.get("value", "")), float(conf),
        first, last, count, tuple(str(s) for s in sessions) if isinstance(sessions, list) else (),
        (), tier=str(fm["tier"]),
    )
