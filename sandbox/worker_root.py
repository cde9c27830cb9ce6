"""What the worker sees of the host's file system: a private root (Landlock and seccomp tiers)
and read-only device binds (bwrap tier). Stdlib only: this file runs inside the sandbox, before
any user code, called by `worker_guard.install` while the worker is still single-threaded.

`private_root(paths, symlinks)` (Landlock and seccomp tiers): Landlock has no hook for stat,
lstat, statx, readlink, access or statfs, so a Landlock allowlist alone leaves the modes, owners
and times of every host file, and /proc of every host process, visible; the seccomp tier has no
allowlist at all, and its filter cannot see which file a read-only open acts on (a host FIFO's
data taken from its reader, a host file's write lease broken, a host pty made by /dev/ptmx). The
worker therefore gets its own mount namespace (unshare(CLONE_NEWNS); as an unprivileged
supervisor together with CLONE_NEWUSER, its own uid and gid mapped to themselves, setgroups
denied) whose root is a small tmpfs holding only `paths` (the interpreter's prefix, the library
folders, the worker's files), each bound read-only and nodev at its own path with every mount
beneath it (a remount of the bind alone left them writable: reads set access times), and
`symlinks` (such as /lib -> usr/lib); no /proc, no /dev, no /tmp, nothing writable. The mounts
are made private first, so nothing propagates to the host, then pivot_root(2) makes the tmpfs
the root and the old root is detached. A path outside the tree then fails with ENOENT whatever
the syscall. Sources are opened (O_PATH, in the new namespace) before the tmpfs is mounted and
bound from /proc/self/fd/N, so a source anywhere (under /tmp included) works. Where the kernel
refuses the namespace (root without CAP_SYS_ADMIN, as in a container; unprivileged without
user namespaces) it raises NoNamespace and the worker does not run.

`remount_read_only(paths)` and `limit_files(path, inodes)` (bwrap tier): bubblewrap 0.8 can
bind a device only read-write (`--ro-bind` also sets nodev), and can give a tmpfs only a size,
so bwrap keeps CAP_SYS_ADMIN in its user namespace for the worker's guards, which remount each
device bind read-only here (nosuid, device access kept) and cap the scratch /tmp's file count
(nr_inodes), before every capability is dropped. A read-only mount refuses chmod, chown and
utime of the node (EROFS) while reads and writes of the device itself still work.

References: mount(2), mount_namespaces(7), pivot_root(2), user_namespaces(7).
"""

from __future__ import annotations

import ctypes
import errno
import os
from collections.abc import Mapping, Sequence

_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
_MS_NOATIME, _MS_NODIRATIME, _MS_RELATIME = 1024, 2048, 1 << 21
# statvfs(3) f_flag bits that a remount must keep (the kernel locks them on a mount copied into
# a user namespace), mapped to the mount(2) flags that set them.
_KEEP = {os.ST_NOSUID: _MS_NOSUID, os.ST_NODEV: _MS_NODEV, os.ST_NOEXEC: _MS_NOEXEC,
         os.ST_NOATIME: _MS_NOATIME, os.ST_NODIRATIME: _MS_NODIRATIME,
         os.ST_RELATIME: _MS_RELATIME}
_MNT_DETACH = 2
_SYS_MOUNT_SETATTR = 442  # the same number on x86_64 and aarch64
_AT_FDCWD, _AT_RECURSIVE, _MOUNT_ATTR_RDONLY, _MOUNT_ATTR_NODEV = -100, 0x8000, 1, 4
_CLONE_NEWNS, _CLONE_NEWUSER = 0x00020000, 0x10000000
_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
_NEW_ROOT = "/tmp"  # mount point of the new root's tmpfs, in the worker's namespace only


class MountError(Exception):
    """The private root or a read-only remount could not be made; the worker must not run."""


class NoNamespace(MountError):
    """The kernel refused the worker a mount namespace (root without CAP_SYS_ADMIN, as in a
    container; unprivileged without user namespaces)."""


class NoReadOnlyTree(MountError):
    """mount_setattr(2) was refused (a kernel before 5.12, a container's profile that predates
    it), so the mounts beneath the private root's folders would stay writable, with devices."""


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result < 0:
        err = ctypes.get_errno()
        raise MountError(f"{what} failed: {os.strerror(err)} (errno {err})")


def _mount(source: str | None, target: str, fstype: str | None, flags: int,
           data: str | None = None) -> None:
    def encode(text: str | None) -> bytes | None:
        return None if text is None else text.encode()

    _check(_libc().mount(encode(source), target.encode(), encode(fstype), flags, encode(data)),
           f"mount({source}, {target})")


def _remount_ro(target: str, extra: int) -> None:
    """Remount the bind at `target` read-only and nosuid (plus `extra`), keeping its locked
    flags; checked with statvfs."""
    current = os.statvfs(target).f_flag
    keep = 0
    for st_flag, ms_flag in _KEEP.items():
        if current & st_flag:
            keep |= ms_flag
    _mount(None, target, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | keep | extra)
    if not os.statvfs(target).f_flag & os.ST_RDONLY:
        raise MountError(f"{target} is still writable after the remount")


def remount_read_only(paths: Sequence[str]) -> None:
    """Remount each bind in `paths` (device nodes) read-only; needs CAP_SYS_ADMIN over the
    mount namespace (bwrap's user namespace gives it until the guards drop it)."""
    for path in paths:
        _remount_ro(path, 0)


def limit_files(path: str, inodes: int) -> None:
    """Cap the files and folders of the tmpfs mounted at `path` (the bwrap tier's scratch /tmp)
    at `inodes`, keeping its other flags; checked with statvfs. bwrap can set only a tmpfs's
    size, which an empty file does not use: the default inode count (half the host's RAM
    pages) let one worker pin gigabytes of kernel memory in empty files. Needs CAP_SYS_ADMIN
    over the tmpfs (bwrap's user namespace made it)."""
    current = os.statvfs(path).f_flag
    keep = 0
    for st_flag, ms_flag in _KEEP.items():
        if current & st_flag:
            keep |= ms_flag
    _mount(None, path, None, _MS_REMOUNT | keep, f"nr_inodes={inodes}")
    if not 0 < os.statvfs(path).f_files <= inodes:
        raise MountError(f"{path} still allows more files than nr_inodes={inodes} after the "
                         "remount")


def _own_namespaces() -> None:
    """A mount namespace of its own: as root directly; otherwise inside a new user namespace
    where this uid and gid map to themselves (an unprivileged id) and setgroups is denied.
    NoNamespace, with nothing changed, where the kernel refuses it."""
    uid, gid = os.getuid(), os.getgid()  # read before: a new user namespace maps nothing yet
    flags = _CLONE_NEWNS if uid == 0 else _CLONE_NEWUSER | _CLONE_NEWNS
    if _libc().unshare(flags) != 0:
        err = ctypes.get_errno()
        raise NoNamespace(f"unshare({'CLONE_NEWNS' if uid == 0 else 'CLONE_NEWUSER|NEWNS'}) "
                          f"failed: {os.strerror(err)} (errno {err})")
    if uid != 0:
        _map_ids(uid, gid)


def _map_ids(uid: int, gid: int) -> None:
    """Map this uid and gid to themselves in the user namespace just made; deny setgroups."""
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                       ("gid_map", f"{gid} {gid} 1")):
        fd = os.open(f"/proc/self/{name}", os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)


def _sources(paths: Sequence[str]) -> list[tuple[str, int, bool]]:
    """(path, O_PATH descriptor, is a directory) for each path not beneath another one."""
    ordered = sorted(set(paths))
    kept = [p for p in ordered
            if not any(p != q and p.startswith(q.rstrip("/") + "/") for q in ordered)]
    opened: list[tuple[str, int, bool]] = []
    try:
        for path in kept:
            if not os.path.isabs(path):
                raise MountError(f"not an absolute path: {path}")
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            opened.append((path, fd, os.path.isdir(f"/proc/self/fd/{fd}")))
    except BaseException:
        for _, fd, _ in opened:
            os.close(fd)
        raise
    return opened


def _pivot(new_root: str) -> None:
    """Make `new_root` (a mount point) this namespace's root and detach the old one."""
    number = _SYS_PIVOT_ROOT.get(os.uname().machine)
    if number is None:
        raise MountError(f"pivot_root: unknown machine {os.uname().machine}")
    os.chdir(new_root)
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    _check(int(libc.syscall(number, b".", b".")), "pivot_root")
    _check(libc.umount2(b".", _MNT_DETACH), "umount2(old root)")
    os.chdir("/")


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


def _mount_setattr(path: str, attr_set: int, attr_clr: int, flags: int) -> bool:
    """mount_setattr(2) on `path`; False where it does not exist (a kernel before 5.12:
    ENOSYS) or a container's seccomp profile predates it (EPERM)."""
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    attr = _MountAttr(attr_set, attr_clr, 0, 0)
    if int(libc.syscall(_SYS_MOUNT_SETATTR, _AT_FDCWD, path.encode(), flags,
                        ctypes.byref(attr), ctypes.sizeof(attr))) < 0:
        if ctypes.get_errno() in (errno.ENOSYS, errno.EPERM):
            return False
        _check(-1, f"mount_setattr({path})")
    return True


def _read_only_tree(path: str) -> bool:
    """Make every mount at and beneath `path`, in this process's own mount namespace,
    read-only and without devices (mount_setattr(2) with AT_RECURSIVE: only these two flags
    are added, so the flags the kernel locks in a user namespace stay as they are); checked on
    `path`. Without devices: a device node anywhere on the host's file system (a chroot's or a
    container rootfs's /dev, with its devpts bound beside it) opened as on the host, so a
    read-only open of its ptmx made a host pty after all. False, the mounts as they were
    (reads set access times, device nodes open), where mount_setattr is refused."""
    if not _mount_setattr(path, _MOUNT_ATTR_RDONLY | _MOUNT_ATTR_NODEV, 0, _AT_RECURSIVE):
        return False
    flags = os.statvfs(path).f_flag
    if not flags & os.ST_RDONLY or not flags & os.ST_NODEV:
        raise MountError(f"{path} is still writable or has devices after mount_setattr")
    return True


def private_root(paths: Sequence[str], symlinks: Mapping[str, str], *,
                 whole_tree: bool = False) -> None:
    """Replace this process's view of the file system by a read-only tree of `paths` (files or
    folders, each at its own absolute path) and `symlinks` (path -> target); see the module
    docstring. NoNamespace where the kernel refuses the mount namespace; MountError (or
    OSError) when any other step fails, and with `whole_tree` (the seccomp tier: no Landlock
    behind it) also where mount_setattr(2) is refused, which would leave the mounts beneath
    each bound folder writable (reads set access times) and with devices."""
    _own_namespaces()
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)  # nothing propagates to the host
    sources = _sources(paths)  # opened in the new namespace: a bind's source must be in it
    old_umask = os.umask(0o022)
    try:
        _mount("tmpfs", _NEW_ROOT, "tmpfs", _MS_NOSUID | _MS_NODEV, "size=256k,mode=0755")
        for path, fd, is_dir in sources:
            target = _NEW_ROOT + path
            os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
            if is_dir:
                os.mkdir(target, 0o755)
            else:
                os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o644))
            _mount(f"/proc/self/fd/{fd}", target, None, _MS_BIND | _MS_REC)
            _remount_ro(target, _MS_NODEV)
        for link, dest in sorted(symlinks.items()):
            target = _NEW_ROOT + link
            if not os.path.lexists(target):
                os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
                os.symlink(dest, target)
        _remount_ro(_NEW_ROOT, _MS_NODEV | _MS_NOEXEC)
        if not _read_only_tree(_NEW_ROOT) and whole_tree:  # the mounts beneath each bound tree
            raise NoReadOnlyTree("mount_setattr(2) refused (a kernel before 5.12, or a container's "
                             "profile): mounts beneath the private root's folders would stay "
                             "writable, with devices")
        _pivot(_NEW_ROOT)
    finally:
        os.umask(old_umask)
        for _, fd, _ in sources:
            os.close(fd)
