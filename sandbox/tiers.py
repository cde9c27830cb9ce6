"""What each tier does not guarantee, the supervisor's own protection, and when to refuse.

Every real tier runs the same worker guards (rlimits including the task cap, no capabilities,
no_new_privs, PR_SET_PDEATHSIG, the seccomp allowlist of `seccomp_policy.py`, which refuses
every metadata change, lock and PDEATHSIG change) and the same identity rule (`identity.py`:
untrusted code never runs as the supervisor's uid when that is root); they differ in what
confines the file system and the worker's view of other processes:

- bwrap+seccomp: user, PID, network, IPC, UTS and mount namespaces, uid 65534 inside (bwrap
  itself started as the dedicated uid when the supervisor is root), no /proc of the host, only
  the interpreter's prefix and the worker files bound read-only, a read-only /dev of four
  device nodes, one writable mount (/tmp, `scratch_mb`) (bubblewrap(1)).
- landlock+seccomp: the file system is an allowlist of the interpreter's prefix and the
  libraries, read-only (landlock(7)), which hides /proc's files but not stat/readlink of any
  path; with Landlock ABI >= 6 signals and abstract Unix sockets are scoped to the worker's
  domain. As root the worker drops to the dedicated uid; its own user namespace, where the
  kernel allows one, takes away any ptrace right over the user's other processes.
- seccomp: NO file-system confinement: the worker reads and writes what its uid can (as an
  unprivileged supervisor: the user's files, rmh.toml, the vault). Never chosen by "auto";
  only when named, with a warning; refused while a secret (an API key) is configured.

The supervisor makes itself non-dumpable (prctl(2) PR_SET_DUMPABLE 0) before the first worker
starts: /proc/<ppid>/{mem,environ,fd,cwd} then refuse a same-uid worker, and no worker can
ptrace it. If that fails, every tier without a PID namespace is refused while a secret is
configured.
"""

from __future__ import annotations

import ctypes
import functools

from .config import TIER_BWRAP, TIER_LANDLOCK, TIER_SECCOMP, TIER_UNSAFE, SandboxConfig
from .identity import user_namespaces, worker_identity

_PR_SET_DUMPABLE, _PR_GET_DUMPABLE = 4, 3

_LIMITS: dict[str, tuple[str, ...]] = {
    TIER_BWRAP: (
        "the kernel is shared: a kernel bug reachable through the allowed syscalls is an escape",
        "/dev/null, zero, random and urandom are the host's nodes (bwrap 0.8 cannot bind a "
        "device read-only): only the filter keeps utime(NULL) off their times",
    ),
    TIER_LANDLOCK: (
        "stat, readlink and statx of any path work (Landlock has no hook for them): modes, "
        "owners and times of host files, and the pids and uids of host processes in /proc",
        "processes are visible by pid; only seccomp's pid checks, Landlock's signal scope "
        "(ABI >= 6), the worker's uid or user namespace and the non-dumpable supervisor keep "
        "it from acting on them",
    ),
    TIER_SECCOMP: (
        "no file-system confinement: the worker reads and writes whatever its uid can (as an "
        "unprivileged supervisor: the user's files, the vault, rmh.toml; refused while an API "
        "key is configured; never chosen by auto)",
        "with no user namespace (unprivileged, none allowed) the worker has the supervisor's "
        "uid: /proc/<ppid> is closed only because the supervisor is non-dumpable, and other "
        "processes of that user are open to it through /proc",
    ),
    TIER_UNSAFE: ("no isolation at all: rlimits only",),
}


def tier_limits(tier: str) -> tuple[str, ...]:
    """What `tier` does not guarantee, in words (shown by `rmh doctor`)."""
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
                "groups on every tier, so it owns no host file (on the seccomp tier only: "
                "files it creates in world-writable folders such as /tmp are its own)",)
    if user_namespaces():
        return ("supervisor is unprivileged: the worker keeps this user's kernel uid, in its "
                "own user namespace (no capability or ptrace right over this user's other "
                "processes; the task cap counts only its own tasks); only the seccomp filter "
                "(no chmod, chown, utime, xattr, lock) and, except on the seccomp tier, "
                "Landlock or bwrap keep it off this user's files",)
    return ("supervisor is unprivileged and user namespaces are not allowed: the worker runs "
            "as this user's uid; the task cap (RLIMIT_NPROC) counts every process of the "
            "user; on the seccomp tier it can read /proc/PID/environ and mem of this user's "
            "other processes; only the filter keeps metadata changes off this user's files",)
