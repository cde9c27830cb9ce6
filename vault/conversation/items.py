"""The context view of one event: what depiction and what-came-next read of a turn.

An `Item` is built from an ingested `Event` (`item_of`) or from a turn note in the vault
(`layout.item_from_note`), so conversation context works on both alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from .events import Event
from .formats import naive_utc


@dataclass(frozen=True)
class Item:
    """What context needs of one event (built from an Event or from a turn note)."""

    tick: int
    conversation: str
    session: str
    turn_id: str
    speaker: str
    when: datetime
    text: str
    entities: tuple[str, ...]  # non-speaker row keys
    dates: tuple[tuple[str, date, date], ...]  # (expr, start, end) anchored expressions
    omega: float = 0.0
    note: str = ""
    kind: str = "turn"  # "turn" (L0) | "episode" | "working" (live scratch) | "note" (passage)

    @property
    def instant(self) -> datetime:
        """`when` to order items by: naive UTC (`formats.naive_utc`)."""
        return naive_utc(self.when)

    def render(self, *, labels: bool = True) -> str:
        """The line shown to the model."""
        if self.kind == "note":  # an ordinary note's passage: its date and path
            return (f"[{self.when.date().isoformat()}] {self.note}: {self.text}" if labels
                    else f"{self.note}: {self.text}")
        who = self.speaker if self.kind == "turn" else f"{self.kind.capitalize()} ({self.speaker})"
        if not labels:
            return f"{who}: {self.text}"
        # the date by isoformat: strftime's %Y is "1" for the year 1 on glibc, "0001" on
        # others (CONV5): the same turn must read the same everywhere
        line = f"[{self.when.date().isoformat()} {self.when:%H:%M}] {who}: {self.text}"
        # a date the text already writes as its label ("2026-03-02 = 2026-03-02") says nothing
        said = [f"{e} = {_label(s, t)}" for e, s, t in self.dates if e.strip() != _label(s, t)]
        if said:
            line += " (" + "; ".join(said) + ")"
        return line


def item_of(event: Event, note: str = "") -> Item:
    """The context view of an Event."""
    return Item(
        event.tick,
        event.conversation,
        event.session,
        event.turn_id,
        event.speaker,
        event.when,
        event.text,
        event.non_speaker_keys(),
        tuple((r.expr, r.start, r.end) for r in event.time_refs),
        event.survival.omega,
        note,
    )


def _label(start: date, end: date) -> str:
    return start.isoformat() if start == end else f"{start.isoformat()}..{end.isoformat()}"
