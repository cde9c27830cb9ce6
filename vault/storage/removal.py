"""Removing and renaming notes: the part of `Store` (store.py) that takes a file away from its
name (trash, erase, move), never overwriting another.

A mixin, as folder_view.py is: `Store` provides the checks, the write lock, the fault count
and the folder walks (the attributes declared below)."""

from __future__ import annotations

import contextlib
import itertools
import os
import stat as st
from collections.abc import Callable
from contextlib import AbstractContextManager

from ..errors import (
    EditConflict,
    NoteExists,
    NoteNotFound,
    PathRefused,
    QuotaExceeded,
    VaultError,
)
from .anchored import folder, fsync_fds
from .fileops import lstat_at, place_no_clobber, refused_change
from .paths import copy_name
from .write_lock import WriteLock

TRASH_NAME = "trash"  # in the state folder, `.rmh` (state_anchor.py: held)
TRASH_DIR = f".rmh/{TRASH_NAME}"  # its vault path, as reported
MAX_TRASH_COPIES = 10_000
temp_counter = itertools.count()


CUT = 200  # bytes of the note's name a temp name keeps


def temp_name(name: str, kind: str) -> str:
    """".NAME.rmh-KIND-PID-N" in the note's folder (<= 255 bytes): "tmp" for a write's temp
    (store.py's `_TEMP`: removed once its process is gone), "tmp-aside" for a note `erase`
    sets aside (`Removal.settle_aside` once its process is gone), "kept" for a file never to
    lose."""
    short = name.encode("utf-8")[:CUT].decode("utf-8", "ignore")
    return f".{short}.rmh-{kind}-{os.getpid()}-{next(temp_counter)}"


def is_aside_of(name: str, aside: str) -> bool:
    """Whether `aside` is a name `temp_name(name, "tmp-aside")` gives."""
    short = name.encode("utf-8")[:CUT].decode("utf-8", "ignore")
    head, _, tail = aside.partition(f".{short}.rmh-tmp-aside-")
    pid, _, n = tail.partition("-")
    return not head and aside.startswith(".") and pid.isdigit() and n.isdigit()


def _same_file(sfd: int, name: str, dfd: int, other: str) -> bool:
    """Whether `other` in folder `dfd` is the very file `name` in folder `sfd` (a hard link)."""
    a, b = lstat_at(sfd, name), lstat_at(dfd, other)
    return a is not None and b is not None and (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


class Removal:
    """trash, erase and move of the store `Store` is."""

    _root: str
    lock: WriteLock
    check: Callable[..., str]
    resolve: Callable[..., object]
    count_op: Callable[[], None]
    _existing: Callable[[str], AbstractContextManager[tuple[str, int, str, os.stat_result]]]
    _folder_of: Callable[[str, str], AbstractContextManager[int]]
    folder_holding: Callable[..., AbstractContextManager[int]]
    _current: Callable[..., tuple[str | None, object]]

    def hash_at(self, rel: str, fd: int, name: str) -> str | None:
        """sha256 of the file `name` in the open folder `fd`, read as every note is
        (`Store._current`: no link followed, only a regular file, a FIFO never waited on);
        None when it is gone or holds no note's bytes."""
        try:
            return self._current(rel, (fd, name))[0]
        except (VaultError, OSError):
            return None

    def settle_aside(self, rel: str, short: str) -> bool:
        """A note `erase` set aside at vault path `rel` (".SHORT.rmh-tmp-aside-PID-N") and
        a kill left there, its bytes unchecked or not yet put back (they may be an editor's
        save): removed when it is the very file of an entry in its folder's trash (a delete
        killed before its unlink: its bytes are there), else put back under its name SHORT
        when that is free, removed when SHORT holds the
        very same bytes, else left as it is (hidden: never indexed). Bytes found nowhere else
        are never removed (REV, session 33: the stale-temp sweep removed them, an editor's
        save lost). A name `temp_name` may have cut is not guessed: left. True when `rel` is
        gone."""
        parts = rel.split("/")
        if len(short.encode("utf-8")) > CUT - 4:
            return False
        try:
            with folder(self._root, parts[:-1], rel) as fd:
                if self._trashed(parts[:-1], fd, parts[-1]):  # a delete killed while aside:
                    os.unlink(parts[-1], dir_fd=fd)  # its bytes are in the trash, as its
                    fsync_fds(fd)  # unlink would have left them (FIX37)
                    return True
                try:
                    place_no_clobber(parts[-1], short, rel, src_dir_fd=fd, dst_dir_fd=fd)
                except NoteExists:
                    if self.hash_at(rel, fd, parts[-1]) != self.hash_at(rel, fd, short):
                        return False
                    os.unlink(parts[-1], dir_fd=fd)
                fsync_fds(fd)
                return True
        except (FileNotFoundError, NotADirectoryError, PathRefused):
            return False

    def _trashed(self, where: list[str], fd: int, name: str) -> bool:
        """Whether the file `name` (folder `fd`, vault folder `where`) is also an entry of
        the trash folder of `where` (a hard link: the same file, its bytes kept there)."""
        info = lstat_at(fd, name)
        if info is None or info.st_nlink < 2 or not st.S_ISREG(info.st_mode):
            return False
        trash = [*TRASH_DIR.split("/"), *where]
        try:
            with folder(self._root, trash, "/".join(trash)) as tfd:
                return any(_same_file(fd, name, tfd, entry) for entry in sorted(os.listdir(tfd)))
        except (FileNotFoundError, NotADirectoryError, PathRefused):
            return False

    def trash(self, path: str, *, keep: bool = False) -> str:
        """Move a note into `.rmh/trash/<path>`, never overwriting: " (1)", " (2)"... go before
        the suffix when taken. Returns the path relative to TRASH_DIR. With `keep` the note
        stays too (the entry is a hard link: its bytes, as writes replace a note by rename)."""
        rel = self.check(path)
        with self.lock.held(), refused_change(rel):
            return self._trash(path, keep)

    def _trash(self, path: str, keep: bool = False) -> str:
        with (self._existing(path) as (rel, sfd, name, _),
              self._folder_of(path, f"{TRASH_DIR}/{rel}") as dfd):
            for n in range(MAX_TRASH_COPIES):
                cand = copy_name(rel, n)  # cut to fit the name's cap (storage/paths.py)
                try:
                    if keep:
                        place_no_clobber(name, os.path.basename(cand), cand, keep_src=True,
                                         done=self.count_op, src_dir_fd=sfd, dst_dir_fd=dfd)
                    elif not self._relocated(rel, sfd, name, dfd, os.path.basename(cand), cand):
                        continue  # an editor's save took the name: the next copy takes it
                except NoteExists:
                    # an entry that is this very file: an earlier `trash` of it, killed after
                    # its link, run again; that entry holds these bytes (a second one would
                    # be a duplicate): kept, and the note's name removed as it would have been
                    entry = os.path.basename(cand)
                    if not _same_file(sfd, name, dfd, entry) or not (
                            keep or self._unlinked(rel, sfd, name, dfd, entry)):
                        continue
                fsync_fds(dfd, sfd, done=self.count_op)
                return cand
        raise QuotaExceeded(f"trash copies of {rel}", MAX_TRASH_COPIES)

    def _relocated(self, rel: str, sfd: int, name: str, dfd: int, dname: str,
                   dst_rel: str, aside: str = "") -> bool:
        """Put the note `name` (folder `sfd`) at `dname` (folder `dfd`, vault path `dst_rel`),
        never replacing a file there (NoteExists), then remove `name` if it is still that file
        (`_unlinked`, by a rename aside to `aside`, "" a fresh name): False when an editor's
        save took `name` after the link (left there, its bytes kept). A move's rename and a
        trash copy both go this way (session 36's review: a save made between the link and an
        unlink by name was removed, found nowhere; FIX37: one made between the check and the
        unlink by name, too)."""
        place_no_clobber(name, dname, dst_rel, keep_src=True, done=self.count_op,
                         src_dir_fd=sfd, dst_dir_fd=dfd)
        if lstat_at(sfd, name) is None:  # renamed (links unsupported there), or gone
            return True
        return self._unlinked(rel, sfd, name, dfd, dname, aside)

    def _unlinked(self, rel: str, sfd: int, name: str, dfd: int, entry: str,
                  aside: str = "") -> bool:
        """Remove the note's name `name` if the file there is still `entry` in folder `dfd`
        (a hard link of it: a trash entry, a move's new name). The name is renamed aside
        (to `aside`, a name a move's intent records, else a fresh one) first and the file
        checked there: an editor that saved the note by rename after the link (no lock) put
        a new file at the name, which an unlink by name would have removed with its bytes
        found nowhere else. Such a save is put back (`_set_aside`'s way) and False returned.
        A kill while aside: `settle_aside`, or a move's recovery (`settle_relocation`)."""
        tmp = aside or temp_name(name, "tmp-aside")
        os.rename(name, tmp, src_dir_fd=sfd, dst_dir_fd=sfd)
        self.count_op()
        if _same_file(sfd, tmp, dfd, entry):
            try:
                os.unlink(tmp, dir_fd=sfd)
            except OSError:  # refused (EACCES, EPERM, EROFS): the name back, nothing aside
                if lstat_at(sfd, name) is None:  # by one rename (a link and an unlink would
                    os.rename(tmp, name, src_dir_fd=sfd, dst_dir_fd=sfd)  # need the unlink)
                else:
                    self._put_back(rel, sfd, tmp, name)
                raise
            self.count_op()
            return True
        self._put_back(rel, sfd, tmp, name)
        return False

    def _put_back(self, rel: str, sfd: int, tmp: str, name: str) -> None:
        """The file set aside at `tmp` back at its name `name`, never over another file: where
        one took the name meanwhile, it stays beside it as ".NAME.rmh-kept-PID-N" (hidden:
        never indexed, never removed)."""
        try:
            place_no_clobber(tmp, name, rel, done=self.count_op, src_dir_fd=sfd, dst_dir_fd=sfd)
        except NoteExists:
            os.rename(tmp, temp_name(name, "kept"), src_dir_fd=sfd, dst_dir_fd=sfd)
            self.count_op()

    def settle_relocation(self, old: str, new: str, aside: str) -> None:
        """Before a move's rename is looked at again (storage/intents.py `apply_move`): the
        old name set aside at `aside` (a name its intent records) by a run killed before the
        aside was checked (`_unlinked`). The very file at `new` (the rename's link made): the
        aside is removed, the unlink it stood for; another file (an editor's save that took
        the old name after the link): put back at `old`, where the move's fold takes it
        (intent_merge.fold_old), or kept beside a file there since."""
        rel, new_rel = self.check(old), self.check(new)
        with contextlib.suppress(FileNotFoundError, NotADirectoryError, PathRefused), \
                self.folder_holding(rel) as sfd:
            name = rel.rpartition("/")[2]
            if not is_aside_of(name, aside) or lstat_at(sfd, aside) is None:
                return  # a name no move sets aside (a damaged plan): never touched
            try:
                with self.folder_holding(new_rel) as dfd:
                    twin = _same_file(sfd, aside, dfd, new_rel.rpartition("/")[2])
            except (FileNotFoundError, NotADirectoryError):
                twin = False
            if twin:
                os.unlink(aside, dir_fd=sfd)
                self.count_op()
            else:
                self._put_back(rel, sfd, aside, name)
            fsync_fds(sfd, done=self.count_op)

    def erase(self, path: str, *, expected_hash: str | None = None) -> None:
        """Remove a note for good (erasure; `trash` is the reversible delete). A note already
        gone is no error: a second erasure finishes an interrupted first one. With
        `expected_hash`, only the bytes of that hash are removed (EditConflict else): the
        file is first renamed to a temp name, so the very file whose bytes are checked is the
        one removed, and one an editor saved before that rename is put back (`_taken_back`)."""
        rel = self.check(path)
        # a note (or its folder) another program removed meanwhile is gone too: no error
        with self.lock.held(), refused_change(rel), \
                contextlib.suppress(NoteNotFound, FileNotFoundError), \
                self._existing(path) as (_, sfd, name, _):
            if expected_hash is not None:
                name = self._set_aside(rel, sfd, name, expected_hash)
            os.unlink(name, dir_fd=sfd)
            self.count_op()
            fsync_fds(sfd, done=self.count_op)

    def _set_aside(self, rel: str, sfd: int, name: str, expected: str) -> str:
        """Rename the note to a temp name (a kill then: `clean_stale_temps` puts it back or
        removes it as a copy, `settle_aside`) and return that name when it holds the
        `expected` bytes; else put it back and raise EditConflict. Where another save took the
        name meanwhile, the file stays beside it as ".NAME.rmh-kept-PID-N" (hidden: never
        indexed, never removed)."""
        tmp = temp_name(name, "tmp-aside")
        os.rename(name, tmp, src_dir_fd=sfd, dst_dir_fd=sfd)
        self.count_op()
        now = self.hash_at(rel, sfd, tmp)
        if now == expected:
            return tmp
        self._put_back(rel, sfd, tmp, name)
        raise EditConflict(rel, expected, now)

    def move(self, old: str, new: str, *, aside: str = "") -> None:
        """Rename a note. NoteNotFound if `old` is missing; NoteExists if `new` exists (a
        case-only rename of one file on a case-insensitive file system is allowed). Creates
        `new`'s parent folders. Links in other notes are not touched here. `aside`: the name
        in `old`'s folder the old name is renamed to before its unlink (a move's intent
        records it: `settle_relocation`); "" a fresh one."""
        rel = self.check(old)
        self.check(new, write=True)
        with self.lock.held(), refused_change(rel):
            self._move(old, new, aside)

    def move_over(self, old: str, new: str, expected: frozenset[str]) -> None:
        """Rename the file at `old` over the note at `new` in one step, when `new` holds bytes
        of one of the `expected` hashes (EditConflict else, nothing changed): a kill leaves
        both as they were or `old`'s file at `new` and nothing at `old` (a moved note's save
        under its old name following it: storage/intent_merge.py `fold_old`)."""
        rel, new_rel = self.check(old), self.check(new, write=True)
        with (self.lock.held(), refused_change(rel), self._existing(old) as (_, sfd, sname, _),
              self._folder_of(new, new_rel) as dfd):
            dname = new_rel.rpartition("/")[2]
            now = self.hash_at(new_rel, dfd, dname)
            if now is None or now not in expected:
                raise EditConflict(new_rel, min(expected, default=""), now)
            os.rename(sname, dname, src_dir_fd=sfd, dst_dir_fd=dfd)
            self.count_op()
            fsync_fds(dfd, sfd, done=self.count_op)

    def _move(self, old: str, new: str, aside: str) -> None:
        with self._existing(old) as (old_rel, sfd, sname, src):
            new_rel = self.check(new, write=True)
            self.resolve(new_rel, write=True)  # the reasons; the walk below holds
            if old_rel == new_rel:
                return
            with self._folder_of(new, new_rel) as dfd:
                dname = new_rel.rpartition("/")[2]
                dst = lstat_at(dfd, dname)
                if dst is None:  # a save at `old` since is left there (a journalled
                    self._relocated(old_rel, sfd, sname, dfd, dname, new_rel, aside)  # move
                elif (st.S_ISLNK(src.st_mode) or st.S_ISLNK(dst.st_mode)
                      or (src.st_dev, src.st_ino) != (dst.st_dev, dst.st_ino)):
                    raise NoteExists(new_rel)
                elif src.st_nlink > 1:  # a rename killed between its link and its unlink
                    self._unlinked(old_rel, sfd, sname, dfd, dname, aside)  # (folds it)
                else:  # one file, two spellings: a case-insensitive file system
                    os.rename(sname, dname, src_dir_fd=sfd, dst_dir_fd=dfd)
                    self.count_op()
                fsync_fds(dfd, sfd, done=self.count_op)
