"""Re-parse on a parser change: the index records which version of `notes.note.parse` made
its rows, and a full sync under another version parses every note again from its file.

Sync reads a file only when its stat changed, and parses it only when its content hash
changed (storage/sync.py), so without this a vault indexed by an older parser would keep that
parser's rows until each note is edited (session 21: `[x](Some%20Note)` became a link, and
an existing vault saw none of them). The index's `meta` holds `parse` = `notes.note.PARSE`
of the rows; an index without it (made before it was kept) counts as version 1.

A full sync that finds an older version (`stale`) reads every note whose stat did not change
too, parses it, and compares the parsed columns (frontmatter, its error, aliases, tags, body)
and the links with the stored ones (`same_parse`, two point queries per note): only a note
whose rows differ is written and reported `updated`, so the derived stores follow the few
notes the new parser reads differently, and nothing else moves. The stable id, the path,
the title and the content hash are kept, and the dense store keys a note's vectors by title,
speaker and content hash (retrieval/dense_store.py), so no vector is computed again. The
version is written in the same transaction as the re-parsed rows (`record`): a process killed
before the commit leaves the old version and the old rows (the next sync does it all again),
one killed after leaves the new ones. Two processes opening an old index at once may both
read every note, but the second finds the version current when it takes the write lock and
syncs again from the new rows (sync's `_Stale`): the rows are written once, neither errs.
A note whose file cannot be read during the re-parse (permission denied, an I/O error) keeps
the old parser's rows, and its stat may never change: its id is recorded as owed (`OWED`),
and each later full sync reads just the owed notes again until it can parse them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from ..notes.note import PARSE
from ..notes.rows import LinkRow, NoteRow
from .index import Index
from .row_codec import NOTE_FIELDS, encode_note

KEY = "parse"
OWED = "parse_owed"  # the ids of notes a re-parse could not read (JSON list)
PREVIOUS = "1"  # what an index without the key was parsed by
# encode_note's columns from `frontmatter` on: what the parser makes of the text
_PARSED = NOTE_FIELDS.index("frontmatter")


def version(index: Index) -> str:
    """The parse version the index's rows were made by."""
    return index.meta(KEY) or PREVIOUS


def stale(index: Index) -> bool:
    """Whether the index's rows were parsed by an older parser than this rmh's (or by one
    whose version is unreadable). Rows a newer rmh parsed are left as they are: re-parsing
    them with this older parser would lose what it reads, and two versions sharing a vault
    would re-read every note each time the other opened it."""
    return _stored(index) < PARSE


def _stored(index: Index) -> int:
    """The stored version as a number: 0 (older than any) when it is no ASCII digits that
    this rmh wrote (str.isdigit alone takes "²", which int refuses)."""
    stored = version(index)
    return int(stored) if stored.isascii() and stored.isdigit() else 0


def owed(index: Index) -> frozenset[int]:
    """The notes still owed a re-parse: their file could not be read when it ran. None for
    this rmh where a newer parser made the rows: those notes are that parser's to read (this
    one would parse them down, and record its older version over the newer one)."""
    if _stored(index) > PARSE:
        return frozenset()
    return frozenset(int(i) for i in json.loads(index.meta(OWED) or "[]"))


def record(index: Index, unread: Iterable[int] = ()) -> None:
    """Record this rmh's parse version and the notes it could not read, which the next full
    syncs read again until they can (inside the transaction that writes its rows)."""
    index.set_meta(KEY, str(PARSE))
    index.set_meta(OWED, json.dumps(sorted(unread)))


def same_parse(index: Index, row: NoteRow, links: Sequence[LinkRow]) -> bool:
    """Whether note `row.id` is stored with these parsed columns and links."""
    stored = index.note(row.id)
    return (stored is not None
            and encode_note(stored)[_PARSED:] == encode_note(row)[_PARSED:]
            and index.links_of(row.id) == list(links))
