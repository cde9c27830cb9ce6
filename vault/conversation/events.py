"""A conversation becomes a sequence of events: NDM's columns, with both clocks.

Each turn is one event with a tick (0, 1, 2, ... over the whole conversation, in file order),
a date anchor (the turn's own datetime), its entities (the speaker first, kind "speaker"; then
the caller's entities, or the extracted ones), its resolved date expressions, the counted
references of its unclear words (against the three events before it) and its DMF survival Ω.
Deterministic: the same conversation gives the same events.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from ..cancel import checkpoint
from ..notes.clocks import TimeRef, resolve
from .entities import (
    Entity,
    date_entities,
    dedupe,
    extract,
    name_lexicon,
    normalise,
    supplied,
)
from .formats import Conversation
from .incidence import Incidence
from .nlp import parse
from .parsed_entities import extract_parsed
from .references import Reference, resolve_references
from .survival import Survival, score


@dataclass(frozen=True)
class Event:
    """One turn as an event (NDM column)."""

    tick: int
    conversation: str
    session: str
    turn_id: str
    speaker: str
    role: str
    when: datetime
    text: str
    entities: tuple[Entity, ...]
    time_refs: tuple[TimeRef, ...]
    references: tuple[Reference, ...]
    survival: Survival

    def non_speaker_keys(self) -> tuple[str, ...]:
        return tuple(e.key for e in self.entities if e.kind != "speaker")


def _addressee(speakers: Sequence[str], speaker: str, previous: str) -> str:
    others = [s for s in speakers if s != speaker]
    if len(others) == 1:
        return others[0]
    return previous if previous != speaker else ""


def build_events(conv: Conversation, *, use_nlp: bool = True) -> tuple[Event, ...]:
    """Every turn of `conv` as an Event, in tick order.

    Entities not supplied by the caller come from the turn's parse when the NLP pipeline is
    installed and `use_nlp` (`parsed_entities`), else from the rules (`entities.extract`).
    """
    speakers = conv.speakers
    turns = conv.turns()
    given = [n for t in turns for n in (t.entities or ())]
    lexicon = name_lexicon((t.text for t in turns), speakers, given)
    events: list[Event] = []
    history: list[tuple[int, tuple[Entity, ...]]] = []
    previous = ""
    tick = 0
    for session in conv.sessions:
        for turn in session.turns:
            checkpoint()  # a parse is the slow step of an ingest (ingest.py: a stop)
            anchor = turn.when.date()
            refs = resolve(turn.text, anchor)
            addressee = _addressee(speakers, turn.speaker, previous)
            own = Entity(normalise(turn.speaker), turn.speaker, "speaker")
            if turn.entities is not None:
                found = supplied(
                    turn.entities, speaker=turn.speaker, addressee=addressee, speakers=speakers
                ) + date_entities(refs)
            elif use_nlp and (doc := parse(turn.text)) is not None:
                found = extract_parsed(doc, speaker=turn.speaker, addressee=addressee,
                                       speakers=speakers, refs=refs)
            else:
                found = extract(
                    turn.text,
                    speaker=turn.speaker,
                    addressee=addressee,
                    lexicon=lexicon,
                    anchor=anchor,
                    speakers=speakers,
                    refs=refs,
                )
            entities = dedupe((own, *found))
            references = resolve_references(turn.text, history)
            events.append(
                Event(
                    tick,
                    conv.conversation_id,
                    session.session_id,
                    turn.turn_id,
                    turn.speaker,
                    turn.role,
                    turn.when,
                    turn.text,
                    entities,
                    refs,
                    references,
                    score(turn.text, entities, refs, turn.role),
                )
            )
            history.append((tick, entities))
            previous = turn.speaker
            tick += 1
    return tuple(events)


def incidence(events: Sequence[Event]) -> Incidence:
    """B over these events (column t = events[t])."""
    return Incidence.build([e.entities for e in events])
