"""Folder descriptors walked from the vault root, never through a symlink: where the store's
changes land.

The store checks a path before it writes (no `..`, no symlink on the way: storage/store.py
`resolve`), but a path checked is not a path used: a local process that swaps a parent folder
for a symlink to somewhere outside the vault between the check and the rename would have
the write follow it. So every change is made through a descriptor of its folder that
`open_dir` reaches from the root one component at a time, each opened relative to the one
before with O_NOFOLLOW | O_DIRECTORY (`openat`): a component that is a symlink at that moment
fails the walk (PathRefused), and once a folder is open, whatever is renamed or swapped in
its place no longer matters: the temporary (O_CREAT | O_EXCL | O_NOFOLLOW), the rename, link
or unlink and the folder's fsync all name entries of the open folder (`dir_fd`), not paths.
A folder moved elsewhere inside the vault while it is open still takes the write (inside the
vault); one moved outside the vault by a process that may write there is not this module's
concern (that process could move the note out itself). Reads of notes go the same way
(`open_note`, `stat_note`): a parent swapped between the check and the open cannot make a
read return the bytes, or the stat, of a file outside the vault.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat as st
from collections.abc import Callable, Iterator, Sequence

from ..errors import PathRefused, PermissionDenied
from .fileops import adopt, lstat_at
from .folder_view import inside

DIR_FLAGS = (os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
             | getattr(os, "O_CLOEXEC", 0))
FOLDER_MODE = 0o777  # new folders: as os.makedirs makes them, less the umask


def _nothing() -> None:
    return None


def _why(root: str, parts: Sequence[str], fd: int, name: str, create: bool) -> str | None:
    """Why component `name` (the last of `parts`) could not be opened as a folder; None when
    it is no link and not `create`: the caller treats it as missing."""
    info = lstat_at(fd, name)
    if info is None:
        return "symlink loop or symlink swapped in"  # gone again: raced
    if st.S_ISLNK(info.st_mode):
        try:
            real = os.path.realpath(os.path.join(root, *parts))
        except OSError:  # the link swapped back as realpath read it (EINVAL): raced
            return "symlink loop or symlink swapped in"
        return "symlink inside the vault" if inside(root, real) else "symlink leaves the vault"
    if st.S_ISDIR(info.st_mode):
        return "symlink loop or symlink swapped in"  # a link that was swapped back: raced
    return "a parent folder is a file" if create else None


def open_dir(root: str, parts: Sequence[str], path: str, *, create: bool = False) -> int:
    """A descriptor (O_RDONLY, close-on-exec) of the folder `root`/`parts`, each component
    opened relative to the one before without following a symlink; missing ones are made
    (FOLDER_MODE less the umask; as root, owned as their parent: fileops.adopt) when `create`.
    `root` itself must be a real folder (the store's realpath). PathRefused(`path`, why) when
    a component is a symlink ("symlink inside the vault", "symlink leaves the vault"; the root
    itself: "vault folder swapped"), or a file and `create` ("a parent folder is a file");
    FileNotFoundError / NotADirectoryError when one is missing or a file and not `create`."""
    try:
        fd = os.open(root, DIR_FLAGS)
    except OSError as exc:  # the root itself swapped since the store opened (ENOTDIR: a file)
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        raise PathRefused(path, "vault folder swapped for a symlink or a file") from exc
    try:
        for i, name in enumerate(parts):
            made = False
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, FOLDER_MODE, dir_fd=fd)
                    made = True
            try:
                inner = os.open(name, DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                why = _why(root, parts[: i + 1], fd, name, create)
                if why is None:
                    raise
                raise PathRefused(path, why) from exc
            if made:
                adopt(inner, fd)  # as root: the parent folder's owner's (fileops.adopt)
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def folder(root: str, parts: Sequence[str], path: str, *, create: bool = False
           ) -> Iterator[int]:
    """`open_dir` as a context: the folder's descriptor, closed on exit."""
    fd = open_dir(root, parts, path, create=create)
    try:
        yield fd
    finally:
        os.close(fd)


def open_file(root: str, real: str, path: str, flags: int) -> int:
    """A descriptor of the entry `real` (a realpath inside `root`, the store's `resolve`)
    opened with `flags` (O_NOFOLLOW among them) in its folder, which `open_dir` walks: a
    parent swapped for a symlink after the check fails the open (PathRefused) instead of
    reading outside the vault. FileNotFoundError / NotADirectoryError when it is gone."""
    where, name = os.path.split(real)
    with folder(root, parts_of(root, where), path) as fd:
        return os.open(name, flags, dir_fd=fd)


def stat_file(root: str, real: str, path: str) -> os.stat_result:
    """The entry `real` (as `open_file`) stat'ed in its walked folder, not followed."""
    where, name = os.path.split(real)
    with folder(root, parts_of(root, where), path) as fd:
        return os.stat(name, dir_fd=fd, follow_symlinks=False)


def open_note(root: str, rel: str, path: str, flags: int, real: Callable[[], str]) -> int:
    """`open_file` of checked vault path `rel`, walked as written first: no realpath (one
    `lstat` per component) where no symlink is on the way. Where one is (the walk refuses
    it, or the final name is one: ELOOP), `open_file` of its realpath `real()` (the store's
    `resolve`: PathRefused when it leaves the vault), as the store reads through a symlink
    that stays inside the vault."""
    try:
        return open_file(root, os.path.join(root, rel), path, flags)
    except PathRefused:
        pass
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
    return open_file(root, real(), path, flags)


def stat_note(root: str, rel: str, path: str, real: Callable[[], str]) -> os.stat_result:
    """`stat_file` of `rel` as `open_note` opens it: as written, else (a symlink on the way
    or at the end) its realpath `real()`. PermissionDenied(`rel`) when a folder on the way
    may not be searched by this process (as `Store.read` says; never a raw OSError)."""
    try:
        try:
            info = stat_file(root, os.path.join(root, rel), path)
            if not st.S_ISLNK(info.st_mode):
                return info
        except PathRefused:
            pass
        return stat_file(root, real(), path)
    except PermissionError as exc:
        raise PermissionDenied(rel) from exc


def parts_of(root: str, folder: str) -> list[str]:
    """The components of `folder` (an absolute path inside `root`) below `root`."""
    rel = os.path.relpath(folder, root)
    parts = [] if rel == "." else rel.split(os.sep)
    if ".." in parts:
        raise ValueError(f"{folder!r} is not inside {root!r}")
    return parts


def fsync_fds(*fds: int, done: Callable[[], None] = _nothing) -> None:
    """fsync each open folder once (two descriptors of one folder count once), calling
    `done` after each: the entries of a rename or unlink made durable."""
    seen: set[tuple[int, int]] = set()
    for fd in fds:
        info = os.fstat(fd)
        if (info.st_dev, info.st_ino) in seen:
            continue
        seen.add((info.st_dev, info.st_ino))
        os.fsync(fd)
        done()


def remove_below(root: str, rel: str) -> bool:
    """Unlink the file `rel` (vault-relative, "/"-separated) through its folder's descriptor
    (`open_dir`, no link followed); True when it was removed. A missing file or folder, a
    folder in its place, or a folder on the way that is no longer a folder (a file, or a
    symlink swapped in: PathRefused) removes nothing and gives False: what the caller means to
    remove is then not in the vault, and nothing outside it is touched."""
    parts = rel.split("/")
    try:
        with folder(root, parts[:-1], rel) as fd:
            info = lstat_at(fd, parts[-1])
            if info is None or st.S_ISDIR(info.st_mode):
                return False
            os.unlink(parts[-1], dir_fd=fd)
            return True
    except (FileNotFoundError, NotADirectoryError, PathRefused):
        return False


def prune_below(root: str, rel_folder: str, keep: int) -> None:
    """Remove the empty folders of `rel_folder` (vault-relative) from the deepest up, leaving
    its first `keep` components: each `rmdir` names an entry of its parent's descriptor, so a
    folder swapped for a symlink is never followed (rmdir of a link fails, and stops)."""
    parts = [p for p in rel_folder.split("/") if p]
    for depth in range(len(parts), keep, -1):
        try:
            with folder(root, parts[: depth - 1], rel_folder) as fd:
                os.rmdir(parts[depth - 1], dir_fd=fd)
        except (OSError, PathRefused):
            return
