"""What one exec produced: a value, never an exception (user code raising is an outcome)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ErrorInfo:
    """An error raised by the cell (traceback limited to user code) or by the sandbox itself:
    DeadlineExceeded, Cancelled, WorkerCrashed, ProtocolViolation, LintError, SandboxError."""

    type: str
    message: str
    traceback: str = ""

    def to_json(self) -> dict[str, str]:
        return {"type": self.type, "message": self.message, "traceback": self.traceback}


@dataclass(frozen=True)
class ExecResult:
    """The outcome of one cell. `value` is the repr of the last expression (None if none).

    `state_lost`: the worker was replaced during or right after this exec (deadline, cancel,
    crash, protocol violation, threads left running), so the namespace is empty now.
    `calls`: host-function calls made by this cell, by function name.
    """

    ok: bool
    stdout: str
    stderr: str
    value: str | None
    error: ErrorInfo | None
    duration_s: float
    stdout_truncated: bool
    stderr_truncated: bool
    state_lost: bool
    tier: str
    calls: dict[str, int] = field(default_factory=dict)

    @property
    def truncated(self) -> bool:
        return self.stdout_truncated or self.stderr_truncated

    def to_json(self) -> dict[str, Any]:
        """One JSON object (the `rmh exec --json` document and the RPC result)."""
        return {
            "ok": self.ok,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "value": self.value,
            "error": None if self.error is None else self.error.to_json(),
            "duration_s": round(self.duration_s, 6),
            "stdout_truncated": self.stdout_truncated,
            "stderr_truncated": self.stderr_truncated,
            "truncated": self.truncated,
            "state_lost": self.state_lost,
            "tier": self.tier,
            "calls": dict(sorted(self.calls.items())),
        }
