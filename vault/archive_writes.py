"""Archives in the learning ledger and note writes made as one operation: all or none after a
kill (`rmh conversation end-session --apply` promotes some working notes, a frontmatter
rewrite each, and archives the rest, a ledger flag each).

Under the vault's write lock, every planned write is checked against the hash its caller
read (EditConflict, nothing changed, when one differs); then the plan (storage/intent_writes.py
`ArchiveWritesIntent`: each write's path, old hash and new text; each archive's note id and
reason; the time) is recorded in the intent journal, fsynced, before the first change. The
archives are made in one ledger transaction (`Ledger.archive_all`), then the writes (each
guarded by its old hash), then the intent is removed. A process killed anywhere in between
leaves the intent; the next process that opens the vault (`Vault.open`) or takes its write
lock finishes it the same way: the archives not made yet (one transaction; at the plan's
time, no clock read), each write still at its old hash (one an editor changed since is left
as it is and reported in `doctor`'s intents, as a writes intent's). The storage journal
leaves these intents here: finishing them needs the ledger, opened from `.rmh/` when the
process has none of its own.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Mapping, Sequence

from .errors import EditConflict, VaultError
from .learning.ledger import LEDGER_FILE, Ledger
from .storage.intent_writes import (
    ArchiveWritesIntent,
    Outcome,
    Write,
    WritesIntent,
    apply_writes,
    file_hash,
)
from .storage.intents import Journal
from .storage.intents import finish_left as finish_storage_left
from .storage.store import Store


def archive_and_write(store: Store, ledger: Ledger, writes: Sequence[tuple[str, str]],
                      read: Mapping[str, str | None], archive: Sequence[tuple[int, str]],
                      now: float) -> Outcome:
    """Write each (vault path, text) over the bytes whose hash `read` gives for it and archive
    each (note id, reason) at `now`, as one operation (module docstring). EditConflict, with
    nothing changed, when a note's bytes are no longer those read; the outcome's `left` names
    a note an editor that takes no lock changed in between (left as it is)."""
    with store.lock.held():
        for path, _ in writes:
            if (now_hash := file_hash(store, path)) != read.get(path):
                raise EditConflict(path, read.get(path) or "", now_hash)
        # each write guarded by the hash just checked (read once: an editor's save since is
        # left and reported, never written over)
        planned = tuple(Write(path, read.get(path), text) for path, text in writes)
        intent = ArchiveWritesIntent(planned, tuple(archive), float(now))
        journal = Journal(store)
        name = journal.record(intent)
        out = apply_archive_writes(store, intent, ledger, name)
        journal.finish(name)
    return out


def apply_archive_writes(store: Store, intent: ArchiveWritesIntent, ledger: Ledger,
                         name: str = "") -> Outcome:
    """Make (or finish) the intent's archives, then its writes; idempotent."""
    with store.lock.held():
        ledger.archive_all(intent.archive, intent.now)
        out = apply_writes(store, WritesIntent(intent.writes), name)
    out.op = "archive-writes"
    return out


def finish_archive_writes(store: Store, ledger: Ledger | None) -> list[Outcome]:
    """Finish every `ArchiveWritesIntent` a dead process left (module docstring), with
    `ledger` or, without one, the vault's own ledger file opened for it; the outcomes. One
    whose ledger or files fail stays pending ("failed: why"); an unreadable one is
    `Journal.recover`'s to report."""
    journal, outcomes = Journal(store), []
    if not journal.pending():
        return []
    with store.lock.held():
        for name in journal.pending():
            try:
                intent = journal.load(name)
            except (OSError, ValueError, KeyError, TypeError, RecursionError):
                continue
            if not isinstance(intent, ArchiveWritesIntent):
                continue
            try:
                own = ledger if ledger is not None else Ledger.open(
                    store.state / LEDGER_FILE,
                    clock=functools.partial(float, intent.now), fault_after=store.fault_after)
                try:
                    outcomes.append(apply_archive_writes(store, intent, own, name))
                finally:
                    if own is not ledger:
                        own.close()
            except (VaultError, OSError, sqlite3.Error) as exc:
                outcomes.append(Outcome(name, "archive-writes", "", "", state=f"failed: {exc}"))
                continue
            journal.finish(name)
    return outcomes


def finish_left(store: Store, ledger: Ledger | None) -> None:
    """`storage.intents.finish_left` (the write lock's `on_acquire`, set by Vault.open), and
    the archive-writes it leaves: their outcomes join `store.recovered` once."""
    finish_storage_left(store)
    for outcome in finish_archive_writes(store, ledger):
        if (entry := outcome.to_json()) not in store.recovered:
            store.recovered.append(entry)
