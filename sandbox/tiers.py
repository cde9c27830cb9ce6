"""What each tier does not guarantee, the supervisor's own protection, and when to refuse.

Every real tier runs the same worker guards (rlimits, no capabilities, no_new_privs, the
seccomp allowlist of `seccomp_policy.py`); they differ in what confines the file system and
the worker's view of other processes:

- bwrap+seccomp: user, PID, network, IPC, UTS and mount namespaces, uid 65534, no /proc of the
  host, only the interpreter's prefix and the worker files bound read-only (bubblewrap(1)).
- landlock+seccomp: the same uid as the supervisor; the file system is an allowlist of the
  interpreter's prefix and the libraries, read-only (landlock(7)), which hides /proc; with
  Landlock ABI >= 6 signals and abstract Unix sockets are scoped to the worker's domain.
- seccomp: the same uid and NO file-system confinement: the worker can read and write what the
  supervisor's uid can (rmh.toml, the vault's files, $HOME). /proc/<ppid> is closed only by the
  supervisor being non-dumpable (proc(5): a non-dumpable process's /proc/PID files belong to
  root and need CAP_SYS_PTRACE, which the worker has dropped). So this tier is refused while a
  secret (an API key) is configured: the key's file would be readable.

The supervisor makes itself non-dumpable (prctl(2) PR_SET_DUMPABLE 0) before the first worker
starts: /proc/<ppid>/{mem,environ,fd,cwd} then refuse a same-uid worker, and no worker can
ptrace it. If that fails, every tier without a PID namespace is refused while a secret is
configured.
"""

from __future__ import annotations

import ctypes
import functools

from .config import TIER_BWRAP, TIER_LANDLOCK, TIER_SECCOMP, TIER_UNSAFE, SandboxConfig

_PR_SET_DUMPABLE, _PR_GET_DUMPABLE = 4, 3

_LIMITS: dict[str, tuple[str, ...]] = {
    TIER_BWRAP: (
        "the kernel is shared: a kernel bug reachable through the allowed syscalls is an escape",
    ),
    TIER_LANDLOCK: (
        "the worker runs as the supervisor's uid (as root it is root without capabilities)",
        "processes are visible by pid; only seccomp's pid checks, Landlock's signal scope "
        "(ABI >= 6) and the non-dumpable supervisor keep it from acting on them",
    ),
    TIER_SECCOMP: (
        "no file-system confinement: the worker reads and writes whatever the supervisor's "
        "uid can (refused while an API key is configured)",
        "the worker runs as the supervisor's uid; /proc/<ppid> is closed only because the "
        "supervisor is non-dumpable",
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
