"""What came next (engram's temporal reinstatement): the events that follow an event.

"What happened after the pottery class?" is answered by finding the event the question is
about (the best-scoring turn, as context scores it) and returning the turns that follow it in
time (the turn's time as naive UTC, then tick: the file order), within the same conversation
(optionally the same session). Deterministic. (CONV6: by tick alone, a file listing its
sessions newest first answered "what came after the February class?" with January's turns.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .context import EventIndex, Weights, score_parts
from .items import Item
from .passages import vault_turns

if TYPE_CHECKING:
    from ..core import Vault


@dataclass(frozen=True)
class Next:
    """The anchor event and the events after it."""

    anchor: Item | None
    following: tuple[Item, ...]

    def to_json(self) -> dict[str, Any]:
        def one(it: Item) -> dict[str, Any]:
            return {"note": it.note, "turn": it.turn_id, "speaker": it.speaker,
                    "date": it.when.isoformat(), "text": it.text}
        return {"anchor": one(self.anchor) if self.anchor else None,
                "following": [one(it) for it in self.following]}


def following(items: Sequence[Item], anchor: Item, n: int = 3,
              same_session: bool = False) -> tuple[Item, ...]:
    """The n events after `anchor` in its conversation, in time order (ties: tick)."""
    here = (anchor.instant, anchor.tick)
    later = sorted(
        (it for it in items if it.conversation == anchor.conversation
         and (it.instant, it.tick) > here
         and (not same_session or it.session == anchor.session)),
        key=lambda it: (it.instant, it.tick),
    )
    return tuple(later[:n])


def what_came_next(items: Sequence[Item], query: str, lexical: npt.ArrayLike, n: int = 3,
                   same_session: bool = False) -> Next:
    """Anchor = best-scoring event for `query` (ties: earliest); then `following`."""
    if not items:
        return Next(None, ())
    s = score_parts(EventIndex.build(items), query, lexical).combine(Weights())
    if float(np.max(s)) <= 0:
        return Next(None, ())
    best = min(range(len(items)), key=lambda i: (-s[i], i))
    return Next(items[best], following(items, items[best], n, same_session))


def next_in_vault(vault: Vault, query: str, n: int = 3, *, conversation: str | None = None,
                  same_session: bool = False) -> Next:
    """`what_came_next` over the vault's turn notes, lex from `vault.search`."""
    items, lex, _ = vault_turns(vault, query, 50, conversation)
    return what_came_next(items, query, lex, n, same_session)
