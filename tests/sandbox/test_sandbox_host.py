"""The host API outside the escape suite: tiers, refusal, results, typed errors, lint, reset."""

from __future__ import annotations

import json
import os
import tempfile

import pytest

from sandbox import (
    TIER_BWRAP,
    TIER_LANDLOCK,
    TIER_UNSAFE,
    HostFunction,
    HostFunctionError,
    Sandbox,
    SandboxConfig,
    SandboxError,
    lint_check,
    probe,
)
from sandbox.seccomp_policy import denied_names


def test_a_real_tier_runs_here() -> None:
    """The escape suite skips unavailable tiers; this makes "none available" a failure."""
    report = probe()
    assert TIER_BWRAP in report.available or TIER_LANDLOCK in report.available, report.to_json()
    assert report.best == report.available[0]


def test_unsafe_tier_is_refused_without_the_flag() -> None:
    with pytest.raises(SandboxError, match="unsafe-no-sandbox"):
        Sandbox(SandboxConfig(tier=TIER_UNSAFE), {})


def test_deny_list_covers_the_issue() -> None:
    names = set(denied_names())
    for required in ("socket", "execve", "execveat", "fork", "vfork", "clone", "clone3", "ptrace",
                     "process_vm_readv", "mount", "umount2", "pivot_root", "chroot", "unshare",
                     "setns", "bpf", "perf_event_open", "userfaultfd", "io_uring_setup",
                     "keyctl", "init_module", "finit_module", "reboot", "kexec_load"):
        assert required in names, required


# A host path that must never reach sandboxed code (built here: no machine's path in the repo).
HOST_PATH = os.path.join(tempfile.gettempdir(), "secret", "host", "path")


def _boom() -> None:
    raise RuntimeError(f"{HOST_PATH} exploded")


def _missing(note: str) -> None:
    raise HostFunctionError("NoteNotFound", f"no note {note!r}")


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    functions = {
        "missing": HostFunction(_missing, "Always fails.", "(note)"),
        "boom": HostFunction(_boom, "A host bug.", "()"),
        "nan": HostFunction(lambda: float("nan"), "Not JSON.", "()"),
        "add": HostFunction(lambda a, b=0: a + b, "Add two numbers.", "(a, b=0)"),
    }
    return Sandbox(SandboxConfig(deadline_s=10, memory_mb=256, lint=False), functions)


def test_persistent_namespace_value_and_reset(sandbox: Sandbox) -> None:
    assert sandbox.exec("x = 20").ok
    res = sandbox.exec("print('out'); x + add(1, b=1)")
    assert res.ok and res.value == "22" and res.stdout == "out\n" and res.calls == {"add": 1}
    doc = res.to_json()
    assert json.loads(json.dumps(doc)) == doc and doc["truncated"] is False
    sandbox.reset()
    res = sandbox.exec("x")
    assert res.error is not None and res.error.type == "NameError"


def test_errors_are_typed_and_tracebacks_show_user_code(sandbox: Sandbox) -> None:
    res = sandbox.exec("def f():\n    return missing('a')\nf()")
    assert res.error is not None and res.error.type == "NoteNotFound"
    assert "no note 'a'" in res.error.message and 'line 2, in f' in res.error.traceback
    assert "worker.py" not in res.error.traceback
    res = sandbox.exec(
        "try:\n    missing('b')\nexcept HostError as e:\n    n = type(e).__name__\nn")
    assert res.ok and res.value == "'NoteNotFound'"
    for cell in ("boom()", "nan()"):
        res = sandbox.exec(cell)
        assert res.error is not None and res.error.type == "HostError"
        assert "/secret" not in res.error.message
    res = sandbox.exec("add(1, 2, 3)")
    assert res.error is not None and res.error.type == "TypeError"


def test_help_shows_host_function_docs(sandbox: Sandbox) -> None:
    res = sandbox.exec("help(add)")
    assert res.ok and "add(a, b=0)" in res.stdout and "Add two numbers." in res.stdout


def test_threads_left_running_restart_the_worker(sandbox: Sandbox) -> None:
    res = sandbox.exec("import threading, time\nthreading.Thread(target=time.sleep, "
                       "args=(5,), daemon=True).start()")
    assert res.error is not None and res.error.type == "ThreadsLeftRunning" and res.state_lost
    assert sandbox.exec("1").ok


def test_lint_gives_friendly_errors() -> None:
    issues = lint_check("import os\nx.__class__\nopen('f')\nsearch('ok')")
    assert [i.line for i in issues] == [1, 2, 3]
    assert "vault functions" in str(issues[0])
    assert lint_check("def f(:") == []
    with Sandbox(SandboxConfig(memory_mb=256, lint=True), {}) as sb:
        res = sb.exec("import subprocess")
        assert res.error is not None and res.error.type == "LintError"


def test_closed_sandbox_raises() -> None:
    sb = Sandbox(SandboxConfig(memory_mb=256), {})
    sb.close()
    with pytest.raises(SandboxError):
        sb.exec("1")


def test_allowlist_never_allows_what_acts_on_other_processes() -> None:
    from sandbox.seccomp_policy import NEVER, allowed_names

    allowed = set(allowed_names())
    assert not allowed & set(NEVER), allowed & set(NEVER)
    for name in ("prlimit64", "kill", "tgkill", "fcntl", "ioctl", "clone"):
        assert name in allowed  # present, but only with the argument checks
    assert "tkill" not in allowed and "pidfd_send_signal" not in allowed


def test_tier_choice_refuses_seccomp_while_a_secret_is_configured() -> None:
    from sandbox import TIER_SECCOMP, tier_limits

    if TIER_SECCOMP not in probe().available:
        pytest.skip("the seccomp tier is not available here")
    with pytest.raises(SandboxError, match="no Landlock allowlist"):
        Sandbox(SandboxConfig(tier="seccomp", secret_configured=True), {})
    with Sandbox(SandboxConfig(tier="seccomp", memory_mb=256), {}) as sb:
        assert sb.tier == TIER_SECCOMP and sb.exec("1").ok
    assert any("file-system" in line for line in tier_limits(TIER_SECCOMP))
    with Sandbox(SandboxConfig(memory_mb=256, secret_configured=True), {}) as sb:
        assert sb.tier != TIER_SECCOMP
    import ctypes

    assert ctypes.CDLL(None).prctl(3, 0, 0, 0, 0) == 0  # PR_GET_DUMPABLE: non-dumpable now
