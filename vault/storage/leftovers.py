"""Hidden files rmh left beside a note: found (`rmh doctor`) and settled without losing bytes.

Two kinds, both named after the note they came from (removal.py `temp_name`):
- ".NAME.rmh-kept-PID-N": a take-back found an editor's save in a note it meant to remove,
  and another save had taken NAME meanwhile; the first save stays here.
- ".NAME.rmh-tmp-aside-PID-N" of a process that is gone, which `Store.clean_stale_temps`
  could not put back (NAME holds other bytes; NAME cut in the temp name).
Neither is indexed (hidden) nor removed by a sweep. `settle` removes one only when NAME holds
the very same bytes (a copy), puts it back under NAME when NAME is free, and else moves it
into the trash as a copy of NAME (`rmh restore` brings it back): a byte found nowhere else is
never removed. Under the write lock; a leftover of a live process's aside is not touched.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import NoteExists, PathRefused, QuotaExceeded
from .anchored import fsync_fds
from .fileops import lstat_at, place_no_clobber
from .paths import copy_name
from .removal import CUT

if TYPE_CHECKING:
    from .store import Store

_LEFT = re.compile(r"^\.(.+)\.rmh-(kept|tmp-aside)-(\d+)-\d+$")
TRASH_DIR = ".rmh/trash"  # (removal.py's)
MAX_COPIES = 10_000


@dataclass(frozen=True)
class Leftover:
    """One hidden file (vault path), the note it came from, its kind, and whether that note
    holds the very same bytes now (then it is only a copy)."""

    path: str
    note: str
    kind: str  # "kept" or "aside"
    same: bool

    def to_json(self) -> dict[str, object]:
        return {"path": self.path, "note": self.note, "kind": self.kind, "same": self.same}


def _parse(rel: str, alive: Callable[[int], bool]) -> tuple[str, str] | None:
    """(the note's vault path, kind) of a leftover's path; None when it is none (or an aside
    of a live process: an erase in flight)."""
    head, _, name = rel.rpartition("/")
    m = _LEFT.match(name)
    if m is None:
        return None
    kind = "kept" if m.group(2) == "kept" else "aside"
    pid = int(m.group(3))
    if kind == "aside" and (pid == os.getpid() or alive(pid)):
        return None
    return (f"{head}/{m.group(1)}" if head else m.group(1)), kind


def find(store: Store, alive: Callable[[int], bool],
         seen: Iterable[str] | None = None) -> list[Leftover]:
    """Every leftover of the vault's folders, sorted by path. `seen`: the candidates a full
    sync's scan saw (SyncReport.temps: the folders `Store.hidden_files` reads), instead of
    reading every folder again; one gone since is left out."""
    out = []
    for rel in store.hidden_files() if seen is None else sorted(set(seen)):
        parsed = _parse(rel, alive)
        if parsed is None:
            continue
        note, kind = parsed
        parts = rel.split("/")
        try:
            with store.folder_holding(rel) as fd:
                if lstat_at(fd, parts[-1]) is None:
                    continue
                mine = store.hash_at(rel, fd, parts[-1])
                same = mine is not None and mine == store.hash_at(note, fd, note.split("/")[-1])
        except (FileNotFoundError, NotADirectoryError, PathRefused):
            continue
        out.append(Leftover(rel, note, kind, same))
    return out


def settle(store: Store, alive: Callable[[int], bool],
           seen: Iterable[str] | None = None) -> dict[str, list[str]]:
    """Settle every leftover (module docstring; `seen` as `find`'s): {"removed": copies of
    their note, "restored": put back under their note's name, "trashed": trash paths of the
    others}."""
    done: dict[str, list[str]] = {"removed": [], "restored": [], "trashed": []}
    with store.lock.held():
        for left in find(store, alive, seen):
            parts = left.path.split("/")
            name, short = parts[-1], left.note.split("/")[-1]
            with store.folder_holding(left.path) as fd:
                if left.same:
                    os.unlink(name, dir_fd=fd)
                    store.count_op()
                    fsync_fds(fd, done=store.count_op)
                    done["removed"].append(left.path)
                    continue
                try:  # a name `temp_name` may have cut is not guessed: to the trash
                    if len(short.encode("utf-8")) > CUT - 4:
                        raise NoteExists(left.note)
                    place_no_clobber(name, short, left.note, done=store.count_op,
                                     src_dir_fd=fd, dst_dir_fd=fd)
                    fsync_fds(fd, done=store.count_op)
                    done["restored"].append(left.note)
                    continue
                except NoteExists:
                    pass
                done["trashed"].append(_to_trash(store, fd, name, left.note))
    return done


def _to_trash(store: Store, fd: int, name: str, note: str) -> str:
    """Move the leftover `name` (in folder `fd`) into the trash as a copy of `note`."""
    with store.folder_holding(f"{TRASH_DIR}/{note}", shown=note, create=True) as dfd:
        for n in range(MAX_COPIES):
            cand = copy_name(note, n)
            try:
                place_no_clobber(name, os.path.basename(cand), cand, done=store.count_op,
                                 src_dir_fd=fd, dst_dir_fd=dfd)
            except NoteExists:
                continue
            fsync_fds(dfd, fd, done=store.count_op)
            return cand
    raise QuotaExceeded(f"trash copies of {note}", MAX_COPIES)
