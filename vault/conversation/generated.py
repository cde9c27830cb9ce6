"""What ingest last wrote to each generated note, so that a note edited by hand since is told
apart from one the ingest wrote itself (vault/conversation/ingest.py decides what to do).

The record lives beside the index, not in it (an index rebuild keeps it), one file per folder
of conversation notes (`conversations/<cid>`: a hook re-reads its own conversation's file, not
the vault's): `.rmh/generated/<h>.json`, h the sha256 of the folder, holding

    {"version": 1, "notes": {sha256(note path)[:32]: [sha256 of bytes the ingest wrote]},
     "moved": {sha256(note path)[:32]: sha256(the path the user moved it to)[:32]}}

(a fact note's hash is of its bytes without the trust fields a correction sets, `mark`: a
correction is no hand edit). A note the user moved is still keyed by the path the ingest
generates for it, and `moved` says where the ingest last found it (`follow.py`). Paths are
hashed so the file names no one (an erasure, `rmh forget`, finds no name here). A note has one
hash, the bytes the ingest last wrote there, and two while a write is under way: the ingest
records the new hash next to the old before it writes (`plan`) and keeps only the new one
after (`wrote`), so an ingest killed between leaves either version recognised as its own.
Nothing here reads a clock: the same transcript ingested again records the same bytes.
Read and written under the vault's write lock (`Vault.locked`); a file that cannot be read is
an empty record (every note then unknown: `Verdict` of the ingest treats those with care).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from ..notes.hashing import content_hash
from ..notes.trust import apply
from ..storage.fileops import fsync_dir
from ..storage.generated_record import FOLDER, Entry, digest, hashed, load, write

__all__ = ["FOLDER", "Record", "folder_of", "hashed", "is_fact", "mark"]

KEPT = 2  # hashes per note at most: the last written and, during a write, the next
NEW = ""  # first in a note's list while its first write is under way (`pending`)


def is_fact(path: str) -> bool:
    """A fact note's generated path (`layout.fact_path`)."""
    return "/facts/" in path


def mark(path: str, text: str) -> str:
    """What the record keeps of `text` written at generated path `path`: its sha256, for a
    fact note that of the text without its trust fields (`notes.trust.apply`)."""
    return content_hash(apply(text, {}) if is_fact(path) else text)


def folder_of(path: str) -> str:
    """The record a note path belongs to: its first two components (`conversations/<cid>`)."""
    return "/".join(path.split("/")[:2])


class Record:
    """The hashes ingest wrote, for the notes of several folders (module docstring)."""

    def __init__(self, state_dir: Path, count_op: Callable[[], None] | None = None) -> None:
        self.dir = state_dir / FOLDER
        self._count_op = count_op  # the store's fault seam: a sweep kills inside a save too
        self._notes: dict[str, dict[str, list[str]]] = {}  # folder -> hashed path -> hashes
        self._moved: dict[str, dict[str, str]] = {}  # folder -> hashed path -> hashed path
        self._dirty: set[str] = set()

    def _folder(self, path: str) -> dict[str, list[str]]:
        folder = folder_of(path)
        if folder not in self._notes:
            self._notes[folder], self._moved[folder] = load(self.dir / f"{digest(folder)}.json")
        return self._notes[folder]

    def at(self, path: str) -> str | None:
        """Where the generated note `path` was last found moved to (hashed), if anywhere."""
        self._folder(path)
        return self._moved[folder_of(path)].get(digest(path, 32))

    def found_at(self, path: str, where: str | None) -> None:
        """The generated note `path` is at `where` now (None: at `path`, or nowhere)."""
        self._folder(path)
        moved, key = self._moved[folder_of(path)], digest(path, 32)
        now = None if where is None else digest(where, 32)
        if moved.get(key) != now:
            if now is None:
                del moved[key]
            else:
                moved[key] = now
            self._dirty.add(folder_of(path))

    def hashes(self, path: str) -> tuple[str, ...] | None:
        """The hashes of the bytes ingest wrote to `path`; None: no record of it."""
        got = self._folder(path).get(digest(path, 32))
        return None if got is None else tuple(h for h in got if h != NEW)

    def entry(self, path: str, new_hash: str) -> Entry:
        """`path`'s line as it is now and as writing `new_hash` there leaves it: journalled
        with the write, so that its recovery sets it as the note ends (`Vault.journalled`)."""
        got = self._folder(path).get(digest(path, 32))
        return Entry(f"{digest(folder_of(path))}.json", digest(path, 32),
                     None if got is None else tuple(got), new_hash)

    def pending(self, path: str) -> bool:
        """Whether the first write of `path` may not have been made (planned, not confirmed:
        an ingest killed between): a note absent there was not deleted by the user."""
        return NEW in self._folder(path).get(digest(path, 32), ())

    def plan(self, path: str, new_hash: str) -> None:
        """About to write `new_hash` to `path`: both it and what was there count as ours (a
        note not written before is `pending` until `wrote`)."""
        prior = self._folder(path).get(digest(path, 32))
        old = [h for h in prior or () if h not in (NEW, new_hash)][-(KEPT - 1):]
        self._set(path, [NEW, *old, new_hash] if prior is None or NEW in prior
                  else [*old, new_hash])

    def wrote(self, path: str, new_hash: str) -> None:
        """`path` now holds the bytes ingest wrote, `new_hash`."""
        self._set(path, [new_hash])

    def restore(self, path: str, hashes: tuple[str, ...] | None) -> None:
        """`path`'s record back to `hashes` (a planned write that was not made)."""
        if hashes is None:
            if self._folder(path).pop(digest(path, 32), None) is not None:
                self._dirty.add(folder_of(path))
        else:
            self._set(path, list(hashes))

    def journalled(self, paths: Sequence[str]) -> None:
        """The planned writes of `paths` are in the writes' journal (`Vault.journalled`, with
        their record lines), whose recovery makes them or takes them back, setting their lines
        as it leaves them: none is `pending` any more (else a note so written and then deleted
        by the user read as never written, and the next ingest wrote it again: STORE6, session
        32). Saved."""
        for path in paths:
            got = self._folder(path).get(digest(path, 32))
            if got is not None and NEW in got:
                self._set(path, [h for h in got if h != NEW])
        self.save()

    def replan(self, path: str, hashes: tuple[str, ...] | None, new_hash: str) -> None:
        """`path`, written with `new_hash`, back to what `plan` made of it (its hashes before
        it, `hashes`, or pending, and `new_hash`): before the write is taken back, so that a kill
        during that takes neither version for the user's (conversation/take_back.py)."""
        self._set(path, [*(hashes or (NEW,)), new_hash])

    def _set(self, path: str, hashes: list[str]) -> None:
        notes = self._folder(path)
        key = digest(path, 32)
        if notes.get(key) != hashes:
            notes[key] = hashes
            self._dirty.add(folder_of(path))

    def save(self) -> None:
        """Write each changed folder's file (temp, fsync, rename): durable before the notes
        whose writes it announces."""
        if not self._dirty:
            return
        self.dir.mkdir(exist_ok=True)
        for folder in sorted(self._dirty):
            write(self.dir / f"{digest(folder)}.json", self._notes[folder], self._moved[folder],
                  self._count_op)
        fsync_dir(str(self.dir), done=self._count_op or (lambda: None))
        self._dirty.clear()
