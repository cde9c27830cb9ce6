"""The courtesy lint parses untrusted code in the supervisor (no rlimit, before the cell's
deadline), so what it may cost there is bounded: a cell longer than
`lint.MAX_CHECKED_CHARS` is not checked. Before, a list literal of 1,000,000 characters (the
REPL's MAX_CODE) raised `rmh serve`'s peak RSS from 55 to 540-560 MB and took ~3 s of its
time, each exec (docs/measurements/session26/NOTES-ADVSBX.md)."""

from __future__ import annotations

import tracemalloc

from sandbox import Sandbox, SandboxConfig
from sandbox.lint import MAX_CHECKED_CHARS, MAX_WARNINGS, check


def _literal(chars: int) -> str:
    """`x = [1,1,...]` of about `chars` characters: the costliest tree per character found."""
    return "x = [" + "1," * (chars // 2) + "]"


def _peak_bytes(code: str) -> int:
    tracemalloc.start()
    try:
        check(code)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_supervisors_lint_memory_is_bounded_by_the_cell_it_checks() -> None:
    assert _peak_bytes(_literal(MAX_CHECKED_CHARS - 10)) < 24 << 20
    assert _peak_bytes(_literal(200_000)) < 1 << 20  # was ~95 MB


def test_a_long_cell_runs_unchecked_and_a_short_one_is_still_checked() -> None:
    refused = "import subprocess\n"
    with Sandbox(SandboxConfig(memory_mb=256, lint=True), {}) as sb:
        short = sb.exec(refused + "1")
        assert short.error is not None and short.error.type == "LintError"
        long = sb.exec(refused + _literal(MAX_CHECKED_CHARS) + "\nlen(x)")
        assert long.error is None or long.error.type != "LintError", long.to_json()
        assert "lint warning" not in long.stderr


def test_lint_warnings_above_the_stderr_are_few() -> None:
    """The warnings are added to the cell's stderr outside its output cap: a cell of 166,000
    `a.__b` lines had 20 MB of them (`stderr_truncated` false); now MAX_WARNINGS and a count."""
    with Sandbox(SandboxConfig(memory_mb=256, lint=True), {}) as sb:
        result = sb.exec("a = 1\n" + "a.__b if 0 else 0\n" * 100)
    lines = result.stderr.splitlines()
    assert len(lines) == MAX_WARNINGS + 1, lines[-3:]
    assert lines[-1] == f"lint: {100 - MAX_WARNINGS} more warnings not shown"
