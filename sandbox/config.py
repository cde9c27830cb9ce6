"""The sandbox's limits and tier choice, as one frozen value (read by harness/config.py)."""

from __future__ import annotations

from dataclasses import dataclass

# Isolation tiers, strongest first. The first three are real sandboxes; the last runs only
# when the operator passed --unsafe-no-sandbox.
TIER_BWRAP = "bwrap+seccomp"
TIER_LANDLOCK = "landlock+seccomp"
TIER_SECCOMP = "seccomp"
TIER_UNSAFE = "rlimits-only(unsafe)"
TIERS: tuple[str, ...] = (TIER_BWRAP, TIER_LANDLOCK, TIER_SECCOMP, TIER_UNSAFE)
# The short names `[sandbox] tier` and `--tier` accept.
TIER_NAMES: dict[str, str] = {"auto": "auto", "bwrap": TIER_BWRAP, "landlock": TIER_LANDLOCK,
                              "seccomp": TIER_SECCOMP}


# The longest deadline (seconds): a day is "never". Past ~24.8 days the host's epoll wait
# overflows, and NaN or infinity never pass: `rmh exec --deadline nan|inf|3e6` ended in a
# traceback (select's ValueError or OverflowError) instead of an answer (SBX11).
MAX_DEADLINE_S = 86_400.0


def check_deadline(seconds: float) -> bool:
    """Whether `seconds` is a usable deadline: a number above 0 and at most MAX_DEADLINE_S
    (False for NaN, infinities and booleans)."""
    return (isinstance(seconds, (int, float)) and not isinstance(seconds, bool)
            and 0 < seconds <= MAX_DEADLINE_S)


class SandboxError(Exception):
    """The sandbox cannot run code: no usable tier, a spawn that failed, a closed sandbox."""


@dataclass(frozen=True)
class SandboxConfig:
    """Limits for one worker. Sizes in bytes unless the name says MB.

    `tier`: "auto" picks the strongest available tier; naming a tier (a full name from TIERS or
    a short one from TIER_NAMES) forces it (SandboxError if it is unavailable).
    `secret_configured`: the supervisor holds a secret (an API key); tiers that cannot keep
    the worker away from it are then refused (see `registry.py`).
    `lint`: run the AST courtesy check before sending a cell.
    `max_calls`: host-function calls allowed per exec (then HostCallLimit in the worker).
    `cpu_s`: RLIMIT_CPU over the worker's whole life, a backstop behind the wall-clock deadline.
    `worker_user`: who untrusted code runs as when the supervisor is root (see `identity.py`):
    "auto" (the user `rmh-sandbox` if it exists, else uid/gid 65534), a user name, or
    "UID:GID"; never uid or gid 0.
    `max_tasks`: threads (tasks) one worker may have at once (RLIMIT_NPROC, counted in the
    worker's own user namespace where it has one).
    """

    deadline_s: float = 30.0
    memory_mb: int = 1024
    output_cap: int = 65_536
    unsafe_no_sandbox: bool = False
    max_frame: int = 8 << 20
    scratch_mb: int = 64
    open_files: int = 256
    cpu_s: int = 3600
    max_calls: int = 10_000
    start_timeout_s: float = 10.0
    lint: bool = True
    tier: str = "auto"
    secret_configured: bool = False
    worker_user: str = "auto"
    max_tasks: int = 1024

    def __post_init__(self) -> None:
        if not check_deadline(self.deadline_s) or not check_deadline(self.start_timeout_s):
            raise ValueError("deadline_s and start_timeout_s must be positive and at most "
                             f"{MAX_DEADLINE_S:g} s")
        if min(self.memory_mb, self.output_cap, self.max_frame, self.scratch_mb) <= 0:
            raise ValueError("sizes must be positive")
        from .identity import resolve

        resolve(self.worker_user)  # ValueError for a root, unknown or malformed worker_user
        if self.max_tasks < 2:
            raise ValueError("max_tasks below 2 cannot start a worker")
        if self.memory_mb < 64:
            raise ValueError("memory_mb below 64 cannot start an interpreter")
        tier = TIER_NAMES.get(self.tier, self.tier)
        if tier != "auto" and tier not in TIERS:
            raise ValueError(f"unknown tier {self.tier!r}; choose one of {sorted(TIER_NAMES)}")
        object.__setattr__(self, "tier", tier)  # normalised to the full name
