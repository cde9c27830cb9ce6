"""What each tier is (the objects are in registry.py), the supervisor's own protection, and
who the worker runs as.

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
  processes. Unprivileged where the kernel refuses the worker a mount namespace there is no
  private root (`tier_limits`); as root there the tier is not offered (root_probe.py).
- seccomp: no Landlock, no bwrap: the worker's own mount namespace with the Landlock tier's
  private root (worker_root.py: only the interpreter's prefix, the libraries and the worker
  files, read-only and nodev; no /proc, /dev or /tmp) is its only file-system confinement;
  where the kernel refuses that namespace, or mount_setattr(2), the tier is not offered (the
  probe builds that root once, root_probe.py) and the worker refuses to run
  (worker_guard.NO_MOUNT_NAMESPACE). Its filter is compiled read-only (seccomp_policy.py): no
  file opened for writing, created, removed or renamed. No scoping of signals beyond the
  filter's pid checks.
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

from .identity import worker_identity
from .root_probe import private_root_check, private_root_possible

_PR_SET_DUMPABLE, _PR_GET_DUMPABLE = 4, 3

@functools.cache
def make_supervisor_non_dumpable() -> bool:
    """Set PR_SET_DUMPABLE 0 on this process (once); True when it took effect."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
        return int(libc.prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def identity_limits(worker_user: str) -> tuple[str, ...]:
    """Who the worker runs as for this supervisor, and what that leaves open, in words
    (every tier; shown by `rmh doctor`)."""
    try:
        ident = worker_identity(worker_user)
    except ValueError as exc:
        return (f"worker_user is invalid: {exc}",)
    if ident is not None:
        said = (f"supervisor is root: the worker runs as {ident.source} with no supplementary "
                "groups on every tier, so it owns no host file",)
        check = private_root_check()
        if not check.namespace or check.user_namespace:
            return said
        return (*said, "the kernel refuses that uid a user namespace of its own, so outside "
                "bwrap every worker of every root session on this machine is that one uid in "
                "the host's namespace and shares its kernel counts: the task cap (max_tasks, "
                "RLIMIT_NPROC) counts their tasks together (a cell holding it leaves other "
                "sessions' cells unable to start a thread until its worker ends, at its "
                "deadline at most); no cell may queue a real-time signal (cap 0)")
    if private_root_possible():  # its unshare(CLONE_NEWUSER|CLONE_NEWNS) worked here
        return ("supervisor is unprivileged: the worker keeps this user's kernel uid, in its "
                "own user namespace (no capability or ptrace right over this user's other "
                "processes; the task cap counts only its own tasks); only the seccomp filter "
                "(no chmod, chown, utime, xattr, lock; on the seccomp tier no write at all) "
                "and the private root (with Landlock on the landlock tier), or bwrap, keep it "
                "off this user's files",)
    return ("supervisor is unprivileged and the kernel refuses the worker a user namespace "
            "of its own (not allowed, or a container's profile refusing unshare): outside "
            "bwrap the worker runs as this user's uid, in no user namespace; the task cap "
            "(RLIMIT_NPROC) counts every process of the user (every worker's together); no "
            "cell may queue a real-time signal (cap 0); the seccomp tier is not "
            "offered; on the Landlock tier it has no private root (stat of any path); only "
            "the filter keeps metadata changes off this user's files",)
