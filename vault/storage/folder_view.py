"""The vault folder as the store sees it: checked names, the walk, listings and scans.

`FolderView` is the read-only half of `Store` (storage/store.py, which documents the contract):
`check` validates a vault-relative path, `scan`/`listings`/`notes_in` list the notes and what
was skipped, `folders` and `attachments` the rest. Nothing here writes.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Container, Iterator, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from ..errors import PathRefused
from ..notes.canvas_cards import is_canvas
from . import folders
from .folders import FolderDigest, Listing, walk
from .paths import component_problem, path_problem, printable
from .scan_pool import list_tree

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
# (vault root, folder) -> (st_dev, st_ino, st_ctime_ns, its attachment files, its sub-folders)
_FILES: dict[tuple[str, str], tuple[int, int, int, tuple[str, ...], tuple[str, ...]]] = {}


class FileStat(NamedTuple):
    """One note file: vault-relative posix path, size in bytes, mtime (ns), inode, ctime (ns)
    (folders.py: the ctime is in a note's identity).

    A named tuple, not a dataclass: a scan makes one per file, and at 10^6 files a frozen
    dataclass's __init__ was a fifth of a no-op sync."""

    path: str
    size: int
    mtime_ns: int
    inode: int
    ctime_ns: int


@dataclass(frozen=True)
class Skipped:
    """A file or folder the scan did not list, and why."""

    path: str
    reason: str


@dataclass(frozen=True)
class Scan:
    """Result of `Store.scan`: both tuples sorted by path."""

    files: tuple[FileStat, ...]
    skipped: tuple[Skipped, ...]


def inside(root: str, real: str) -> bool:
    return os.path.commonpath([root, real]) == root


def _descends(entry: os.DirEntry[str]) -> bool:
    """Whether the scan walks into `entry`: a real, non-hidden folder (links not followed)."""
    return not entry.name.startswith(".") and entry.is_dir(follow_symlinks=False)


def _text(name: str) -> bool:
    """Whether a name from the file system is text (its bytes were UTF-8)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def is_md(name: str) -> bool:
    return name.lower().endswith(".md")


def error_name(exc: OSError) -> str:
    return errno.errorcode.get(exc.errno or 0, type(exc).__name__)



class FolderView:
    """Names and listings of the folder at `_root` (a realpath)."""

    _root: str

    def check(self, path: str, *, write: bool = False, canvas: bool = False) -> str:
        """Validate a vault-relative path; return it normalised ("a/b.md": no "./", no "//").

        PathRefused(path, reason) for: empty; absolute ("/", drive "C:"); backslashes; a ".."
        component; hidden components (".x", reserved); NUL and control characters (C0, DEL,
        C1); bidi controls and BOM; look-alike slashes and dots (U+2215, U+2044, U+FF0F,
        U+29F8, U+2024, U+FF0E, ... or a component whose NFKC form holds a slash or starts
        with a dot); lone surrogates; components over 255 UTF-8 bytes, paths over 1024. With
        `write`, the name must end in ".md" (any case), or with `canvas` too in ".canvas"
        (an Obsidian canvas a move rewrites: vault/notes/canvas_cards.py).
        """
        problem = path_problem(path)
        parts = [p for p in path.split("/") if p not in ("", ".")]
        if not problem and not parts:
            problem = "empty path"
        for comp in parts:
            problem = problem or component_problem(comp)
        if not problem and write and not is_md(parts[-1]) and not (
                canvas and is_canvas(parts[-1])):
            problem = "not a .md note name"
        if problem:
            raise PathRefused(path, problem)
        return "/".join(parts)

    def _open_folder(self, rel_dir: str) -> int:
        """A descriptor of the vault folder `rel_dir` ("" the root), never through a symlink."""
        return os.open(os.path.join(self._root, rel_dir),
                       os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW)

    def _walk(
        self, skipped: list[Skipped] | None = None
    ) -> Iterator[tuple[str, os.DirEntry[str]]]:
        """Entries of every non-hidden folder, by name; folder symlinks are never followed.

        Each folder is listed through a directory descriptor, so an entry's `stat()` is one
        `fstatat` of its name (no path walk from the root: a quarter of a no-op sync at 10^6
        notes). The descriptor closes once the walk leaves the folder: call `stat()` on an
        entry before taking the next folder's entries. Unreadable folders go to `skipped`."""
        stack = [""]
        while stack:
            rel_dir = stack.pop()
            try:
                fd = self._open_folder(rel_dir)
            except OSError as exc:
                if skipped is not None:
                    reason = f"unreadable folder ({error_name(exc)})"
                    skipped.append(Skipped(printable(rel_dir or "."), reason))
                continue
            try:
                with os.scandir(fd) as it:
                    entries = sorted(it, key=lambda e: e.name)
                subdirs: list[str] = []
                for entry in entries:
                    rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
                    yield rel, entry
                    if _descends(entry):
                        subdirs.append(rel)
            finally:
                os.close(fd)
            stack.extend(reversed(subdirs))

    def _lean_walk(self) -> Iterator[tuple[str, list[os.DirEntry[str]]]]:
        """(folder, its entries unsorted) of every folder `_walk` lists, in no particular
        order, with no Python step per visible entry but the folder test (`_descends`'s
        rule: a stale-temp sweep at every open was 0.2 s CPU per 10^5 notes through
        `_walk`); unreadable folders are skipped."""
        stack = [""]
        while stack:
            rel_dir = stack.pop()
            try:
                fd = self._open_folder(rel_dir)
            except OSError:
                continue
            try:
                with os.scandir(fd) as it:
                    entries = list(it)
            finally:
                os.close(fd)
            yield rel_dir, entries
            prefix = f"{rel_dir}/" if rel_dir else ""
            stack.extend(prefix + e.name for e in entries
                         if e.name[0] != "." and e.is_dir(follow_symlinks=False))

    def _hidden_files(self) -> Iterator[str]:
        """Vault paths of the hidden non-folder entries ("." names) of every folder `_walk`
        lists, in no particular order (`_lean_walk`)."""
        for rel_dir, entries in self._lean_walk():
            prefix = f"{rel_dir}/" if rel_dir else ""
            for e in entries:
                if e.name[0] == "." and not e.is_dir(follow_symlinks=False):
                    yield prefix + e.name

    def hidden_files(self) -> list[str]:
        """Vault paths of the hidden files (not folders) of every folder the scan reads,
        sorted: rmh's own leftovers are among them (storage/leftovers.py)."""
        return sorted(self._hidden_files())

    def _abs(self, rel: str) -> str:
        return os.path.join(self._root, rel)

    def folders(self) -> list[str]:
        """Every folder `scan` descends into ("" is the vault root), by path: those `_walk`
        yields, found by `_lean_walk` (what the watcher walks at every open)."""
        found = [f"{rel_dir}/{e.name}" if rel_dir else e.name
                 for rel_dir, entries in self._lean_walk() for e in entries
                 if e.name[0] != "." and e.is_dir(follow_symlinks=False)]
        return ["", *sorted(found)]

    def attachments(self) -> list[str]:
        """Vault paths of the regular files that are not notes (images, PDFs, canvases...),
        outside hidden folders and never through a symlink; sorted. A name no note could
        link to (bytes that are not UTF-8) is left out. A folder whose ctime is unchanged
        since this process listed it (and was settled then: folders.py `_entries`'s rule) is
        only stat'ed, not listed again: `read` and `links` of a note with an attachment link
        listed every folder of the vault each time (16 ms CPU at 2x10^4 notes)."""
        out: list[str] = []
        stack = [""]
        while stack:
            files, subdirs = self._files_in(stack.pop())
            out.extend(files)
            stack.extend(subdirs)
        return sorted(out)

    def _files_in(self, rel_dir: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(attachment files, sub-folders `_walk` descends into) of folder `rel_dir`, vault
        paths; none where it cannot be opened."""
        try:
            fd = self._open_folder(rel_dir)
        except OSError:
            return (), ()
        try:
            info, key = os.fstat(fd), (self._root, rel_dir)
            seen = _FILES.get(key)
            if seen is not None and seen[:3] == (info.st_dev, info.st_ino, info.st_ctime_ns):
                return seen[3], seen[4]
            now = folders.now()
            with os.scandir(fd) as it:
                entries = list(it)
            prefix = f"{rel_dir}/" if rel_dir else ""
            files = tuple(prefix + e.name for e in entries
                          if not e.name.startswith(".") and not is_md(e.name)
                          and _text(prefix + e.name) and e.is_file(follow_symlinks=False))
            subdirs = tuple(prefix + e.name for e in entries if _descends(e))
        finally:
            os.close(fd)
        if info.st_ctime_ns < now - folders.SETTLED_NS:
            _FILES[key] = (info.st_dev, info.st_ino, info.st_ctime_ns, files, subdirs)
        else:
            _FILES.pop(key, None)
        return files, subdirs

    def listings(self, expected: Mapping[str, FolderDigest] | None = None,
                 workers: int = 1) -> list[Listing]:
        """Every folder's `Listing` (storage/folders.py), sorted by folder: compared against
        `expected` digests (`folders.expected_digests`), split over `workers` processes when
        more than one (storage/scan_pool.py; the same listings either way)."""
        expected = expected or {}
        if workers > 1:
            return list_tree(self._root, expected, workers)
        digests = {folder: d for folder, (d, _) in expected.items()}
        return sorted(walk(self._root, [""], digests), key=lambda listing: listing.folder)

    def notes_in(self, listing: Listing, checked: Container[str] = ()
                 ) -> tuple[list[FileStat], list[Skipped]]:
        """The notes a listing names (none when it is `same`) and what it skips; names not
        in `checked` are checked (refused: skipped with the reason). A skipped path is given
        as `paths.printable` writes it: any bytes can name a file (not UTF-8, a newline), and
        the index, JSON and a terminal take only text."""
        files: list[FileStat] = []
        skipped: list[Skipped] = []
        prefix = f"{listing.folder}/" if listing.folder else ""
        for name, size, mtime_ns, inode, ctime_ns in zip(
                listing.names, listing.sizes, listing.mtimes, listing.inodes, listing.ctimes,
                strict=True):
            rel = prefix + name
            problem = None if rel in checked else self._refused(rel)
            if problem is None:
                files.append(FileStat(rel, size, mtime_ns, inode, ctime_ns))
            else:
                skipped.append(Skipped(printable(rel), problem))
        for skip in listing.skipped:
            problem = self._refused(skip.path) if skip.check and skip.path not in checked else None
            skipped.append(Skipped(printable(skip.path), problem or skip.reason))
        return files, skipped

    def _refused(self, rel: str) -> str | None:
        try:
            self.check(rel)
        except PathRefused as exc:
            return f"refused name: {exc.reason}"
        return None

    def scan(self, checked: Container[str] = ()) -> Scan:
        """Every *.md file (any case) outside hidden files and folders; content is not read.

        Symlinks (to *.md or folders) are never followed; `skipped` reports them ("symlink
        outside vault", "symlink loop", "broken symlink", "symlink inside vault (not
        followed)": the target is scanned at its own path), unreadable folders, non-regular
        files, names `check` refuses, and files over MAX_NOTE_BYTES. Paths in `checked` (the
        index's: `check` accepted them when they were indexed, and it is a pure function of
        the text) are not checked again. Sync itself reads `listings` against the index's
        digests, so unchanged folders cost their stat calls only (storage/sync.py)."""
        files: list[FileStat] = []
        skipped: list[Skipped] = []
        for listing in self.listings():
            notes, skips = self.notes_in(listing, checked)
            files.extend(notes)
            skipped.extend(skips)
        files.sort()  # by path: paths are unique, so the other fields never decide
        skipped.sort(key=lambda s: (s.path, s.reason))
        return Scan(tuple(files), tuple(skipped))
