"""The store's low-level file operations: fsync of folders, a rename that never replaces,
liveness of a temp file's writer and the temporaries of dead writers, the one way rmh opens
its own files in `.rmh/` for reading (`open_regular`), and how a refused change to a note is
reported (`refused_change`). Each change calls `done`
once it is made, so the store can count its file operations in one place (its fault-injection
seam, storage/store.py)."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import fcntl
import functools
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from ..errors import DiskFull, NoteExists, PathRefused, PermissionDenied
from ..full_disk import is_disk_full

CROSS_DEVICE = "on another file system than the note (a mount point): a note moves only by rename"
FOLDER_GONE = "its folder was removed or replaced by another program during the change"
_LINK_UNSUPPORTED = (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK)


@contextlib.contextmanager
def refused_change(rel: str) -> Iterator[None]:
    """The file system's refusal (EACCES, EPERM) of any step of a change to note `rel` (its
    temporary, a folder made for it, the rename, the trash) as PermissionDenied(rel, "write"):
    the note by its vault path, never the temporary's name nor a host path. A folder of the
    change removed or replaced by another program between its steps (ENOENT, ENOTDIR: the
    temporary went with it) is PathRefused(rel, FOLDER_GONE), not a raw FileNotFoundError; no
    room for it (ENOSPC, EDQUOT, EFBIG past `ulimit -f`) is DiskFull(rel)."""
    try:
        yield
    except PermissionError as exc:
        raise PermissionDenied(rel, "write") from exc
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise PathRefused(rel, FOLDER_GONE) from exc
    except OSError as exc:
        if is_disk_full(exc):
            raise DiskFull(rel) from exc
        raise


def _nothing() -> None:
    return None


def replace_whole(path: Path, chunks: Iterable[bytes | bytearray | memoryview],
                  count_op: Callable[[], None] | None = None,
                  still: Callable[[], bool] | None = None) -> bool:
    """Write `chunks` to `path` whole or not at all: a pid-named temporary beside it
    (`.NAME.PID.tmp`, which `dead_temps` finds), fsynced, then renamed into place; a reader
    sees the old file or the new one. False (the temporary removed) when the folder cannot
    be written. `count_op` is called after the temporary is written and after the rename
    (the store's fault-injection seam).

    `still`: whether what was written is still worth keeping, asked right before the rename
    while this process holds an exclusive flock of the folder (`folder_locked`); False drops
    the temporary and returns False. Writers of a derived file stamped with a state of
    something that moves on (the index) pass it, so that of two racing writers the one whose
    state is older never renames last: a writer whose state moved on before its check skips,
    and one whose state moves on after it is followed by the writer that moved it (which
    waits for the lock to check and rename)."""
    try:
        return _replace(path, chunks, count_op, still)
    except OSError:
        return False


def replace_or_raise(path: Path, chunks: Iterable[bytes | bytearray | memoryview],
                     what: str, count_op: Callable[[], None] | None = None) -> None:
    """`replace_whole` that says why it could not: DiskFull / PermissionDenied / PathRefused
    naming `what` (a vault path, never the host's nor a descriptor's: `.rmh` is reached as
    /proc/self/fd/N, storage/state_anchor.py), as `refused_change` types them; another
    OSError as it came. The temporary is removed either way. `count_op`: as `replace_whole`'s."""
    with refused_change(what):
        _replace(path, chunks, count_op, None)


def _replace(path: Path, chunks: Iterable[bytes | bytearray | memoryview],
             count_op: Callable[[], None] | None, still: Callable[[], bool] | None) -> bool:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with create_temp(tmp) as fh:
            for chunk in chunks:
                fh.write(chunk)
            fh.flush()
            os.fsync(fh.fileno())
        if count_op is not None:
            count_op()
        with folder_locked(path.parent) if still is not None else contextlib.nullcontext():
            if still is not None and not still():
                drop_temps(tmp)
                return False
            os.replace(tmp, path)
        if count_op is not None:
            count_op()
    except OSError:
        drop_temps(tmp)
        raise
    return True


@contextlib.contextmanager
def folder_locked(folder: Path) -> Iterator[None]:
    """An exclusive flock of `folder` itself (its directory file descriptor: no lock file is
    made, so none can be planted) for the block; the kernel drops it when a holder dies. A
    folder this process may write but not read (mode -wx) cannot be opened to lock: the block
    then runs unlocked, as every write did before the lock (a race costs a rebuild, never a
    wrong answer: a stale store's stamp does not match)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except PermissionError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing drops the flock


def drop_temps(*paths: str | Path) -> None:
    """Remove the temporaries of a write that failed, as far as the file system lets: on a
    read-only mount unlink(2) is EROFS even for a name that is not there (the mount is checked
    before the lookup), so a plain `unlink(missing_ok=True)` turned "this state file cannot be
    saved" (False, the value kept in memory) into the command's error."""
    for path in paths:
        with contextlib.suppress(OSError):
            os.unlink(path)


def create_temp(path: str | Path) -> BinaryIO:
    """`path`, a temporary of rmh's own (a pid-named name beside the file it replaces), made
    new and opened for writing. Whatever is at that name first goes: a leftover of an earlier
    process with this pid, or a symlink planted there, which `open(path, "wb")` followed,
    truncating and writing the file it named (outside the vault: any file this user may
    write). O_EXCL | O_NOFOLLOW: one planted again in between fails the write, never
    redirects it."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    return os.fdopen(os.open(path, flags, 0o666), "wb")


def open_regular(path: str | Path) -> BinaryIO:
    """`path` opened for reading in binary when it is a regular file (a symlink to one is
    followed); OSError (EINVAL) when it is a FIFO, a socket, a device or a folder. A FIFO
    opened plainly waits for a writer forever, and a device such as /dev/zero never ends, so
    one put where rmh keeps a file of its own would stop every command. The file is never
    opened when `stat` already shows it is not one (opening a device can act on it), and the
    open descriptor is checked again (it may have been swapped in between)."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def lstat_at(fd: int | None, name: str) -> os.stat_result | None:
    """The entry `name` of folder `fd` (None: of the working folder), not followed; None when
    missing."""
    try:
        return os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def fsync_dir(*folders: str, done: Callable[[], None] = _nothing) -> None:
    """fsync each folder once (the entries of a rename or unlink made durable)."""
    for folder in dict.fromkeys(folders):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        done()


def alive(pid: int) -> bool:
    """Whether process `pid` exists (owned by anyone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        pass
    return True


def dead_temps(folder: Path, pattern: str) -> list[Path]:
    """The entries of `folder` matching `pattern` (names `<name>.<pid>.tmp`) whose writer,
    process `pid`, is gone: temporaries a killed writer left before its rename, in name order.
    An unlistable folder has none."""
    try:
        found = sorted(folder.glob(pattern))
    except OSError:
        return []
    out = []
    for tmp in found:
        pid = tmp.name.rsplit(".", 2)[-2]
        if pid.isdigit() and int(pid) != os.getpid() and not alive(int(pid)):
            out.append(tmp)
    return out


def drop_dead_temps(folder: Path, pattern: str) -> None:
    """Remove `dead_temps(folder, pattern)`, the temporaries killed writers left; one that
    cannot be removed stays (the writer then says why it cannot write)."""
    for tmp in dead_temps(folder, pattern):
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


def place_no_clobber(src: str, dst: str, rel: str, *, keep_src: bool = False,
                     done: Callable[[], None] = _nothing, src_dir_fd: int | None = None,
                     dst_dir_fd: int | None = None) -> None:
    """Put `src` at `dst`, never replacing `dst` (NoteExists): an atomic hard link, then unlink
    `src` unless `keep_src`; where links are unsupported, check then rename. With
    `src_dir_fd` / `dst_dir_fd`, the names are entries of those open folders
    (storage/anchored.py)."""
    try:
        os.link(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd, follow_symlinks=False)
    except FileExistsError as exc:
        raise NoteExists(rel) from exc
    except OSError as exc:
        if exc.errno not in _LINK_UNSUPPORTED:
            raise
        if lstat_at(dst_dir_fd, dst) is not None:
            raise NoteExists(rel) from exc
        try:
            os.rename(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)
        except OSError as moved:  # EXDEV: `dst` is on another file system (a mount point
            if moved.errno != errno.EXDEV:  # inside the vault, `.rmh/` mounted apart): typed,
                raise  # so a journalled move that changed nothing is closed, not left pending
            raise PathRefused(rel, CROSS_DEVICE) from moved
        done()
        return
    done()
    if not keep_src:
        os.unlink(src, dir_fd=src_dir_fd)
        done()


_RENAME_EXCHANGE = 2  # renameat2's flag (Linux 3.15)
_NO_EXCHANGE = (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV,
                errno.EPERM)  # EPERM: a seccomp filter not listing renameat2 (a container's)


@functools.cache
def _renameat2() -> Callable[..., int] | None:
    """libc's renameat2, None where there is none (not Linux, an old libc)."""
    name = ctypes.util.find_library("c")
    try:
        fn: Callable[..., int] = ctypes.CDLL(name, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    return fn


def swap_in(tmp: str, name: str, dir_fd: int, unchanged: Callable[[], bool] | None,
            done: Callable[[], None] = _nothing) -> bool:
    """Put file `tmp` at `name` (entries of the open folder `dir_fd`). With `unchanged`,
    exchanged atomically (renameat2 RENAME_EXCHANGE): `tmp` then names exactly the file that
    was at `name` at that instant, and `unchanged()` (reading `tmp`) judges it: False puts it
    back (exchanged again) and returns False, so a change an editor wrote in place just before
    the swap is never replaced unseen (a recheck of its identity then a rename left a window
    between the two: NOTES-MOVE3 §5); `name` gone meanwhile is False too. Where the system
    cannot exchange, and without `unchanged`, `os.replace`. The caller removes `tmp`."""
    if unchanged is not None and (exchange := _renameat2()) is not None:
        a, b = os.fsencode(tmp), os.fsencode(name)
        if exchange(dir_fd, a, dir_fd, b, _RENAME_EXCHANGE) == 0:
            done()
            if unchanged():
                return True
            if exchange(dir_fd, a, dir_fd, b, _RENAME_EXCHANGE) != 0:
                err = ctypes.get_errno()
                raise OSError(err, os.strerror(err), name)
            done()
            return False
        err = ctypes.get_errno()
        if err == errno.ENOENT:
            return False
        if err not in _NO_EXCHANGE:
            raise OSError(err, os.strerror(err), name)
    os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    done()
    return True


def not_a_file(info: os.stat_result) -> str:
    """Why the entry `info` describes is no note to replace: a write renamed a new note over a
    FIFO, a socket or a device node in the vault (another process's rendezvous), as it did
    over a folder before that was refused."""
    return "is a folder" if stat.S_ISDIR(info.st_mode) else (
        "not a regular file: a FIFO, socket or device is never replaced")


_KEPT_XATTRS = ("user.", "system.posix_acl_access")  # never security.* (file capabilities)
_SET_ID = stat.S_ISUID | stat.S_ISGID


def adopt(fd: int, dir_fd: int) -> None:
    """As root, give the entry `fd` just made in folder `dir_fd` that folder's owner and group:
    a note or folder a root rmh made in a user's vault was root's (0644, 0755), so the vault's
    owner could neither edit that note nor add a note to that folder."""
    if os.geteuid() == 0:
        folder, new = os.fstat(dir_fd), os.fstat(fd)
        if (new.st_uid, new.st_gid) != (folder.st_uid, folder.st_gid):
            _chown(fd, folder)


def keep_metadata(fd: int, dir_fd: int, name: str, old: os.stat_result | None) -> None:
    """Give a note's replacement (`fd`, not yet renamed over `name` in `dir_fd`) what the note
    `old` had: its owner and group where this process may set them, its ACL and user.*
    attributes, and its permission bits less set-user-ID and set-group-ID (the kernel drops
    them on any write by a process without CAP_FSETID). As root, a write used to leave a user's
    note root's (a 0600 one out of its owner's reach), a setuid note a setuid-root file of the
    new bytes, and an ACL'd note readable by its group (the mask became the group's bits).
    A new note (`old` None) is adopted by its folder's owner (`adopt`). Where the group cannot
    be kept (a writer outside the note's group), the group bits become the note's bits for
    others, as vim's save does: a 0640 note of group "staff" rewritten by its owner, who is not
    in "staff", was left readable by the owner's own group."""
    if old is None:
        adopt(fd, dir_fd)
        return
    new = os.fstat(fd)
    if (new.st_uid, new.st_gid) != (old.st_uid, old.st_gid):
        _chown(fd, old)
    for attr, value in _kept_xattrs(dir_fd, name, old):
        with contextlib.suppress(OSError):  # a file system without them: nothing to keep
            os.setxattr(fd, attr, value)
    os.fchmod(fd, kept_mode(old.st_mode, os.fstat(fd).st_gid == old.st_gid))


def kept_mode(mode: int, same_group: bool) -> int:
    """The permission bits a note's replacement takes from the note's `mode`: less set-user-ID
    and set-group-ID; in another group than the note's (`same_group` False), the group's bits
    as low as the others' (`keep_metadata`; with an ACL, these bits are its mask)."""
    bits = stat.S_IMODE(mode) & ~_SET_ID
    if same_group:
        return bits
    return (bits & ~stat.S_IRWXG) | ((bits & stat.S_IRWXO) << 3)


def _chown(fd: int, like: os.stat_result) -> None:
    """`like`'s owner and group for `fd` where the kernel allows it; else unchanged, as an
    editor's save (EPERM unprivileged; EINVAL for an owner this user namespace does not map)."""
    with contextlib.suppress(OSError):
        os.fchown(fd, like.st_uid, like.st_gid)


def _kept_xattrs(dir_fd: int, name: str, old: os.stat_result) -> list[tuple[str, bytes]]:
    """The kept attributes of `name` in `dir_fd` while it is still the file `old` describes
    (none when it cannot be opened, was replaced meanwhile, or has none)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError:
        return []
    try:
        now = os.fstat(fd)
        if (now.st_dev, now.st_ino) != (old.st_dev, old.st_ino):
            return []
        return [(attr, os.getxattr(fd, attr)) for attr in sorted(os.listxattr(fd))
                if attr.startswith(_KEPT_XATTRS)]
    except OSError:
        return []
    finally:
        os.close(fd)
