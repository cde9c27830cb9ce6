"""Kernel guards the worker installs on itself before it runs any user code (stdlib only).

This file runs inside the sandbox (it is bound read-only next to `worker.py`) and is also
imported by the host's probe for `landlock_abi()`. It must import nothing but the standard
library. Order of installation, each step irreversible for the process:

1. rlimits (address space, CPU, open files, file size, no core dumps, no nice value below
   the one it started with (RLIMIT_NICE 0, whatever the supervisor's), no locked memory:
   mmap(MAP_LOCKED) pinned the supervisor's RLIMIT_MEMLOCK of RAM, all of memory_mb where
   that is unlimited); SIGXFSZ ignored so an over-long write fails with EFBIG instead of
   killing the cell;
2. the worker's view of the file system (`worker_root.py`): on the Landlock and seccomp tiers
   a private mount namespace whose root holds only the interpreter, the libraries and the
   worker files, read-only (its own user namespace too when the supervisor is unprivileged);
   the seccomp tier, which has no Landlock behind it, refuses to run without one
   (`NO_MOUNT_NAMESPACE`: it cannot keep the host's files, FIFOs, leases and devices from its
   cells otherwise); on the bwrap tier the device binds remounted read-only and the scratch
   /tmp's file count capped;
3. the Landlock ruleset is built (its paths opened while they can still be reached);
4. identity (supervisor root, Landlock and seccomp tiers): setgroups([]), setresgid, setresuid
   to the dedicated uid/gid, so untrusted code never runs as the supervisor's uid; its imports
   need no search right on the interpreter's ancestors (a 0700 /root): in the private root
   those are folders of its tmpfs (mode 0755), and a drop is refused without one;
5. its own user namespace (unshare(CLONE_NEWUSER), while single-threaded), where asked:
   no capability over the user's other processes, and RLIMIT_NPROC then counts only its tasks;
6. RLIMIT_NPROC (the task cap) and RLIMIT_SIGPENDING (queued signals), set inside that
   namespace (`_IN_NAMESPACE`: set before it, a limit caps the uid's count outside it too);
   without one the uid's count is shared with every worker of that uid, and SIGPENDING is 0;
7. capabilities dropped (bounding, ambient, effective, permitted, inheritable), which matters
   when the worker runs as root without a user namespace, or has just made one;
8. PR_SET_PDEATHSIG(SIGKILL), after every credential change (each one clears it), then
   getppid() checked: if the supervisor already died, the worker exits;
9. `PR_SET_NO_NEW_PRIVS`, and `PR_SET_DUMPABLE` 0 (after the last credential change, which
   resets it to fs.suid_dumpable): the kernel does not apply RLIMIT_CORE to a core_pattern
   pipe (fs/coredump.c hands the crash to systemd-coredump or apport, root helpers that read
   the worker's memory, whatever the limit), and suid_dumpable 2 (where apport sets it)
   dumps even a worker that changed uid; an unprivileged supervisor's worker was dumpable
   on every tier;
10. Landlock (file-system allowlist, no TCP, signal and abstract-socket scoping where the ABI has
   them);
11. seccomp: the BPF allowlist compiled by the host for this worker's pid (`seccomp_policy.py`)
   and loaded with `prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER)`. Loading it from here means
   the worker does not need libseccomp, only `ctypes`; the filter refuses PR_SET_PDEATHSIG.

References: landlock(7), seccomp(2), capabilities(7), prctl(2), user_namespaces(7).
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or __package__:  # the host's package (its probe imports this module)
    from . import worker_root
else:  # inside the sandbox: a plain module next to this one
    import worker_root

_PR_SET_PDEATHSIG = 1
_PR_GET_DUMPABLE, _PR_SET_DUMPABLE = 3, 4
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_PR_CAPBSET_DROP = 24
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_SECCOMP_MODE_FILTER = 2
_CLONE_NEWUSER = 0x10000000
_SYS_CAPSET = {"x86_64": 126, "aarch64": 91}
_SYS_LANDLOCK_CREATE_RULESET = 444
_SYS_LANDLOCK_ADD_RULE = 445
_SYS_LANDLOCK_RESTRICT_SELF = 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1

# Landlock file-system rights, by the ABI that introduced them.
_FS_EXECUTE, _FS_WRITE_FILE, _FS_READ_FILE, _FS_READ_DIR = 1, 2, 4, 8
_FS_ABI1 = (1 << 13) - 1
_FS_REFER, _FS_TRUNCATE, _FS_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_NET_BIND_TCP, _NET_CONNECT_TCP = 1, 2
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1, 2


class GuardError(Exception):
    """A guard the tier requires could not be installed; the worker must not run code."""


# Why the seccomp tier refuses to start where its worker cannot make a mount namespace.
NO_MOUNT_NAMESPACE = (
    "the seccomp tier needs a mount namespace of the worker's own (root with CAP_SYS_ADMIN, or "
    "user namespaces allowed) and the kernel refused one: without it a cell reads the host's "
    "files, takes its FIFOs' data, breaks its files' leases and opens its device nodes; "
    "use the landlock or bwrap tier, or --unsafe-no-sandbox")


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise GuardError(f"{what} failed: {os.strerror(err)} (errno {err})")
    return result


def landlock_abi() -> int:
    """The running kernel's Landlock ABI version, or 0 when Landlock is unavailable."""
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    version = int(
        libc.syscall(_SYS_LANDLOCK_CREATE_RULESET, None, 0, _LANDLOCK_CREATE_RULESET_VERSION)
    )
    return max(version, 0)


def set_rlimits(limits: Mapping[str, int]) -> None:
    """Lower soft and hard limits (names: AS, CPU, NOFILE, FSIZE, CORE, MEMLOCK, NICE, NPROC,
    STACK, SIGPENDING), never above the hard limit the worker has: a value past it (`[sandbox]
    max_tasks = 200000` where the user's hard RLIMIT_NPROC is 96555) was a ValueError that
    killed the worker at start; the lower one holds instead."""
    for name, value in limits.items():
        which = getattr(resource, f"RLIMIT_{name}")
        hard = resource.getrlimit(which)[1]
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(which, (value, value))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def drop_bounding_set() -> None:
    """Empty the bounding and ambient sets (needs CAP_SETPCAP; a no-op without it)."""
    libc = _libc()
    for cap in range(64):
        libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)  # EINVAL past the last cap; EPERM if none
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)


def drop_capabilities() -> None:
    """Empty every capability set of this process (a no-op for an unprivileged process)."""
    drop_bounding_set()
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()  # two cap_user_data_t structs, all zero
    number = _SYS_CAPSET.get(os.uname().machine)
    if number is None:
        raise GuardError(f"capset: unknown machine {os.uname().machine}")
    _check(_libc().syscall(number, header, data), "capset")


def drop_identity(uid: int, gid: int) -> None:
    """No supplementary groups, then gid, then uid (real, effective, saved); checked."""
    if uid <= 0 or gid <= 0:
        raise GuardError("refusing to 'drop' to uid or gid 0")
    drop_bounding_set()  # while CAP_SETPCAP is still held
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid) \
            or os.getgroups():
        raise GuardError("the identity drop did not take effect")


def own_user_namespace() -> bool:
    """unshare(CLONE_NEWUSER) (single-threaded only); False when the kernel refuses."""
    return int(_libc().unshare(_CLONE_NEWUSER)) == 0


def die_with_parent(parent: int) -> None:
    """PR_SET_PDEATHSIG(SIGKILL); if the parent is already gone, exit now."""
    _check(_libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PDEATHSIG)")
    if os.getppid() != parent:
        os._exit(0)


def no_core_dumps() -> None:
    """PR_SET_DUMPABLE 0 (checked): no core dump of this process reaches any handler."""
    libc = _libc()
    _check(libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0), "prctl(SET_DUMPABLE)")
    if libc.prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise GuardError("the worker is still dumpable")


def no_new_privs() -> None:
    """Set PR_SET_NO_NEW_PRIVS (required by unprivileged seccomp and Landlock)."""
    _check(_libc().prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(NO_NEW_PRIVS)")


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def landlock_ruleset(read_paths: Sequence[str]) -> tuple[int, int]:
    """(ruleset fd, ABI) allowing only reading/executing beneath `read_paths`, and denying
    every other file access, TCP bind/connect (ABI >= 4), signals and abstract Unix sockets
    outside the domain (ABI >= 6); enforced by `landlock_enforce`."""
    abi = landlock_abi()
    if abi < 1:
        raise GuardError("Landlock is not available")
    fs = _FS_ABI1 | (_FS_REFER if abi >= 2 else 0) | (_FS_TRUNCATE if abi >= 3 else 0)
    fs |= _FS_IOCTL_DEV if abi >= 5 else 0
    attr = _RulesetAttr(fs, (_NET_BIND_TCP | _NET_CONNECT_TCP) if abi >= 4 else 0, 0)
    if abi >= 6:
        attr.scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL
    size = 8 if abi < 4 else (16 if abi < 6 else 24)
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    ruleset = _check(
        int(libc.syscall(_SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), size, 0)),
        "landlock_create_ruleset",
    )
    try:
        for path in read_paths:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                is_dir = os.path.isdir(path)
                allowed = _FS_EXECUTE | _FS_READ_FILE | (_FS_READ_DIR if is_dir else 0)
                rule = _PathBeneath(allowed, fd)
                _check(
                    int(libc.syscall(_SYS_LANDLOCK_ADD_RULE, ruleset,
                                     _LANDLOCK_RULE_PATH_BENEATH, ctypes.byref(rule), 0)),
                    f"landlock_add_rule({path})",
                )
            finally:
                os.close(fd)
    except BaseException:
        os.close(ruleset)
        raise
    return ruleset, abi


def landlock_enforce(ruleset: int) -> None:
    """landlock_restrict_self(ruleset) (needs no_new_privs), then close the ruleset."""
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    try:
        _check(int(libc.syscall(_SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0)), "restrict_self")
    finally:
        os.close(ruleset)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def load_seccomp(bpf: bytes) -> None:
    """Load a classic-BPF seccomp program (8-byte `sock_filter` instructions)."""
    if not bpf or len(bpf) % 8:
        raise GuardError("seccomp program has a bad length")
    buf = ctypes.create_string_buffer(bpf, len(bpf))
    prog = _SockFprog(len(bpf) // 8, ctypes.cast(buf, ctypes.c_void_p))
    libc = _libc()
    _check(libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0),
           "prctl(SET_SECCOMP)")


# Limits set only once the worker is in its own user namespace (step 6): the kernel counts
# queued signals at every level of user namespaces, and caps each level above the worker's at
# the limit its creator had when it made the namespace. Set before the unshare, the worker's
# 128 became the cap of its uid's count outside it, one count for every worker of that uid:
# a cell holding 128 queued signals left every other session's worker unable to queue one
# (EAGAIN), a channel between sessions (SBX6, session 32).
# Where the worker could not make one (user namespaces refused: as root it drops to the
# dedicated uid in the host's namespace; unprivileged it stays the user's uid), its count is its
# uid's own, shared with every other worker of that uid: one cell queueing up to any limit left
# every other session's worker unable to queue one. The limit is then 0: a cell queues no
# real-time signal at all (the kernel still delivers standard ones, and kill()'s), so holds
# none of that count (SBX8, session 33).
_IN_NAMESPACE = ("SIGPENDING",)
_SHARED_COUNT = {"SIGPENDING": 0}


def install(plan: Mapping[str, Any], parent: int) -> list[str]:
    """Install the guards named by the host's plan, in the order of this module's docstring;
    `parent` is the pid this process saw as its parent when it started. Returns the names of
    those installed."""
    done: list[str] = []
    rlimits = dict(plan.get("rlimits", {}))
    late = {name: rlimits.pop(name) for name in _IN_NAMESPACE if name in rlimits}
    set_rlimits(rlimits)
    done.append("rlimits")
    root = plan.get("root")
    if root is not None:
        try:
            worker_root.private_root(list(root["paths"]), dict(root["symlinks"]),
                                     whole_tree=bool(root.get("whole_tree")))
        except worker_root.NoNamespace as exc:
            if root.get("whole_tree"):  # the seccomp tier: nothing else confines it
                raise GuardError(f"{NO_MOUNT_NAMESPACE} ({exc})") from exc
            raise GuardError(f"the Landlock tier's private root needs a mount namespace of the "
                             f"worker's own and the kernel refused one (root without "
                             f"CAP_SYS_ADMIN, as in a container); use the bwrap tier ({exc})"
                             ) from exc
        done.append("private-root")
    if plan.get("remount_ro"):
        worker_root.remount_read_only(list(plan["remount_ro"]))
        done.append("ro-devices")
    if plan.get("scratch_files"):
        worker_root.limit_files("/tmp", int(plan["scratch_files"]))
        done.append("scratch-files")
    userns = "private-root" in done  # it made one (unprivileged)
    userns = userns and os.getuid() != 0
    landlock = plan.get("landlock")
    ruleset, abi = landlock_ruleset(list(landlock)) if landlock is not None else (-1, 0)
    identity = plan.get("identity")
    if identity is not None:
        if root is None:  # the dropped uid would need search rights above the interpreter
            raise GuardError("a drop to the dedicated uid needs the private root")
        drop_identity(int(identity[0]), int(identity[1]))
        done.append(f"uid{identity[0]}")
    if plan.get("userns") and (userns or own_user_namespace()):
        done.append("userns")
    elif "userns" in plan:  # a tier that makes its own (not bwrap's) and could not
        late = {name: min(value, _SHARED_COUNT[name]) for name, value in late.items()}
    if plan.get("max_tasks"):
        set_rlimits({"NPROC": int(plan["max_tasks"])})
        done.append("nproc")
    set_rlimits(late)
    if plan.get("drop_caps"):
        drop_capabilities()
        done.append("caps")
    die_with_parent(parent)
    done.append("pdeathsig")
    no_new_privs()
    no_core_dumps()
    done.append("nodump")
    if ruleset >= 0:
        landlock_enforce(ruleset)
        done.append(f"landlock-abi{abi}")
    bpf_hex = plan.get("seccomp")
    if bpf_hex:
        load_seccomp(bytes.fromhex(bpf_hex))
        done.append("seccomp")
    return done
