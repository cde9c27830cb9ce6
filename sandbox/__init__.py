"""The sandboxed REPL: a trusted host supervising one untrusted worker process.

Public API: `Sandbox`, `SandboxConfig`, `HostFunction`, `HostFunctionError`, `ExecResult`,
`ErrorInfo`, `SandboxError`, `probe`, `TierReport`, the tier names, and `lint_check`.
"""

from .config import (
    TIER_BWRAP,
    TIER_LANDLOCK,
    TIER_SECCOMP,
    TIER_UNSAFE,
    TIERS,
    SandboxConfig,
    SandboxError,
)
from .functions import HostFunction, HostFunctionError
from .host import Sandbox
from .lint import LintIssue
from .lint import check as lint_check
from .probe import TierReport, probe
from .result import ErrorInfo, ExecResult

__all__ = [
    "TIERS",
    "TIER_BWRAP",
    "TIER_LANDLOCK",
    "TIER_SECCOMP",
    "TIER_UNSAFE",
    "ErrorInfo",
    "ExecResult",
    "HostFunction",
    "HostFunctionError",
    "LintIssue",
    "Sandbox",
    "SandboxConfig",
    "SandboxError",
    "TierReport",
    "lint_check",
    "probe",
]
