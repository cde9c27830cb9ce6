"""A learned.sqlite row that does not decode: what it raises, and the typed error of an event.

The derived rows (note, session, qterm, meta...) are a cache of the event log: one that does not
decode (text in a REAL column, JSON cut short: a hand edit, a bad tool) raises one of
`ROW_DAMAGE` while loading, and the ledger rewrites every derived row from the log
(ledger.py `_sync_state`, ledger_sql.repair). Before session 30 every rmh process that opened
the ledger (`rmh search` included, and `rmh replay`, the remedy) failed with a traceback
(docs/measurements/session30/LROWS_damaged.py.txt). A logged event that does not decode or
fold cannot be rebuilt from anything: `damaged_event` is the LedgerError naming its seq.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..errors import LedgerError
from .state import Event, NoteState

__all__ = ["ROW_DAMAGE", "damaged_event", "event_of", "note_of"]

ROW_DAMAGE = (ValueError, TypeError, KeyError, IndexError, AttributeError)


def damaged_event(seq: int, exc: BaseException) -> LedgerError:
    """The typed error of logged event `seq` that does not decode or fold (`exc`: why)."""
    return LedgerError(f"learning event seq {seq} is damaged ({type(exc).__name__}: {exc}); "
                       "the log cannot be replayed past it")


_INT_COLS = frozenset({"q_updates", "accesses", "sessions", "shown", "seen", "recalled"})


def event_of(row: tuple[Any, ...]) -> Event:
    """A logged event from its row (seq, t, kind, session, note, data); damaged_event if it
    does not decode."""
    seq, t, kind, session, note, data = row
    try:
        payload = json.loads(data)
        if not isinstance(payload, dict):
            raise TypeError(f"payload {type(payload).__name__}, not an object")
        return Event(int(seq), float(t), str(kind), session, None if note is None else int(note),
                     payload)
    except ROW_DAMAGE as exc:
        raise damaged_event(int(seq), exc) from exc


def note_of(cols: Sequence[str], values: Sequence[Any], terms: str) -> NoteState:
    """A note's row as its state, every value typed (one of ROW_DAMAGE when one is not)."""
    typed: list[Any] = [v if c == "archived_at" and v is None else
                        int(v) if c in _INT_COLS else float(v)
                        for c, v in zip(cols, values, strict=True)]
    ns = NoteState(*typed)
    bags = json.loads(terms)
    ns.use_terms, ns.skip_terms = _bag(bags, "u"), _bag(bags, "s")
    ns.use_words, ns.use_queries = _bag(bags, "w"), _bag(bags, "a")
    return ns


def _bag(bags: dict[str, Any], key: str) -> dict[str, int]:
    return {str(k): int(v) for k, v in dict(bags.get(key, {})).items()}
