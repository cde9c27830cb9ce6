"""A full disk after the fact: steps that follow a change that landed, and may fail only
as warnings (issue 27: "a write that landed is never reported as failed").

A note's rename is the write; what follows it (its index rows, the learning ledger's event)
needs room on the disk too. When that room is gone the change still happened, so the call
returns it, with the warning, and the next sync that has room indexes the note (its stat
differs from the index's). Reads and searches log a learning event the same way: a full disk
loses that event, never the answer. Warnings go to the `rmh.vault` logger (stderr when
nothing else is configured: `logging`'s last resort).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace

from .errors import DiskFull
from .full_disk import is_disk_full
from .notes.hashing import content_hash
from .notes.links import Resolver
from .notes.records import NoteRecord, link_infos, record_of
from .storage.store import FileStat
from .storage.sync import note_row

log = logging.getLogger("rmh.vault")


def tolerate_full(step: Callable[[], object], what: str, where: str) -> str | None:
    """Run `step`; on a full disk log and return the warning "`what`: disk full ..." (`where`:
    the file that had no room), else None. Any other error propagates."""
    try:
        step()
    except Exception as exc:
        if not is_disk_full(exc):
            raise
        message = f"{what}: {DiskFull(where)}"
        log.warning("%s", message)
        return message
    return None


def landed(resolver: Resolver, stat: FileStat, text: str, note_id: int | None,
           warning: str) -> NoteRecord:
    """The record of a write whose file is in place but not indexed: parsed from the text
    written (id 0 for a new note, which has none yet), its links resolved against the
    current names, carrying `warning`."""
    row, links = note_row(note_id or 0, stat, text, content_hash(text))
    infos = link_infos([(ln, resolver.resolve(ln, stat.path)) for ln in links],
                       resolver.id_path)
    return replace(record_of(row, text, infos), warning=warning)
