"""Every isolation tier as one object, registered once (`REGISTRY`): what it needs on this
machine, how it starts a worker, what the worker installs on itself for it, what it does not
guarantee and when it must be refused. Adding a tier is one `Tier(...)` here and its name in
config.py; the host, the probe, `choose_tier` and `rmh doctor` read only these objects.
What each tier is, in words, is in tiers.py's docstring.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import launch
from .config import TIER_BWRAP, TIER_LANDLOCK, TIER_SECCOMP, TIER_UNSAFE, SandboxConfig
from .identity import user_namespaces, worker_identity
from .root_probe import private_root_possible

_MB = 1 << 20
# Files and folders the bwrap tier's scratch /tmp may hold per MiB of its size (a tmpfs inode
# and its name cost about 1 KiB of kernel memory that no rlimit counts).
SCRATCH_FILES_PER_MB = 64
# Signals queued to the worker at once (RLIMIT_SIGPENDING). The kernel counts them for the
# worker's uid outside its user namespace too, against the same count as every other process
# of that uid: with the host's default (~96,000 here) one cell that blocked a real-time
# signal and sent it to itself 200,000 times left every process of that uid (as root, every
# other worker; unprivileged, the user's whole session) unable to create a POSIX timer
# (EAGAIN) and losing queued real-time signals for as long as the worker lived. Set inside the
# worker's own user namespace (worker_guard._IN_NAMESPACE), so workers do not share one count;
# a worker without one (user namespaces refused) gets 0 (worker_guard._SHARED_COUNT).
PENDING_SIGNALS = 128


@dataclass(frozen=True)
class Mechanisms:
    """What the start-up probe found working on this machine."""

    bwrap: bool
    seccomp: bool
    landlock_abi: int
    private_root: bool  # a worker can make its private root (root_probe.py)
    read_only_tree: bool  # and every mount beneath it read-only, nodev (mount_setattr(2))


@dataclass(frozen=True)
class Tier:
    """One tier. `auto`: "auto" may pick it (the seccomp-only tier only runs when named);
    `sandboxed`: the worker's guards and seccomp filter apply (False: rlimits only);
    `pid_namespace`: the worker reports a pid of its own namespace (not checked against the
    spawned pid); `read_only_filter`: seccomp_policy's read-only program. The callables:
    `works` (available given the probe's mechanisms), `command` (the worker's command line),
    `plan` (the tier's own entries of the guard plan), `limits` (what it does not guarantee,
    in words), `refusal` (why it must not start under a config, given whether the supervisor
    is non-dumpable; None when it may)."""

    name: str
    auto: bool
    sandboxed: bool
    pid_namespace: bool
    read_only_filter: bool
    works: Callable[[Mechanisms], bool]
    command: Callable[[SandboxConfig], launch.Command]
    plan: Callable[[SandboxConfig], dict[str, Any]]
    limits: Callable[[], tuple[str, ...]]
    refusal: Callable[[SandboxConfig, bool], str | None]

    def guard_plan(self, config: SandboxConfig, seccomp_bpf: bytes | None) -> dict[str, Any]:
        """What the worker installs on itself before user code (see worker_guard.install)."""
        # NICE 0: the worker may raise its nice value, never lower it (not even back). The
        # filter allows setpriority(PRIO_PROCESS, 0), and the worker inherited the supervisor's
        # RLIMIT_NICE: under a supervisor given one (pam_limits' `nice`, systemd's LimitNICE=,
        # -19 for some distributions' audio group) each thread of a cell could go ahead of the
        # host's processes (SBX12, SBX13).
        rlimits = {"AS": config.memory_mb * _MB, "CPU": config.cpu_s,
                   "NOFILE": config.open_files, "FSIZE": config.scratch_mb * _MB, "CORE": 0,
                   "MEMLOCK": 0, "NICE": 0, "SIGPENDING": PENDING_SIGNALS}
        plan: dict[str, Any] = {"rlimits": rlimits, "drop_caps": self.sandboxed,
                                "max_tasks": config.max_tasks, **self.plan(config)}
        if self.sandboxed and seccomp_bpf is not None:
            plan["seccomp"] = seccomp_bpf.hex()
        return plan


_SHARED_KERNEL = ("the kernel is shared: a kernel bug reachable through the allowed syscalls is "
                  "an escape")


def _no_refusal(config: SandboxConfig, non_dumpable: bool) -> None:
    return None


def _own_identity(config: SandboxConfig) -> dict[str, Any]:
    """The worker drops to the dedicated uid itself (supervisor root), and makes its own user
    namespace where the kernel allows one (tiers without bwrap)."""
    plan: dict[str, Any] = {"userns": user_namespaces()}
    identity = worker_identity(config.worker_user)
    if identity is not None:
        plan["identity"] = [identity.uid, identity.gid]
    return plan


def _private_root() -> dict[str, Any]:
    """The worker's private root (worker_root.private_root): the interpreter's prefix, the
    library folders and the worker files, read-only."""
    return {"paths": launch.landlock_paths(), "symlinks": launch.lib_symlinks()}


def _seccomp_plan(config: SandboxConfig) -> dict[str, Any]:
    """`_own_identity`, and the Landlock tier's private root, every mount of it read-only and
    nodev (`whole_tree`): the filter cannot see which file or device a read-only open acts on
    (a host FIFO's data taken, a host file's lease broken, a host pty made; a read through a
    writable mount set the file's access time). Always asked: where the kernel refuses the
    worker a mount namespace, or mount_setattr(2), the worker refuses to run
    (worker_guard.NO_MOUNT_NAMESPACE)."""
    return {**_own_identity(config), "root": {**_private_root(), "whole_tree": True}}


def _landlock_plan(config: SandboxConfig) -> dict[str, Any]:
    plan: dict[str, Any] = {"landlock": launch.landlock_paths(), **_own_identity(config)}
    if private_root_possible():
        plan["root"] = _private_root()
    return plan


_LANDLOCK_NO_ROOT = (
    "the kernel refuses this unprivileged user's worker a mount namespace (user namespaces not "
    "allowed, or a container's profile refusing unshare), so the worker gets no private root: "
    "stat, lstat, statx, readlink, access and O_PATH opens of any host path work (Landlock "
    "has no hook for them): modes, owners and times of host files, and the pids and uids of "
    "host processes in /proc; processes are visible by pid, and only seccomp's pid checks, "
    "Landlock's signal scope (ABI >= 6) and the non-dumpable supervisor keep the worker from "
    "acting on them",
)


def _landlock_limits() -> tuple[str, ...]:
    limits = (_SHARED_KERNEL,
              "the interpreter's prefix and the library folders (/usr/lib, /lib64, ...) are "
              "visible read-only: their files' modes, owners and times can be read")
    return limits if private_root_possible() else (*limits, *_LANDLOCK_NO_ROOT)


def _landlock_refusal(config: SandboxConfig, non_dumpable: bool) -> str | None:
    if config.secret_configured and not non_dumpable:
        return ("the supervisor could not make itself non-dumpable, so a same-uid worker could "
                "reach its memory through /proc or ptrace while an API key is configured")
    return None


def _seccomp_refusal(config: SandboxConfig, non_dumpable: bool) -> str | None:
    if config.secret_configured:
        return ("the seccomp tier has no Landlock allowlist behind its private root and no "
                "scoping of signals, so it is not trusted with a configured API key; install "
                "bubblewrap or use a kernel with Landlock")
    return None


REGISTRY: dict[str, Tier] = {t.name: t for t in (
    Tier(TIER_BWRAP, auto=True, sandboxed=True, pid_namespace=True, read_only_filter=False,
         works=lambda m: m.bwrap and m.seccomp, command=launch.bwrap_worker_command,
         plan=lambda config: {"remount_ro": launch.device_nodes(),
                              "scratch_files": config.scratch_mb * SCRATCH_FILES_PER_MB},
         limits=lambda: (
             _SHARED_KERNEL,
             "/dev/null, zero, random and urandom are the host's nodes, bound read-only "
             "(chmod, chown, utime: EROFS, and refused by the filter); writing to them works "
             "as on the host"),
         refusal=_no_refusal),
    Tier(TIER_LANDLOCK, auto=True, sandboxed=True, pid_namespace=False, read_only_filter=False,
         # as root the worker drops its uid, which needs the private root (worker_guard)
         works=lambda m: (m.landlock_abi >= 1 and m.seccomp
                          and (m.private_root or os.geteuid() != 0)),
         command=launch.plain_command,
         plan=_landlock_plan, limits=_landlock_limits, refusal=_landlock_refusal),
    Tier(TIER_SECCOMP, auto=False, sandboxed=True, pid_namespace=False, read_only_filter=True,
         works=lambda m: m.seccomp and m.private_root and m.read_only_tree,  # else it refuses
         command=launch.plain_command, plan=_seccomp_plan,
         limits=lambda: (
             _SHARED_KERNEL,
             "no Landlock: the worker's own mount namespace is its only file-system "
             "confinement; its root holds only the interpreter's prefix, the library folders "
             "(/usr/lib, /lib64, ...) and the worker files, read-only and nodev (no /proc, /dev "
             "or /tmp: any other host path is ENOENT), and their files' modes, owners and times "
             "can be read; where the kernel refuses the namespace or mount_setattr(2) (root "
             "without CAP_SYS_ADMIN, a kernel before 5.12) the tier is not offered "
             "(root_probe.py)",
             "its filter opens no file for writing and creates, removes or renames none; it "
             "has no PID namespace and no Landlock scoping: only the filter's pid checks and "
             "the non-dumpable supervisor keep it from signalling or reaching host processes; "
             "never chosen by auto, refused while an API key is configured"),
         refusal=_seccomp_refusal),
    Tier(TIER_UNSAFE, auto=False, sandboxed=False, pid_namespace=False, read_only_filter=False,
         works=lambda m: False, command=launch.plain_command, plan=lambda config: {},
         limits=lambda: ("no isolation at all: rlimits only",), refusal=_no_refusal),
)}


def tier(name: str) -> Tier:
    """The registered tier named `name` (a full name from config.TIERS); KeyError otherwise."""
    return REGISTRY[name]


def tier_limits(name: str) -> tuple[str, ...]:
    """What tier `name` does not guarantee on this machine for this supervisor, in words
    (shown by `rmh doctor`)."""
    found = REGISTRY.get(name)
    return found.limits() if found is not None else ("unknown tier",)


def refusal(name: str, config: SandboxConfig, non_dumpable: bool) -> str | None:
    """Why tier `name` must not start under `config`, or None when it may."""
    return REGISTRY[name].refusal(config, non_dumpable)

