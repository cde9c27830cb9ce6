"""A stop inside one conversation's writes (conversation/ingest.py) takes back the notes of that
conversation written so far, so that a stopped ingest leaves each conversation whole or not
at all, as a kill does (the journal finishes it). Before, the turn notes written stayed and
their links to the session, entity and later turn notes not yet written dangled until the
next ingest (STORE6, session 32).

Each note is put back as it was: a note the ingest created is removed, one it replaced gets
the bytes read right before the ingest replaced them. A note another program changed since
the ingest wrote it is left as that program made it (the same guard as every write; a created
note is renamed aside before its bytes are checked, so a save landing between the check and
the removal is put back, never removed: `Store.erase`'s `expected_hash`). A kill midway leaves
the writes' journal, whose replay then writes the whole conversation."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import EditConflict, NoteExists, NoteNotFound, NotText, PathRefused, PermissionDenied
from .generated import Record

if TYPE_CHECKING:
    from ..core import Vault

Put = Callable[[str, str, "str | None", bool], None]


@dataclass(frozen=True)
class Landed:
    """One note the ingest wrote: its path, whether it created it, the text it replaced (None:
    none, or none rmh could read), and the sha256 of the bytes it wrote."""

    path: str
    created: bool
    before: str | None
    written: str
    gen: str  # its generated path (`follow`: where the ingest put it)
    marked: str  # what the record keeps of the bytes written (`generated.mark`)


def before_write(vault: Vault, path: str, existed: bool) -> str | None:
    """The text at `path` that a write is about to replace (None: it creates the note, or the
    file is gone or no text: the write's own guard then refuses it)."""
    if not existed:
        return None
    try:
        return vault.store.read_text(path)
    except (NoteNotFound, NotText):
        return None


def take_back(vault: Vault, put: Put, landed: Sequence[Landed], record: Record,
              before: Mapping[str, tuple[str, ...] | None],
              planned: Mapping[str, tuple[str, ...] | None],
              origin: Mapping[str, str]) -> list[str]:
    """Put every note of `landed` back as it was, last written first, under the write lock;
    returns the paths put back (a note changed since by another program is not).

    First the `record`, saved: the notes `planned` and not written get their hashes before
    back, and those of `landed` (their hashes `before` by path; `origin`: path -> generated
    path) what `Record.plan` made of them. A kill from then on leaves no note the ingest
    created taken for one the user deleted (which the next ingest would leave out), nor one it
    replaced taken for the user's edit; the caller restores the rest after. Called with no
    `landed` when the writes end on any other error, for the record alone."""
    back: list[str] = []
    with vault.locked():
        for path, hashes in planned.items():
            record.restore(origin.get(path, path), hashes)
        for note in landed:
            record.replan(note.gen, before[note.path], note.marked)
        record.save()
        for note in reversed(landed):
            try:
                if note.created:  # only its bytes: an editor's save since is put back
                    vault.store.erase(note.path, expected_hash=note.written)
                elif not note.created and note.before is not None:
                    put(note.path, note.before, note.written, True)
                else:
                    continue
            except (EditConflict, NoteExists, NoteNotFound, PathRefused, PermissionDenied):
                continue  # (the note it failed at: a folder there, its folder not writable)
            back.append(note.path)
    return back
