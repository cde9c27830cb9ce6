"""The vault folder: contained paths, scan, read, atomic write, trash, move.

- Paths are vault-relative posix text, checked by `Store.check` and contained by
  `Store.resolve` (realpath + commonpath). Dot components are refused for reads too:
  dot-folders (`.obsidian/`, `.git/`, `.rmh/` with the index) are not notes.
- Writes are atomic (temp in the same folder, fsync, `os.replace`, fsync the folder): a kill at
  any moment leaves the old or the new bytes; `clean_stale_temps` removes leftover temps.
- Text is UTF-8 without newline translation; a leading BOM stays in the text as U+FEFF, so
  `write_text(p, read_text(p))` reproduces the file byte for byte.
- `trash` and `move` never overwrite; nothing is hard-deleted but by `erase`
  (storage/removal.py).
- Every change lands through a descriptor of its folder walked from the root without
  following a symlink (storage/anchored.py): a parent folder swapped for a symlink between
  the checks and the rename fails the write (PathRefused), it never redirects it. Reads and
  `stat` open the file (O_NOFOLLOW) or stat it in its folder walked the same way.
- Every change holds the vault's write lock (storage/write_lock.py), so a guarded write
  (`expected_hash`) is a compare-and-swap that every rmh process respects; right before its
  rename the file's identity (inode, size, mtime) is checked again, which narrows the window
  left to editors that take no lock to one `stat` and one `rename` apart.
- Fault injection (tests, benchmarks): `Store(fault_after=N)` SIGKILLs the process right after
  its N-th file operation, counted in `count_op` and the ledger's commits (storage/faults.py).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import stat as st
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..errors import (
    EditConflict,
    NotAVault,
    NoteExists,
    NoteNotFound,
    NotText,
    PathRefused,
    PermissionDenied,
    QuotaExceeded,
)
from . import fileops
from .anchored import folder, fsync_fds, open_dir, open_note, parts_of, remove_below, stat_note
from .faults import operation_made
from .fileops import (
    alive,
    lstat_at,
    place_no_clobber,
    refused_change,
    swap_in,
)
from .folder_view import FileStat as FileStat  # re-exported: the store's types
from .folder_view import FolderView, inside
from .folder_view import Scan as Scan
from .folder_view import Skipped as Skipped
from .folders import MAX_NOTE_BYTES as MAX_NOTE_BYTES  # re-exported: the store's limit
from .folders import RACY, wrap64
from .leases import held_for_writing
from .removal import MAX_TRASH_COPIES as MAX_TRASH_COPIES  # re-exported
from .removal import TRASH_DIR as TRASH_DIR  # re-exported: the store's folder
from .removal import Removal, temp_name
from .state_anchor import StateAnchor
from .write_lock import WriteLock

STATE_DIR = ".rmh"
BINARY_PROBE_BYTES = 8 * 1024
NOTE_MODE = 0o666  # new notes: rw for all, less the process umask

_TEMP = re.compile(r"^\..+\.rmh-tmp-(\d+)-\d+$")
_ASIDE = re.compile(r"^\.(.+)\.rmh-tmp-aside-(\d+)-\d+$")  # `Removal.settle_aside`
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_inflight: set[str] = set()  # temps being written by this process (any Store instance)


_Identity = tuple[int, int, int, int]


def _identity(info: os.stat_result) -> _Identity:
    """inode, size, mtime and ctime: an edit that sets the mtime back still moves the ctime
    (storage/folders.py), so the recheck before a rename reads the bytes again."""
    return info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns


class Store(Removal, FolderView):
    """The vault folder. `root` is the realpath of an existing directory (else NotAVault)."""

    def __init__(self, root: Path, *, fault_after: int | None = None,
                 read_only: bool = False, held: bool = False) -> None:
        real = os.path.realpath(root)
        if not os.path.isdir(real):
            raise NotAVault(str(root), "not a directory" if os.path.exists(real) else "missing")
        self.root = Path(real)
        self._root = real
        self._root_id = _folder_id(real)  # what `check_root` compares the path with
        self.read_only = read_only  # every change refused (ReadOnlyVault) at the write lock
        self.anchor = StateAnchor(real, STATE_DIR, required=held)  # state_anchor.py
        self.lock = WriteLock(real, STATE_DIR, read_only=read_only, held=self.anchor.path)
        self.lock.create()
        self.recovered: list[dict[str, object]] = []  # intents finished at open (intents.py)
        self.fault_after = fault_after
        self.ops = 0  # file operations made so far (module docstring: fault injection)

    def check_root(self) -> None:
        """NotAVault when the vault's path no longer names the folder this store opened (it
        was moved, renamed or removed, or another folder put in its place): before it, a
        running `rmh serve` synced the missing or foreign folder as every note deleted (each
        a delete event: the learned state lost) and wrote into the stranger (VAULT10, session
        36). Moved back, the vault serves again."""
        try:
            now = _folder_id(self._root)
        except OSError:
            raise NotAVault(self._root, "the vault folder was moved or removed while open"
                            ) from None
        if now != self._root_id:
            raise NotAVault(self._root, "another folder took the vault's place while open")
        self.anchor.check()  # and `.rmh` the folder it opened (SBX12, session 37)

    @property
    def state(self) -> Path:
        """The vault's `.rmh/` as opened (state_anchor.py): every state path is joined here."""
        return Path(self.anchor.path)

    def count_op(self) -> None:
        """One file operation made; SIGKILL this process after the `fault_after`-th."""
        self.ops += 1
        operation_made(self.fault_after)

    def resolve(self, path: str, *, write: bool = False, canvas: bool = False) -> Path:
        """`check`, join to root, and require the realpath to stay inside the vault. With
        `write`, no component may be a symlink at all: the scan follows none (a link inside
        the vault is skipped), so a write through one would change another note's file, or
        land where the index never looks."""
        lexical = os.path.join(self._root, self.check(path, write=write, canvas=canvas))
        real = self._realpath(path, lexical)
        if not inside(self._root, real):
            raise PathRefused(path, "symlink leaves the vault")
        if write and real != lexical:
            raise PathRefused(path, "symlink inside the vault")
        return Path(real)

    @staticmethod
    def _realpath(path: str, lexical: str) -> str:
        """os.path.realpath of `lexical`; PathRefused when a link it met was swapped for a
        folder as it read it (readlink's EINVAL), a race, refused."""
        try:
            return os.path.realpath(lexical)
        except OSError as exc:
            raise PathRefused(path, "symlink loop or symlink swapped in") from exc

    def _entry(self, path: str, *, write: bool = False) -> tuple[str, str]:
        """(checked path, directory entry) for renames: the parent is resolved, the final name
        is not followed (a link is moved, not its target); escaping links are refused, and
        with `write` (a destination) any link on the way."""
        rel = self.check(path, write=write)
        self.resolve(rel, write=write)
        parent, name = os.path.split(os.path.join(self._root, rel))
        return rel, os.path.join(self._realpath(path, parent), name)

    @contextlib.contextmanager
    def _existing(self, path: str) -> Iterator[tuple[str, int, str, os.stat_result]]:
        """(checked path, its open folder, its name, its lstat) of an existing non-folder
        entry: NoteNotFound, PathRefused("is a folder"); the folder is the one the checks
        saw, walked without following a link (a link swapped in since: PathRefused)."""
        rel, entry = self._entry(path)
        folder, name = os.path.split(entry)
        if not inside(self._root, folder):  # swapped for a link since `resolve` looked
            raise PathRefused(path, "symlink leaves the vault")
        try:
            fd = open_dir(self._root, parts_of(self._root, folder), path)
        except (FileNotFoundError, NotADirectoryError) as exc:
            raise NoteNotFound(path) from exc
        try:
            info = lstat_at(fd, name)
            if info is None:
                raise NoteNotFound(path)
            if st.S_ISDIR(info.st_mode):
                raise PathRefused(path, "is a folder")
            yield rel, fd, name, info
        finally:
            os.close(fd)

    def _folder_of(self, path: str, rel: str) -> contextlib.AbstractContextManager[int]:
        """The open folder of vault path `rel` (checked, no link on the way), made when
        missing: PathRefused when a link leaves the vault or a parent folder is a file."""
        return self.folder_holding(rel, shown=path, create=True)

    def folder_holding(self, rel: str, *, shown: str = "", create: bool = False
                       ) -> contextlib.AbstractContextManager[int]:
        """A descriptor of the folder holding vault path `rel`, walked from the root without
        following a link, closed on exit: for changes by name inside one folder (hidden
        leftovers: storage/leftovers.py). PathRefused (naming `shown`, else `rel`) when a link
        is on the way; FileNotFoundError when missing, unless `create` makes it."""
        return folder(self._root, rel.split("/")[:-1], shown or rel, create=create)

    def stat(self, path: str) -> FileStat | None:
        """The regular file's FileStat; None when missing or not a file; PermissionDenied."""
        rel = self.check(path)
        try:
            info = stat_note(self._root, rel, path, lambda: str(self.resolve(rel)))
        except (FileNotFoundError, NotADirectoryError):
            return None
        if not st.S_ISREG(info.st_mode):
            return None
        return FileStat(rel, info.st_size, wrap64(info.st_mtime_ns), wrap64(info.st_ino),
                        wrap64(info.st_ctime_ns))

    def read_bytes(self, path: str) -> bytes:
        """The file's bytes. NoteNotFound, NotText("not a regular file"), QuotaExceeded,
        PermissionDenied (the file system refuses this process: mode, owner, ACL)."""
        return self._read(path)[0]

    def _read(self, path: str, at: tuple[int, str] | None = None
              ) -> tuple[bytes, os.stat_result]:
        """The file's bytes and the stat of the very file they were read from; `at` (an open
        folder and a name in it) reads that entry instead of resolving `path`."""
        flags = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
        try:
            if at is None:
                rel = self.check(path)
                fd = open_note(self._root, rel, path, flags, lambda: str(self.resolve(rel)))
            else:
                fd = os.open(at[1], flags, dir_fd=at[0])
        except (FileNotFoundError, NotADirectoryError) as exc:
            raise NoteNotFound(path) from exc
        except PermissionError as exc:
            raise PermissionDenied(self.check(path)) from exc
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
            raise PathRefused(path, "symlink loop or symlink swapped in") from exc
        info = os.fstat(fd)
        if not st.S_ISREG(info.st_mode):  # FIFOs opened non-blocking never hang
            os.close(fd)
            raise NotText(path, "not a regular file")
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(MAX_NOTE_BYTES + 1)
        if len(data) > MAX_NOTE_BYTES:
            raise QuotaExceeded(f"note size of {path}", MAX_NOTE_BYTES)
        return data, info

    def _current(self, path: str, at: tuple[int, str] | None = None
                 ) -> tuple[str | None, _Identity | None]:
        """(sha256 hex of the file's bytes, its identity); (None, None) when missing."""
        try:
            data, info = self._read(path, at)
        except NoteNotFound:
            return None, None
        return hashlib.sha256(data).hexdigest(), _identity(info)

    def read_text(self, path: str) -> str:
        """UTF-8 text, no newline translation, a leading BOM kept as U+FEFF. NotText "binary"
        (a NUL byte in the first 8 KiB) or "not utf-8" (a decode error)."""
        data = self.read_bytes(path)
        if b"\x00" in data[:BINARY_PROBE_BYTES]:
            raise NotText(path, "binary")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise NotText(path, "not utf-8") from exc

    def write_text(self, path: str, text: str, *, create_only: bool = False,
                   expected_hash: str | None = None, canvas: bool = False) -> FileStat:
        """Atomically replace (or create) a .md note with `text` as UTF-8; returns its FileStat.

        Creates missing parent folders; keeps an existing file's owner, mode less setuid/setgid,
        ACL and user.* attributes (fileops.keep_metadata), never replaces a FIFO, socket or
        device (PathRefused); a new note gets NOTE_MODE less the umask and, as root (new folders
        too), its folder's owner. With `create_only`, NoteExists when present (atomic: the temp
        is hard-linked into place).
        With `expected_hash` (sha256 hex of the bytes the caller read), a compare-and-swap:
        EditConflict unless the file holds exactly those bytes, checked under the write lock,
        by identity before the swap, and the file the swap replaced (fileops.swap_in).
        QuotaExceeded over MAX_NOTE_BYTES; NotText when `text` holds lone surrogates, or a NUL
        where `read_text` would call the file binary (the index would skip the note written).
        With `canvas`, the file may be an Obsidian canvas (`.canvas`) instead: a move's plan.
        """
        rel = self.check(path, write=True, canvas=canvas)  # a refused name takes no lock
        with self.lock.held(), refused_change(rel):
            return self._write_text(path, text, create_only, expected_hash, canvas)

    def _write_text(self, path: str, text: str, create_only: bool,
                    expected_hash: str | None, canvas: bool = False) -> FileStat:
        rel = self.check(path, write=True, canvas=canvas)
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise NotText(path, "not utf-8 encodable") from exc
        if b"\x00" in data[:BINARY_PROBE_BYTES]:
            raise NotText(path, "a NUL byte in the first 8 KiB: binary")
        if len(data) > MAX_NOTE_BYTES:
            raise QuotaExceeded(f"note size of {rel}", MAX_NOTE_BYTES)
        target = str(self.resolve(rel, write=True, canvas=canvas))  # the reasons; the walk
        # below holds
        with self._folder_of(path, rel) as dfd:
            return self._write_at(path, rel, dfd, target, data, create_only, expected_hash)

    def _write_at(self, path: str, rel: str, dfd: int, target: str, data: bytes,
                  create_only: bool, expected_hash: str | None) -> FileStat:
        name = os.path.basename(target)
        old = lstat_at(dfd, name)
        if old is not None and st.S_ISLNK(old.st_mode):  # swapped in since the check
            raise PathRefused(path, "symlink inside the vault")
        if old is not None and (create_only or not st.S_ISREG(old.st_mode)):
            raise NoteExists(rel) if create_only else PathRefused(path, fileops.not_a_file(old))
        seen: _Identity | None = None
        if expected_hash is not None:
            now, seen = self._current(rel, (dfd, name))
            if now != expected_hash:
                raise EditConflict(rel, expected_hash, now)
        tmp = temp_name(name, "tmp")
        inflight = os.path.join(os.path.dirname(target), tmp)
        _inflight.add(inflight)
        try:
            # 0o666 & ~umask (0644 under the usual 022), as any editor creates a text file;
            # os.open's default of 0o777 made every new note executable.
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, NOTE_MODE,
                         dir_fd=dfd)
            with os.fdopen(fd, "wb") as fh:
                fileops.keep_metadata(fh.fileno(), dfd, name, old)
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
                info = os.fstat(fh.fileno())
            self.count_op()
            if expected_hash is not None:
                self._recheck(rel, (dfd, name), expected_hash, seen)
                if held_for_writing(dfd, name):  # an editor mid-save: nothing swapped in,
                    # so no reader sees bytes computed from its half-written file
                    raise EditConflict(rel, expected_hash, self._current(rel, (dfd, name))[0])
            if create_only:
                place_no_clobber(tmp, name, rel, keep_src=True, done=self.count_op,
                                 src_dir_fd=dfd, dst_dir_fd=dfd)
            elif not swap_in(tmp, name, dfd, None if expected_hash is None else lambda: (
                    not held_for_writing(dfd, tmp)  # an editor writing it in place
                    and self._current(rel, (dfd, tmp))[0] == expected_hash), done=self.count_op):
                raise EditConflict(rel, expected_hash or "", self._current(rel, (dfd, name))[0])
            fsync_fds(dfd, done=self.count_op)
        finally:
            _inflight.discard(inflight)
            if lstat_at(dfd, tmp) is not None:
                os.unlink(tmp, dir_fd=dfd)
                self.count_op()
        # the rename set a ctime this fstat did not see: RACY, as the index would store it
        return FileStat(rel, info.st_size, wrap64(info.st_mtime_ns), wrap64(info.st_ino), RACY)

    def _recheck(self, rel: str, at: tuple[int, str], expected: str,
                 seen: _Identity | None) -> None:
        """Right before the rename: EditConflict when the file is no longer the one whose hash
        was checked (an editor that takes no lock replaced it meanwhile) and its bytes differ."""
        now_info = lstat_at(*at)
        now_id = None if now_info is None else _identity(now_info)
        if now_id != seen:
            now, _ = self._current(rel, at)
            if now != expected:
                raise EditConflict(rel, expected, now)

    def clean_stale_temps(self, seen: Iterable[str] | None = None) -> list[str]:
        """Remove ".<name>.rmh-tmp-<pid>-<n>" leftovers of interrupted writes, and settle the
        notes an interrupted erase set aside (`Removal.settle_aside`); returns the
        removed vault-relative paths, sorted. Temps of this process's in-flight writes and of
        other live processes are kept (a concurrent writer is never sabotaged). `seen`: the
        candidates a full sync's scan saw (SyncReport.temps: the same folders this walk
        reads), instead of reading every folder again; a folder among them is kept."""
        removed: list[str] = []
        for rel in self._hidden_files() if seen is None else sorted(seen):
            name = rel.rpartition("/")[2]
            if aside := _ASIDE.match(name):  # a note set aside by an erase: never just removed
                pid = int(aside.group(2))
                if pid != os.getpid() and not alive(pid) and self.settle_aside(rel,
                                                                               aside.group(1)):
                    removed.append(rel)
                continue
            m = _TEMP.match(name)
            if not m or self._abs(rel) in _inflight:
                continue
            pid = int(m.group(1))
            if pid != os.getpid() and alive(pid):
                continue
            if remove_below(self._root, rel):  # not a folder, no link followed
                removed.append(rel)
        return sorted(removed)


def _folder_id(folder: str) -> tuple[int, int]:
    """(device, inode) of `folder`, following no symlink: which folder a path names now."""
    info = os.stat(folder, follow_symlinks=False)
    return info.st_dev, info.st_ino
