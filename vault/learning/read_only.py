"""The learned state of a vault this process may not write (vault ReadOnlyVault): read from
`learned.sqlite` as its owner left it, so searches rank as the owner's do, and nothing
recorded (`ReadOnlyUsage`: every usage fact is dropped; an erasure is refused).

`open_read_only_ledger` gives None (the caller ranks learning-free, saying so) when the file cannot
be read as this rmh derives it: a schema or learning version other than ours (only a writer
may migrate or rebuild it), or a file it cannot open at all."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ..errors import IndexUnusable, ReadOnlyVault
from ..storage.held_sqlite import connect_held, held_folder
from ..storage.index_ro import read_only_connection
from ..storage.linkgraph import Adjacency
from . import ledger_sql as sql
from .formulas import LearningParams, stamp_of
from .ledger import Ledger
from .topic import NO_HELD, Held
from .usage import NO_LINKS, Learned


def open_read_only_ledger(path: Path, *, clock: Callable[[], float],
                   params: LearningParams | None = None) -> ReadOnlyUsage | None:
    """The ledger at `path` read only (module docstring), or None when it cannot serve."""
    params = params or LearningParams()
    try:
        conn = read_only_connection(path)
    except IndexUnusable:
        return None
    try:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version != sql.schema_version() or sql.get_meta(conn, "stamp") != stamp_of(params):
            conn.close()
            return None
        return ReadOnlyUsage(Ledger(conn, clock, params))
    except sqlite3.DatabaseError:
        conn.close()
        return None


class ReadOnlyUsage:
    """A `UsageRecorder` over a read-only ledger: learned state in, no usage out."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        ledger.read_only = True  # whoever closes it (`rmh learning`...) never checkpoints

    def on_search(self, session: str | None, query: str,
                  shown: Sequence[tuple[int, int, float]], graph: Adjacency = NO_LINKS) -> None:
        return None

    def on_read(self, session: str | None, note_id: int, graph: Adjacency = NO_LINKS) -> None:
        return None

    def on_write(self, session: str | None, note_id: int, created: bool,
                 linked_ids: Sequence[int], graph: Adjacency = NO_LINKS) -> None:
        return None

    def on_delete(self, note_id: int) -> None:
        return None

    def redact(self, ids: Sequence[int], needles: Sequence[str]) -> dict[str, int]:
        raise ReadOnlyVault("learned.sqlite")

    def learned(self, ids: Sequence[int], as_of: float | None = None,
                query: str | None = None, held: Held = NO_HELD) -> Learned:
        return self.ledger.learned(ids, as_of, query, held)

    def now(self) -> float:
        return self.ledger.now()

    def archived(self, ids: Sequence[int]) -> npt.NDArray[np.bool_]:
        return self.ledger.archived(ids)

    def close(self) -> None:
        """Close the connection (no checkpoint: this process may not write)."""
        self.ledger.close(checkpoint=False)


def highest_note_id(path: Path) -> int:
    """The highest note id the learning log at `path` holds anything about (events, derived
    rows, notes it knows are gone); 0 when there is none or the file cannot be read. A new
    index hands out ids above it (storage/id_floor.py), so what was learned about the notes of
    a deleted index is never read as another note's. Ids from `ID_CEILING` up are not counted:
    no index counting up from below it reaches them (2**62 notes), so they name no note, and a
    damaged or edited log holding one near 2**63 would leave a rebuilt index no id to hand out
    (SQLite's AUTOINCREMENT fails as "database or disk is full")."""
    if not path.is_file():
        return 0
    held = held_folder(path)  # the held `.rmh/`: never the file a swapped-in folder has
    try:  # (STORE13: `resolve` gave SQLite the name of that moment)
        conn = (sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True) if held is None
                else connect_held(held, path, {}, mode="ro"))
    except sqlite3.DatabaseError:
        return 0
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        asked = [f"SELECT MAX({col}) FROM {table} WHERE {col} < ?" for table, col in _NOTE_COLUMNS
                 if table in tables]
        found = [conn.execute(q, (ID_CEILING,)).fetchone()[0] for q in asked]
        return max([int(v) for v in found if isinstance(v, int)], default=0)
    except sqlite3.DatabaseError:
        return 0
    finally:
        conn.close()


ID_CEILING = 2**62  # note ids a log may hold that no index will reach (`highest_note_id`)
# every column of the ledger (ledger_sql.py) that holds a note id
_NOTE_COLUMNS = (("events", "note"), ("note", "id"), ("gone", "note"), ("pair", "a"),
                 ("pair", "b"), ("note_session", "note"))
