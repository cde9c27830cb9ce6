"""The sandboxed REPL: a trusted host supervising one untrusted worker process.

Public API: `Sandbox`, `SandboxConfig`, `HostFunction`, `HostFunctionError`, `ExecResult`,
`ErrorInfo`, `SandboxError`, `CancelToken` (cancel one exec, even before it starts), `probe`,
`TierReport`, the tier names, `tier_limits` (what a
tier does not guarantee), `identity_limits` (who the worker runs as, what that leaves open),
`kill_all_workers` (for the supervisor's exit paths), `lint_check`, and
`current_exec`/`exec_time_left` (the running exec's deadline, for host functions) and
`host_call_stop` (the running host call's cooperative stop test).
"""

from .cancel import CancelToken
from .config import (
    MAX_DEADLINE_S,
    TIER_BWRAP,
    TIER_LANDLOCK,
    TIER_NAMES,
    TIER_SECCOMP,
    TIER_UNSAFE,
    TIERS,
    SandboxConfig,
    SandboxError,
    check_deadline,
)
from .context import ExecContext, current_exec, exec_time_left, host_call_stop
from .functions import HostFunction, HostFunctionError
from .host import Sandbox
from .launch import kill_all_workers
from .lint import LintIssue
from .lint import check as lint_check
from .probe import TierReport, choose_tier, probe
from .registry import tier_limits
from .result import ErrorInfo, ExecResult
from .tiers import identity_limits

__all__ = [
    "MAX_DEADLINE_S",
    "TIERS",
    "TIER_BWRAP",
    "TIER_LANDLOCK",
    "TIER_NAMES",
    "TIER_SECCOMP",
    "TIER_UNSAFE",
    "CancelToken",
    "ErrorInfo",
    "ExecContext",
    "ExecResult",
    "HostFunction",
    "HostFunctionError",
    "LintIssue",
    "Sandbox",
    "SandboxConfig",
    "SandboxError",
    "TierReport",
    "check_deadline",
    "choose_tier",
    "current_exec",
    "exec_time_left",
    "host_call_stop",
    "identity_limits",
    "kill_all_workers",
    "lint_check",
    "probe",
    "tier_limits",
]
