"""Who untrusted code runs as: never the supervisor's uid (the identity rule).

- Supervisor root: the worker runs as a dedicated unprivileged uid/gid with no supplementary
  groups, on every tier. `[sandbox] worker_user` names it: "auto" is the user `rmh-sandbox`
  when it exists (`useradd --system --no-create-home --shell /usr/sbin/nologin rmh-sandbox`),
  else uid/gid 65534 (nobody/nogroup); a user name; or "UID:GID". bwrap itself is started as
  that uid (so the uid outside its user namespace is not root); on the Landlock and seccomp
  tiers the worker starts as root and drops to it in `worker_guard` before any user code.
- Supervisor unprivileged: the worker cannot change uid; where user namespaces exist it
  unshares its own (bwrap's, or one it makes itself while single-threaded), so it holds no
  capability and no ptrace right over the user's other processes (their /proc/PID/mem and
  environ refuse it), and RLIMIT_NPROC counts only its own tasks (Linux >= 5.14 counts per
  user namespace). Its kernel uid is still the user's: what only the seccomp allowlist then
  keeps from the user's files is listed by `tiers.identity_limits`.
"""

from __future__ import annotations

import os
import pwd
from dataclasses import dataclass

from . import shortage

DEDICATED_USER = "rmh-sandbox"
NOBODY = 65534


@dataclass(frozen=True)
class WorkerIdentity:
    """The uid/gid the worker runs as, and how it was chosen (said by `rmh doctor`)."""

    uid: int
    gid: int
    source: str


def resolve(spec: str) -> WorkerIdentity:
    """The identity `[sandbox] worker_user = spec` names; ValueError for a bad or root one."""
    if spec == "auto":
        try:
            entry = pwd.getpwnam(DEDICATED_USER)
        except KeyError:
            return WorkerIdentity(NOBODY, NOBODY, f"uid/gid {NOBODY} (no user {DEDICATED_USER})")
        return WorkerIdentity(entry.pw_uid, entry.pw_gid, f"user {DEDICATED_USER}")
    if ":" in spec:
        uid_text, _, gid_text = spec.partition(":")
        try:
            uid, gid = int(uid_text), int(gid_text)
        except ValueError:
            raise ValueError(f"worker_user {spec!r}: expected UID:GID numbers") from None
        ident = WorkerIdentity(uid, gid, f"uid/gid {uid}:{gid}")
    else:
        try:
            entry = pwd.getpwnam(spec)
        except KeyError:
            raise ValueError(f"worker_user {spec!r}: no such user") from None
        ident = WorkerIdentity(entry.pw_uid, entry.pw_gid, f"user {spec}")
    if ident.uid <= 0 or ident.gid <= 0:
        raise ValueError(f"worker_user {spec!r}: the worker must never run as uid or gid 0")
    return ident


def worker_identity(spec: str) -> WorkerIdentity | None:
    """The identity to drop to, or None when this supervisor is not root (it cannot)."""
    return resolve(spec) if os.geteuid() == 0 else None


def user_namespaces() -> bool:
    """True when the kernel lets an unprivileged process make a user namespace (the sysctls
    of user_namespaces(7), Debian's and Ubuntu's switches included). The worker reports
    whether it made one in its guard list ("userns")."""
    checks = (  # (sysctl, the value that refuses it)
        ("/proc/sys/user/max_user_namespaces", 0),
        ("/proc/sys/kernel/unprivileged_userns_clone", 0),
        ("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", 1))
    for path, refusing in checks:
        try:
            with open(path, encoding="ascii") as f:
                value = int(f.read().strip())
            if value == refusing:
                return False
        except (OSError, ValueError) as exc:
            shortage.note(exc)  # a probe that read none for want of descriptors is not kept
            if path.endswith("max_user_namespaces"):
                return False
    return True
