"""The per-worker cpu cgroup (sandbox/cpu_group.py) on hosts unlike the development machine
(session 39, NOTES-SBX15):

- a supervisor whose first sandbox started while its descriptors were exhausted (RLIMIT_NOFILE
  reached) kept that probe for its life: every later sandbox had no tier ("not available
  here") and no cpu cgroup. A probe failed of a passing shortage is no longer kept
  (sandbox/shortage.py);
- inside a cgroup namespace whose cgroup hierarchy was mounted outside it (unshare -C, a
  container sharing the host's /sys/fs/cgroup) /proc/self/cgroup says "/" and the workers'
  groups were made at the top of the hierarchy: outside the supervisor's own cgroup and its
  quota. Now the supervisor checks its pid is in the directory it found, else runs without
  groups (its workers stay in its cgroup);
- a supervisor that is pid 1 of a PID namespace which kept the host's /proc (unshare -p -f
  without --mount-proc) read other processes for its workers' trees: bwrap's inner processes
  stayed outside the worker's group (and were not stopped between cells). It is refused now;
  two such supervisors also named their groups alike (same pid, the host's pid 1's start
  time): a name taken is now passed over instead of failing the start (EEXIST).

Each runs a real supervisor in a subprocess (its own probe cache) on every tier."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sandbox import probe
from sandbox.shortage import kept, note

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
TIERS = [t for t in probe().available if "unsafe" not in t]

EXHAUSTED = textwrap.dedent("""
    import os, resource, sys
    from pathlib import Path
    from sandbox import Sandbox, SandboxConfig, SandboxError, probe
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
    held = []
    try:
        while True:
            held.append(os.open("/dev/null", os.O_RDONLY))
    except OSError:
        pass
    try:
        Sandbox(SandboxConfig(tier=sys.argv[1]), {}).close()
        print("started while exhausted")
    except (SandboxError, OSError):
        pass
    for fd in held:
        os.close(fd)
    with Sandbox(SandboxConfig(tier=sys.argv[1]), {}) as sb:
        assert sb.exec("x = 1").ok
        group = sb._proc.group
        print(probe().cpu_group, group is not None)
""")


@pytest.mark.parametrize("tier_name", TIERS)
def test_a_probe_failed_for_want_of_descriptors_is_not_kept(tier_name: str) -> None:
    """The first sandbox starts with every descriptor taken and fails; once they are free the
    next one starts, on the tier asked for, in a group where this host lets one be made."""
    run = subprocess.run([sys.executable, "-c", EXHAUSTED, tier_name], env=ENV, cwd="/",
                         capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr[-1500:]
    can_group = probe().cpu_group
    assert run.stdout.split()[-2:] == [str(can_group), str(can_group)], run.stdout


def test_a_kept_answer_is_not_kept_where_a_nested_probe_was_short() -> None:
    """shortage.kept: an answer is computed once, save where its computation (or a kept
    function it called) noted a passing shortage."""
    calls: list[str] = []
    short = [True]

    @kept
    def inner() -> str:
        calls.append("inner")
        if short[0]:
            note(OSError(24, "Too many open files"))
        return "short" if short[0] else "fine"

    @kept
    def outer() -> str:
        calls.append("outer")
        return inner()

    assert outer() == "short" and outer() == "short"
    short[0] = False
    assert outer() == "fine" and outer() == "fine"
    assert calls == ["outer", "inner", "outer", "inner", "outer", "inner"]
    note(PermissionError(13, "Permission denied"))  # not a shortage: kept
    assert outer() == "fine" and len(calls) == 6


def _cpu_v1() -> Path | None:
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        head, tail = line.split(" - ", 1)
        info = tail.split()
        if info[0] == "cgroup" and "cpu" in info[2].split(",") and head.split()[3] == "/":
            return Path(head.split()[4])
    return None


def _namespaces_reason() -> str | None:
    cpu = _cpu_v1()
    if os.geteuid() != 0 or cpu is None or shutil.which("unshare") is None:
        return "needs root, a cgroup v1 cpu hierarchy mounted at its top, and unshare(1)"
    if not os.access(cpu, os.W_OK):
        return f"{cpu} is not writable"
    return None


needs_namespaces = pytest.mark.skipif(_namespaces_reason() is not None,
                                      reason=str(_namespaces_reason()))

IN_NAMESPACE = textwrap.dedent("""
    import sys, time
    from sandbox import Sandbox, SandboxConfig
    sb = Sandbox(SandboxConfig(tier=sys.argv[1]), {})
    assert sb.exec("x = 1").ok
    print(sb._proc.proc.pid, flush=True)
    sys.stdin.readline()
    sb.close()
""")


def _cpu_path(pid: int) -> str:
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "cpu" in controllers.split(","):
            return path
    raise AssertionError(f"no cpu cgroup for {pid}")


@needs_namespaces
@pytest.mark.parametrize("tier_name", TIERS)
def test_in_a_cgroup_namespace_the_worker_stays_in_the_supervisors_cgroup(
        tier_name: str) -> None:
    """A supervisor in a cgroup with a quota of half a CPU, in a cgroup namespace of its own:
    its worker's processes stay in that cgroup or below it, never above (its quota holds)."""
    cpu = _cpu_v1()
    assert cpu is not None
    outer = cpu / f"rmh-test-ns.{os.getpid()}"
    outer.mkdir()
    try:
        (outer / "cpu.cfs_quota_us").write_text("50000")
        child = subprocess.Popen(
            ["sh", "-c", f'echo $$ > {outer}/cgroup.procs && exec unshare -C "$@"', "sh",
             sys.executable, "-c", IN_NAMESPACE, tier_name], env=ENV, cwd="/",
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert child.stdin is not None and child.stdout is not None
        worker = int(child.stdout.readline())
        where = _cpu_path(worker)  # as this test sees it, outside the namespace
        child.communicate("\n", timeout=60)
        assert child.returncode == 0
        assert where == f"/{outer.name}" or where.startswith(f"/{outer.name}/"), where
    finally:
        for group in sorted(outer.glob("rmh-sandbox.*"), reverse=True):
            group.rmdir()
        outer.rmdir()


TAKEN = textwrap.dedent("""
    import sys
    from sandbox import Sandbox, SandboxConfig, cgroup_owner, cpu_group, probe
    if not probe().cpu_group:
        print("no group"); sys.exit(0)
    found = cpu_group._setup()
    taken = [found.parent / f"{cgroup_owner.tag()}.{n}" for n in (2, 3)]  # the next names
    for path in taken:
        path.mkdir()
    try:
        with Sandbox(SandboxConfig(tier=sys.argv[1]), {}) as sb:
            print(sb.exec("x = 1").ok, sb._proc.group.path not in taken, flush=True)
    finally:
        for path in taken:
            path.rmdir()
""")


@pytest.mark.parametrize("tier_name", TIERS)
def test_a_group_name_another_supervisor_took_is_passed_over(tier_name: str) -> None:
    """Another supervisor with this one's pid and start time (pid 1 of two PID namespaces
    whose /proc was the host's) holds the next names: the sandbox starts in a group of
    another name (main: CpuGroupError, File exists)."""
    run = subprocess.run([sys.executable, "-c", TAKEN, tier_name], env=ENV, cwd="/",
                         capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr[-1500:]
    assert run.stdout.split() in (["True", "True"], ["no", "group"]), run.stdout


PIDNS = textwrap.dedent("""
    import sys
    from sandbox import Sandbox, SandboxConfig, SandboxError
    try:
        with Sandbox(SandboxConfig(tier=sys.argv[1]), {}) as sb:
            group = sb._proc.group
            ok = sb.exec("x = 1").ok
            inside = group and sorted(map(int, (group.path / "cgroup.procs").read_text().split()))
            print("ran", ok, inside is None or inside == sorted(sb._proc._tree(True)))
    except SandboxError as exc:
        print("refused", str(exc)[:200])
""")


@needs_namespaces
@pytest.mark.parametrize("tier_name", TIERS)
@pytest.mark.parametrize("mount_proc", [False, True])
def test_a_proc_of_another_pid_namespace_is_refused(tier_name: str, mount_proc: bool) -> None:
    """pid 1 of a PID namespace that kept the host's /proc (unshare -p -f without
    --mount-proc) read the host's processes for its workers' trees: bwrap's inner processes
    stayed outside the worker's cgroup and ran between cells. It is refused now, saying why;
    with a /proc of its own it runs, every process of the worker in its group."""
    argv = ["unshare", "-p", "-f", *(["--mount-proc"] if mount_proc else []),
            sys.executable, "-c", PIDNS, tier_name]
    run = subprocess.run(argv, env=ENV, cwd="/", capture_output=True, text=True, timeout=120,
                         check=False)
    assert run.returncode == 0, run.stderr[-1500:]
    if mount_proc:
        assert run.stdout.split() == ["ran", "True", "True"], run.stdout
    else:
        assert run.stdout.startswith("refused /proc belongs to another PID namespace"), run.stdout


@needs_namespaces
def test_a_read_only_cgroup_file_system_is_named_as_the_reason() -> None:
    """/sys/fs/cgroup/cpu read-only (a container's): no group, the sandbox runs, and the
    reason says read-only (main said "unprivileged without a delegated subtree", as root)."""
    cpu = _cpu_v1()
    script = ("from sandbox import Sandbox, SandboxConfig, probe\n"
              "with Sandbox(SandboxConfig(), {}) as sb:\n"
              "    print(sb.exec('x = 1').ok, sb._proc.group)\n"
              "print(probe().cpu_group_detail)\n")
    run = subprocess.run(["unshare", "-m", "sh", "-c",
                          f'mount -o remount,bind,ro {cpu} && exec "$@"', "sh",
                          sys.executable, "-c", script], env=ENV, cwd="/",
                         capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr[-1500:]
    first, detail = run.stdout.splitlines()[:2]
    assert first == "True None", run.stdout
    assert "(no cgroup can be made: a read-only cgroup file system)" in detail, detail
