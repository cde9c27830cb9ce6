"""The /proc and pid findings as an unprivileged supervisor (escape suite case 27 asks for a
supervisor "without capabilities, not only as root"). As root, this re-runs a focused subset of
the escape suite as a test user through `runuser`; it skips, saying why, when it cannot create
the user or the user cannot run this interpreter and checkout, except under
RMH_REQUIRE_NONROOT=1 (set by .ci/run, which prepares the user), where a skip is a failure.

One nested run per file of the subset (the same files and the same `-k`): as one run it was the
suite's longest test, which pytest-xdist cannot split, so one worker finished it alone while the
other sat idle."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NoReturn

import pytest

ROOT = Path(__file__).resolve().parents[2]
USER = "rmhtest"
NESTED = "RMH_SANDBOX_NONROOT_RUN"
REQUIRE = "RMH_REQUIRE_NONROOT"
SUBSET = ["tests/sandbox/test_sandbox_escape_pids.py", "tests/sandbox/test_sandbox_escape_os.py",
          "tests/sandbox/test_sandbox_identity_probes.py",
          "tests/sandbox/test_sandbox_outside_limits.py",
          "tests/sandbox/test_sandbox_visibility_probes.py",
          "tests/sandbox/test_sandbox_between_execs.py",  # nothing runs after an answer
          "tests/sandbox/test_sandbox_unlisted_syscalls.py",
          "tests/sandbox/test_sandbox_frame_values.py",  # bwrap runs only unprivileged here
          "tests/sandbox/test_sandbox_device_nodes.py", "tests/sandbox/test_sandbox_madvise.py",
          "tests/sandbox/test_sandbox_shared_futex.py",
          "tests/sandbox/test_sandbox_host_objects.py",
          "tests/sandbox/test_sandbox_listed_tiers.py",
          "tests/sandbox/test_sandbox_replaced_notes.py",
          "tests/sandbox/test_sandbox_shared_counts.py",
          "tests/sandbox/test_sandbox_forked_supervisor.py",
          "tests/sandbox/test_sandbox_generated_hostile.py"]
KEYWORDS = ("case10 or case15 or case26 or case27 or probes or dies or threads or mounts"
          " or after_its_answer or does_not_report or where_proc or unlisted_syscall"
          " or pi_futex or cpu_clock or pending_cap or not_dumpable or small_values"
          " or json_punctuation or over_the_cap or beyond_the_four"
          " or madvise or shared_futex or no_mount_namespace or host_object or listed_tiers"
          " or keeps_the_notes_owner or fifo_socket or leave_another or forked_child"
          " or generated_hostile")


def _ensure_user() -> str | None:
    """None when USER exists (created here if needed), else why it cannot."""
    if subprocess.run(["id", "-u", USER], capture_output=True, check=False).returncode == 0:
        return None
    if shutil.which("useradd") is None:
        return "useradd is not installed"
    made = subprocess.run(["useradd", "--system", "--no-create-home", "--shell",
                           "/usr/sbin/nologin", USER], capture_output=True, text=True,
                          check=False)
    return None if made.returncode == 0 else f"useradd failed: {made.stderr.strip()[:200]}"


def _cannot(reason: str) -> NoReturn:
    """Skip, saying why; fail instead where the run is required (CI)."""
    if os.environ.get(REQUIRE) == "1":
        pytest.fail(f"the non-root run is required ({REQUIRE}=1) but cannot run: {reason}")
    pytest.skip(reason)


@pytest.mark.parametrize("subset", SUBSET, ids=lambda f: Path(f).stem.removeprefix("test_"))
def test_escape_findings_as_an_unprivileged_user(subset: str) -> None:
    if os.environ.get(NESTED):
        pytest.skip("already the nested unprivileged run")
    if os.geteuid() != 0:
        pytest.skip("not root: the whole suite already runs unprivileged")
    if shutil.which("runuser") is None:
        _cannot("runuser is not installed (util-linux)")
    if (why := _ensure_user()) is not None:
        _cannot(f"cannot create the test user {USER}: {why}")
    home = Path(tempfile.mkdtemp(prefix="rmh-nonroot-"))  # pytest's own tmp is root-only
    try:
        os.chown(home, int(subprocess.check_output(["id", "-u", USER])), -1)
        _run_subset(home, subset)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _nested_env(home: Path) -> dict[str, str]:
    """The nested run's environment: a clean one, plus CI's switches as .ci/run exported them
    (`CI`: tests/conftest.py's derandomized hypothesis profile; every `RMH_REQUIRE_*`: a
    skip that CI forbids stays a failure in the nested run too; main dropped them, so the
    nested run skipped what CI requires, silently)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(ROOT),
           "HOME": str(home), "PYTHONDONTWRITEBYTECODE": "1", NESTED: "1"}
    env.update({k: v for k, v in os.environ.items()
                if k == "CI" or k.startswith("RMH_REQUIRE_")})
    return env


def _run_subset(tmp_path: Path, subset: str) -> None:
    env = _nested_env(tmp_path)
    base = ["runuser", "-u", USER, "--", sys.executable]
    probe = subprocess.run([*base, "-c", "import sandbox, pytest, vault"], cwd=ROOT, env=env,
                           capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        _cannot(f"{USER} cannot run this interpreter and checkout (a parent folder "
                    f"without o+x?): {probe.stderr.strip()[-300:]}")
    run = subprocess.run([*base, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          f"--basetemp={tmp_path / 'pytest'}", subset, "-k", KEYWORDS],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
                         check=False)
    tail = (run.stdout + run.stderr)[-3000:]
    assert run.returncode == 0, tail
    assert " passed" in run.stdout and " failed" not in run.stdout, tail


PROBE = '''
import os


def test_probes_the_environment():
    assert os.environ.get("CI") == "true", "CI"
    assert os.environ.get("RMH_REQUIRE_SWITCH") == "1", "RMH_REQUIRE_SWITCH"
    assert os.environ.get("RMH_ESCAPE_SUITE_SECRET") is None, "a secret passed through"
'''


def test_the_nested_run_keeps_ci_switches(monkeypatch: pytest.MonkeyPatch) -> None:
    """.ci/run exports CI and RMH_REQUIRE_* (a skip of what CI requires is a failure there);
    the nested run must see them too, and nothing else of this process's environment."""
    if os.environ.get(NESTED):
        pytest.skip("already the nested unprivileged run")
    if os.geteuid() != 0 or shutil.which("runuser") is None:
        pytest.skip("runs the nested command as root through runuser")
    if (why := _ensure_user()) is not None:
        _cannot(f"cannot create the test user {USER}: {why}")
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("RMH_REQUIRE_SWITCH", "1")
    monkeypatch.setenv("RMH_ESCAPE_SUITE_SECRET", "not for the nested run")
    home = Path(tempfile.mkdtemp(prefix="rmh-nonroot-"))
    try:
        os.chown(home, int(subprocess.check_output(["id", "-u", USER])), -1)
        probe = home / "test_switches.py"
        probe.write_text(PROBE)
        _run_subset(home, str(probe))  # main: AssertionError: CI
    finally:
        shutil.rmtree(home, ignore_errors=True)
