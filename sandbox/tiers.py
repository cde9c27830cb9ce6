"""What each tier does not guarantee, the supervisor's own protection, and when to refuse.

Every real tier runs the same worker guards (rlimits including the task cap, no capabilities,
no_new_privs, PR_SET_PDEATHSIG, the seccomp allowlist of `seccomp_policy.py`, which refuses
every metadata change, lock and PDEATHSIG change) and the same identity rule (`identity.py`:
untrusted code never runs as the supervisor's uid when that is root); they differ in what
confines the file system and the worker's view of other processes:

- bwrap+seccomp: user, PID, network, IPC, UTS and mount namespaces, uid 65534 inside (bwrap
  itself started as the dedicated uid when the supervisor is root), no /proc of the host, only
  the interpreter's prefix and the worker files bound read-only, a read-only root and a
  read-only /dev of four device nodes, themselves remounted read-only by the worker's guards
  (worker_root.py); one writable mount (/tmp, `scratch_mb`); no /dev/shm (bubblewrap(1)).
- landlock+seccomp: the worker's own mount namespace whose root holds only the interpreter's
  prefix, the libraries and the worker files, read-only (worker_root.py: no /proc, no /dev, no
  /tmp; stat, readlink, access of any other path: ENOENT), and Landlock's read-only allowlist
  of the same paths (landlock(7)); with Landlock ABI >= 6 signals and abstract Unix sockets are
  scoped to the worker's domain. As root the worker drops to the dedicated uid; its own user
  namespace, where the kernel allows one, takes away any ptrace right over the user's other
  processes. Unprivileged without user namespaces there is no private root (`tier_limits`).
- seccomp: NO file-system confinement of reads: the worker reads what its uid can (as an
  unprivileged supervisor: the user's files, rmh.toml, the vault). Its filter is compiled
  read-only (seccomp_policy.py): no file opened for writing, created, removed or renamed.
  Never chosen by "auto"; only when named, with a warning; refused while a secret (an API
  key) is configured.

The supervisor makes itself non-dumpable (prctl(2) PR_SET_DUMPABLE 0) before the first worker
starts: /proc/<ppid>/{mem,environ,fd,cwd} then refuse a same-uid worker, and no worker can
ptrace it. If that fails, every tier without a PID namespace is refused while a secret is
configured.
"""

from __future__ import annotations

import ctypes
import functools

from .config import TIER_BWRAP, TIER_LANDLOCK, TIER_SECCOMP, TIER_UNSAFE, SandboxConfig
from .identity import private_root_possible, user_namespaces, worker_identity

_PR_SET_DUMPABLE, _PR_GET_DUMPABLE = 4, 3

_LIMITS: dict[str, tuple[str, ...]] = {
    TIER_BWRAP: (
        "the kernel is shared: a kernel bug reachable through the allowed syscalls is an escape",
        "/dev/null, zero, random and urandom are the host's nodes, bound read-only (chmod, "
        "chown, utime: EROFS, and refused by the filter); writing to them works as on the host",
    ),
    TIER_LANDLOCK: (
        "the kernel is shared: a kernel bug reachable through the allowed syscalls is an escape",
        "the interpreter's prefix and the library folders (/usr/lib, /lib64, ...) are visible "
        "read-only: their files' modes, owners and times can be read",
    ),
    TIER_SECCOMP: (
        "no file-system confinement of reads: the worker reads, lists and stats whatever its "
        "uid can (as an unprivileged supervisor: the user's files, the vault, rmh.toml; refused "
        "while an API key is configured; never chosen by auto); it writes no file (the filter "
        "refuses open for writing, create, remove and rename)",
        "host processes are visible in /proc (pids, command lines of other users' processes "
        "where /proc allows it); with no user namespace (unprivileged, none allowed) the "
        "worker has the supervisor's uid: /proc/<ppid> is closed only because the supervisor "
        "is non-dumpable, and other processes of that user are open to it through /proc",
        "the kernel is shared, and no namespace separates the worker from the host",
    ),
    TIER_UNSAFE: ("no isolation at all: rlimits only",),
}


_LANDLOCK_NO_ROOT = (
    "unprivileged and user namespaces are not allowed, so the worker gets no private root: "
    "stat, lstat, statx, readlink and access of any host path work (Landlock has no hook for "
    "them): modes, owners and times of host files, and the pids and uids of host processes in "
    "/proc; processes are visible by pid, and only seccomp's pid checks, Landlock's signal "
    "scope (ABI >= 6) and the non-dumpable supervisor keep the worker from acting on them",
)


def tier_limits(tier: str) -> tuple[str, ...]:
    """What `tier` does not guarantee on this machine for this supervisor, in words (shown by
    `rmh doctor`)."""
    if tier == TIER_LANDLOCK and not private_root_possible():
        return (*_LIMITS[tier], *_LANDLOCK_NO_ROOT)
    return _LIMITS.get(tier, ("unknown tier",))


@functools.cache
def make_supervisor_non_dumpable() -> bool:
    """Set PR_SET_DUMPABLE 0 on this process (once); True when it took effect."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
        return int(libc.prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def refusal(tier: str, config: SandboxConfig, non_dumpable: bool) -> str | None:
    """Why `tier` must not start under `config`, or None when it may."""
    if not config.secret_configured:
        return None
    if tier == TIER_SECCOMP:
        return ("the seccomp tier does not confine the file system, so the worker could read "
                "the configured API key from rmh.toml or the environment files of the "
                "supervisor's user; install bubblewrap or use a kernel with Landlock")
    if tier == TIER_LANDLOCK and not non_dumpable:
        return ("the supervisor could not make itself non-dumpable, so a same-uid worker could "
                "reach its memory through /proc or ptrace while an API key is configured")
    return None


def identity_limits(worker_user: str) -> tuple[str, ...]:
    """Who the worker runs as for this supervisor, and what that leaves open, in words
    (every tier; shown by `rmh doctor`)."""
    try:
        ident = worker_identity(worker_user)
    except ValueError as exc:
        return (f"worker_user is invalid: {exc}",)
    if ident is not None:
        return (f"supervisor is root: the worker runs as {ident.source} with no supplementary "
                "groups on every tier, so it owns no host file",)
    if user_namespaces():
        return ("supervisor is unprivileged: the worker keeps this user's kernel uid, in its "
                "own user namespace (no capability or ptrace right over this user's other "
                "processes; the task cap counts only its own tasks); only the seccomp filter "
                "(no chmod, chown, utime, xattr, lock; on the seccomp tier no write at all) "
                "and, except on the seccomp tier, the private root with Landlock, or bwrap, "
                "keep it off this user's files",)
    return ("supervisor is unprivileged and user namespaces are not allowed: the worker runs "
            "as this user's uid; the task cap (RLIMIT_NPROC) counts every process of the "
            "user; on the seccomp tier it can read /proc/PID/environ and mem of this user's "
            "other processes; on the Landlock tier it has no private root (stat of any path); "
            "only the filter keeps metadata changes off this user's files",)
