"""The way back from a changed index to the last saved state, for a new process.

Every persisted structure (the note columns, the lexical and dense stores) is keyed by the
exact state it was built for, so the first new process after an outside edit rebuilt all of
them from every row: 44-48 s CPU at 10^5 notes, ~700 s at 10^6 (BENCHMARKS.md, session 15).
A long-running process does not: it advances its snapshot over the changed notes
(increment.py) and its engine updates its structures through the corpus delta
(retrieval/derived.py). This module lets a new process do the same from the *base*, the state
whose note columns are saved (`.rmh/note-columns.bin`, note_store.py):

- a process whose own syncs carry the index from the base to a new state by additions,
  updates, renames and removals (each sync's generation the last one + 1, so no other
  writer came between) writes the record

      .rmh/catch-up.json = {version, base, base_generation, base_notes, stamp, generation,
                            paths, removed, born}

  `paths` being every path added, updated or renamed to since the base and not removed or
  renamed away since (a removed note's path is not kept: `rmh forget` leaves no erased
  path in the record, vault/erasure.py), `removed` the ids
  of the base's notes removed since (a rename onto an existing note removes the note that
  was there), `born` the ids of the notes added since that are still there (so that their
  removal is not taken for a base note's), and `stamp` the new state's (note_store.stamp:
  the generation and every folder's listing digest, so a record is trusted exactly as
  columns saved under that stamp would be);
- a new process whose index is at `stamp` loads the base's columns and advances them over
  `paths` and `removed` (increment.advance re-reads those rows and drops the removed ones:
  field by field the snapshot build_snapshot makes of every row), and its corpus names the
  base (`Corpus.base`), so the engine prepares on the stores saved for the base and updates
  them through the same delta;
- a sync of such a process that changes no note but the stamp (a touch, a note saved
  unchanged, a copied vault's new inodes) writes the record again under the new stamp
  (`restamp`; with no path since, the base's own rows under another stamp), so the process
  after a touch does not read every row.

One record is kept, the last writer's; it is written to a pid-named temporary, fsynced and
renamed into place (a reader sees a whole record or the old one). A record for another state
or another base, an unreadable one, one past `limit` paths and removed ids, one with a path
the store never indexes (forged: `_record`), a removed id that is no note of the base or is
a note of the index now, a born id of a base note (`snapshot`), or one whose replay reads
at least the vault's bytes (`ReplayCost`: the notes since, and the base's text
of those and of the removed ones) is not used: the process
rebuilds from the rows and saves a new base, as before. Nor is one once the processes that
caught up from the base have together read as much (`.rmh/catch-up-paid.json`, `paid`):
the ski-rental rule, which rents (replays) until the rent paid reaches the price of buying
(a rebuild), so that the processes never pay more than twice what the best choice made in
hindsight would (Karlin, Manasse, Rudolph & Sleator, "Competitive snoopy caching",
Algorithmica 3, 1988). A record of version 1 (no removed
ids: written before removals were followed) is not read either: the first process after the
upgrade rebuilds once. Nothing here is an error of its own.
"""

from __future__ import annotations

import json
import os
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from . import note_store
from .corpus import BaseRef, Corpus
from .fileops import dead_temps, open_regular, replace_whole
from .increment import advance
from .index import Index
from .paths import MAX_PATH_BYTES, component_problem, path_problem
from .snapshot import Snapshot, saved_snapshot, state
from .sync import SyncReport

VERSION = 2
FILE = "catch-up.json"
PAID_FILE = "catch-up-paid.json"  # {"base": stamp, "bytes": read by catching up from it}


REPLAY_FLOOR = 1 << 20  # bytes changed since the base below which catching up always pays


class ReplayCost:
    """Whether catching up re-reads more than a rebuild from every row would, so that the
    process should rebuild (and save the new base) instead: `costlier_than_a_rebuild`.
    Catching up costs every new process the notes changed since the base, read twice (the
    base's text and the new one: the lexical indexes take the old text's counts out,
    retrieval/derived.py), and the base's text of the notes removed since; a rebuild costs
    one process every note, once. So a record whose replay reads at least the vault's bytes
    is not used, at least twice REPLAY_FLOOR (below it, either costs under about a second,
    and the vault's sizes are not summed). A single 7 MB note written into a small vault had
    every new process re-tokenise it, ~9 s of CPU each (BENCHMARKS.md, session 25); one
    truncated or deleted after it was the base's, 3.6 s each
    (docs/measurements/session25/NOTES-REV.md). `paid`: the bytes earlier processes read
    catching up from the same base (`paid`), which count toward the rebuild's price (the
    ski-rental rule, module docstring): a 7 MB note in a vault whose other notes outweigh it
    cost every new process 3-8 s for good (session 25), and now costs them until they have
    read the vault's bytes.

    One per catch-up, asked before the base is loaded and again once its text is known: the
    vault's bytes are summed once, at the first question past the floor (each question
    summed every note's size before: twice, ~0.1 s at 10^6 notes, for a record it then used
    or not)."""

    def __init__(self, index: Index, chain: Chain, paid: int = 0) -> None:
        self._rows = index.stat_folders()[0]
        self.new = sum(self._rows[p].size for p in chain.since if p in self._rows)
        self.paid = paid
        self._vault: int | None = None

    def replay(self, old: int | None = None) -> int:
        """What catching up reads: the new text of the notes changed since the base, and
        `old`, the UTF-8 bytes of the base's text of the notes changed or removed since
        (`_base_bytes`, once the base is loaded); None: taken to be the new text's."""
        return 2 * self.new if old is None else self.new + old

    def costlier_than_a_rebuild(self, old: int | None = None) -> bool:
        """Whether this replay (`old`: as `replay`), with what was paid, reaches a rebuild's."""
        replay = self.replay(old)
        if replay < 2 * REPLAY_FLOOR:
            return False
        if self._vault is None:
            self._vault = sum(r.size for r in self._rows.values())
        return replay + self.paid >= self._vault


def paid(folder: Path, base: BaseRef) -> int:
    """The bytes processes have read catching up from `base` (`PAID_FILE`): 0 when the file is
    missing, unreadable, of another base, or not what `pay` writes."""
    try:
        with open_regular(folder / PAID_FILE) as fh:
            got = json.loads(fh.read(4096))
        value = got["bytes"]
        return value if got["base"] == base.stamp and type(value) is int and 0 <= value < (
            1 << 63) else 0
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return 0


def pay(folder: Path, base: BaseRef, total: int,
        count_op: Callable[[], None] | None = None) -> None:
    """Record that processes have read `total` bytes catching up from `base` (`paid`). Best
    effort: two processes at once may each write their own sum (one's share is lost, and the
    rebuild comes a process later), and a folder that cannot be written keeps the old sum."""
    for old in dead_temps(folder, f".{PAID_FILE}.*.tmp"):
        old.unlink(missing_ok=True)
    replace_whole(folder / PAID_FILE, (json.dumps(
        {"base": base.stamp, "bytes": min(total, (1 << 63) - 1)}).encode(),), count_op)


def _base_bytes(base: Corpus, now: Corpus, gone: frozenset[int]) -> int:
    """UTF-8 bytes of the base's title and body of the notes of `now` changed since the base
    (`now.delta`) and of the base's notes removed since (ids `gone`): what catching up reads
    of the base."""
    changed = [now.ids[p] for p in now.delta.changed] if now.delta is not None else []
    out = 0
    for i in [*changed, *sorted(gone)]:
        try:
            q = base.position(i)
        except KeyError:
            continue
        out += len(base.titles[q].encode("utf-8")) + len(base.bodies[q].encode("utf-8"))
    return out


def limit(notes: int) -> int:
    """Paths and removed ids a record may carry over a base of `notes` notes:
    max(1000, n / 40). Below the
    lexical indexes' compaction point (signals/postings.py: max(2000, n / 20) changed
    documents) and, for notes of average length, half the dense index's (10 % of its rows),
    so catching up never compacts: a compaction would rebuild what is saved for the base in
    every process that catches up."""
    return max(1000, notes // 40)


@dataclass(frozen=True)
class Chain:
    """How the index state `seen` (a generation; `stamp` its stamp) stands to the base:
    `since` the paths added, updated or renamed to since the base's state, `gone` the ids of
    the base's notes removed since, `born` the ids of the notes added since and still
    there (module docstring)."""

    base: BaseRef
    since: frozenset[str]
    seen: int
    stamp: str
    gone: frozenset[int] = frozenset()
    born: frozenset[int] = frozenset()

    def changes(self) -> int:
        """What `limit` bounds: the paths and the removed ids since the base."""
        return len(self.since) + len(self.gone)


def start(index: Index, folder: Path) -> Chain | None:
    """The chain of the index as it is now, before this process changes it: the base itself
    when the saved columns are of this state, the record's chain when the record is of this
    state and of the saved base, else None. Reads headers only."""
    saved = note_store.saved_state(folder)
    if saved is None:
        return None
    base = BaseRef(*saved)
    generation, stamp = state(index)
    if base.stamp == stamp:
        return Chain(base, frozenset(), generation, stamp)
    got = _record(folder, base)
    if got is None or got.stamp != stamp:
        return None
    return replace(got, seen=generation)


def extend(chain: Chain | None, report: SyncReport, index: Index, folder: Path,
           count_op: Callable[[], None] | None = None, write: bool = True) -> Chain | None:
    """The chain after `report` (a sync of this process that changed notes), and its record
    written (with `write`); None when the sync broke it (module docstring)."""
    if chain is None or report.generation != chain.seen + 1:
        return None
    left = chain.since.difference(report.removed, (o for o, _ in report.renamed))
    since = left.union(report.added, report.updated, (n for _, n in report.renamed))
    removed = set(report.removed_ids)
    gone = chain.gone | (removed - chain.born)  # a note added since is in no base column
    if len(since) + len(gone) > limit(chain.base.notes):
        return None
    with index.reading():
        generation, stamp = state(index)
        born = {i for i in map(index.note_id, report.added) if i is not None}
    if generation != report.generation:  # another writer since: not ours to record
        return None
    out = replace(chain, since=since, seen=generation, stamp=stamp, gone=gone,
                  born=(chain.born - removed) | born)
    if write:
        _write(folder, out, count_op)
    return out


def restamp(chain: Chain | None, index: Index, folder: Path,
            count_op: Callable[[], None] | None = None, write: bool = True) -> Chain | None:
    """The chain after a sync of this process that changed no note but may have changed the
    stamp (a touch, a file saved with the same bytes: its folder's listing changed), its
    record written again under the new stamp (with `write`; with no path since, a record of
    the base's rows under another stamp). The rows are those the record names, so the record
    holds for the new stamp; without it the next process would find no record of its state
    and read every row (44-48 s at 10^5 notes). None when another writer changed the index
    since."""
    if chain is None:
        return None
    generation, stamp = state(index)
    if generation != chain.seen:
        return None
    out = replace(chain, stamp=stamp)
    if stamp != chain.stamp and write:
        _write(folder, out, count_op)
    return out


def save(chain: Chain, index: Index, folder: Path,
         count_op: Callable[[], None] | None = None) -> None:
    """Write the record of `chain` (extended without writing: inside a batch, whose syncs
    pay for one record at its end) when the index is still at its generation (under the
    stamp of now: with the generation unchanged no note changed, as in `restamp`)."""
    generation, stamp = state(index)
    if generation == chain.seen and (chain.since or chain.gone or stamp != chain.base.stamp):
        _write(folder, replace(chain, stamp=stamp), count_op)


def snapshot(index: Index, folder: Path, known: Chain | None = None,
             count_op: Callable[[], None] | None = None) -> tuple[Snapshot, Chain] | None:
    """The snapshot of the index now from the saved base and the paths since (module
    docstring), with its chain: the `known` chain of this process's syncs when it is of the
    index's generation now (no writer since), else the record's; None when they do not lead
    here. A replay past the floor is added to what was `paid` (`count_op`: the store's)."""
    chain = known if known is not None and known.seen == index.generation() else \
        start(index, folder)
    if chain is None or (not chain.changes() and chain.stamp == chain.base.stamp):
        return None  # at the base: build_snapshot loads it
    cost = ReplayCost(index, chain, paid(folder, chain.base))
    if cost.costlier_than_a_rebuild():
        return None
    base = saved_snapshot(index, folder, chain.base)
    if base is None:
        return None
    ids = base.corpus.ids
    last = ids[-1] if ids else 0
    if any(i > last or ids[bisect_left(ids, i)] != i for i in chain.gone) or any(
            i <= last for i in chain.born):
        return None  # a removed id of no base note, or a born one that is: forged
    # nothing since: the base's rows, touched since (restamp); its columns keep its stamp
    # (advance refuses a removed id that is a note of the index now)
    snap = (advance(base, index, sorted(chain.since), sorted(chain.gone)) if chain.changes()
            else base)
    if snap is None or snap.corpus.generation != chain.seen:
        return None
    if not chain.changes():
        return snap, chain
    old = _base_bytes(base.corpus, snap.corpus, chain.gone)
    if cost.costlier_than_a_rebuild(old):
        return None
    if cost.replay(old) >= 2 * REPLAY_FLOOR:  # below it, under a second: not worth a write
        pay(folder, chain.base, cost.paid + cost.replay(old), count_op)
    return snap, chain


def _record(folder: Path, base: BaseRef) -> Chain | None:
    """The chain of the record (its `seen`: the generation it names) when it is one this
    module could have written over `base`, else None. A file past what such a record can
    hold is not read: at most `limit(base.notes)` paths and removed ids, each path a name
    the store accepts (paths.py: at most MAX_PATH_BYTES bytes of UTF-8, so at most 3 JSON
    characters a byte: a character of 2 to 4 bytes is one or two six-character `\\u`
    escapes) and 4 more characters, each id (removed or born: no more born than paths)
    at most 21 characters and 2 more; 4096 for the rest."""
    n = limit(base.notes)
    try:
        with open_regular(folder / FILE) as fh:
            if os.fstat(fh.fileno()).st_size > n * (3 * MAX_PATH_BYTES + 4 + 2 * 23) + 4096:
                return None
            got = json.loads(fh.read())
        if got["version"] != VERSION or BaseRef(
                str(got["base"]), int(got["base_generation"]), int(got["base_notes"])) != base:
            return None
        paths, removed, born = got["paths"], got["removed"], got["born"]
        if (not isinstance(paths, list) or not _ids(removed) or not _ids(born)
                or len(paths) + len(removed) > n or len(born) > len(paths)
                or not all(isinstance(p, str) and _stored(p) for p in paths)):
            return None
        return Chain(base, frozenset(paths), int(got["generation"]), str(got["stamp"]),
                     frozenset(removed), frozenset(born))
    except (OSError, ValueError, KeyError, TypeError, ArithmeticError, RecursionError):
        return None  # ArithmeticError: int(Infinity); RecursionError: nesting too deep


def _ids(items: object) -> bool:
    """Whether `items` is a list of note ids (positive 64-bit integers, not booleans)."""
    return isinstance(items, list) and all(
        type(i) is int and 0 < i < 1 << 63 for i in items)


def _stored(path: str) -> bool:
    """Whether `path` is a name the store could have indexed (paths.py; normalised)."""
    return path_problem(path) is None and all(
        c not in ("", ".") and component_problem(c) is None for c in path.split("/"))


def _write(folder: Path, chain: Chain, count_op: Callable[[], None] | None) -> None:
    """The record of `chain`, whole or not at all (module docstring); a dead writer's
    temporary is removed by the next write."""
    base = chain.base
    text = json.dumps({"version": VERSION, "base": base.stamp,
                       "base_generation": base.generation, "base_notes": base.notes,
                       "stamp": chain.stamp, "generation": chain.seen,
                       "paths": sorted(chain.since), "removed": sorted(chain.gone),
                       "born": sorted(chain.born)})
    for old in dead_temps(folder, f".{FILE}.*.tmp"):
        old.unlink(missing_ok=True)
    replace_whole(folder / FILE, (text.encode(),), count_op)
