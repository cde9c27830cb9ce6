"""Each worker runs in its own cpu cgroup where one can be made (sandbox/cpu_group.py): the
placement and the limits read back from the cgroup files, the group removed at the worker's end
(also after kill -9 of the worker), and a supervisor killed outright leaves nothing the next
start does not sweep. Where no cgroup can be made (an unprivileged user without a delegated
subtree) the sandbox runs as before and the tier report says why. No timing here: the CPU share
itself is measured by the probe in docs/measurements/session38/NOTES-SBX14.md."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from sandbox import Sandbox, SandboxConfig, probe


def _cpu_cgroup(pid: int | str = "self") -> tuple[int, Path] | None:
    """(cgroup version, directory) of `pid`'s cpu cgroup, from /proc (proc(5)); the test's own
    reading, independent of sandbox/cpu_group.py."""
    lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    own = {}
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            own[name] = path
    for entry in Path("/proc/self/mountinfo").read_text().splitlines():
        head, tail = entry.split(" - ", 1)
        fields, info = head.split(), tail.split()
        v1 = info[0] == "cgroup" and "cpu" in info[2].split(",") and "cpu" in own
        v2 = info[0] == "cgroup2" and "" in own and "cpu" not in own
        if v1 or v2:
            path = own["cpu" if v1 else ""]
            root = fields[3]
            rel = path[len(root):] if root != "/" and path.startswith(root) else path
            return (1 if v1 else 2), Path(fields[4]) / rel.lstrip("/")
    return None


def _cell(pid: int) -> tuple[int, Path]:
    found = _cpu_cgroup(pid)
    assert found is not None
    return found


def _can_make_cgroup() -> str | None:
    """Why no cpu cgroup can be made here (the tests' skip reason), else None."""
    found = _cpu_cgroup()
    if found is None:
        return "no cpu cgroup hierarchy mounted"
    version, parent = found
    if version == 2 and "cpu" not in (parent / "cgroup.controllers").read_text().split():
        return f"cgroup v2 at {parent} without the cpu controller"
    if str(os.getpid()) not in (parent / "cgroup.procs").read_text().split():
        return f"this process is not in {parent} (a cgroup namespace: the product runs without)"
    trial = parent / f"rmh-test-trial.{os.getpid()}"
    try:
        trial.mkdir()
    except OSError as exc:
        return f"cannot make a cgroup in {parent} as uid {os.getuid()}: {exc.strerror}"
    trial.rmdir()
    return None


NO_CGROUP = _can_make_cgroup()
TIERS = [t for t in probe().available if "unsafe" not in t]
needs_cgroup = pytest.mark.skipif(NO_CGROUP is not None, reason=f"cgroups: {NO_CGROUP}")


def _worker_pids(sb: Sandbox) -> list[int]:
    proc = sb._proc
    assert proc is not None
    return sorted(proc._tree(True)) or [proc.proc.pid]


def _groups_of(pid: int) -> list[Path]:
    found = _cpu_cgroup()
    assert found is not None
    return sorted(found[1].glob(f"rmh-sandbox.{pid}.*"))


# kernel/sched/core.c sched_prio_to_weight: the CFS weight of nice -20..19
WEIGHTS = (88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620,
           6100, 4904, 3906, 3121, 2501, 1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272,
           215, 172, 137, 110, 87, 70, 56, 45, 36, 29, 23, 18, 15)


def _supervisor_nice(parent: Path) -> int:
    """The nice value whose weight a supervisor in `parent` has beside its workers: its
    autogroup's in the root cgroup with autogroup on (sched(7)), else its own. A process in
    the root autogroup (a session the kernel started, not one of setsid(2)'s) reads an empty
    /proc/self/autogroup (kernel/sched/autogroup.c, proc_sched_autogroup_show_task): it weighs
    as itself."""
    autogroup = Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1"
    words = Path("/proc/self/autogroup").read_text().split() if autogroup else []
    if os.path.ismount(parent) and words:
        return int(words[2])  # "/autogroup-N nice V"
    return os.getpriority(os.PRIO_PROCESS, 0)


def _check_limits(version: int, group: Path) -> None:
    """The worker weighs what the supervisor (this test) weighs beside it and may use one
    CPU."""
    nice = _supervisor_nice(group.parent)
    if version == 1:
        assert (group / "cpu.shares").read_text().split() == [str(WEIGHTS[nice + 20])]
        assert (group / "cpu.cfs_period_us").read_text().split() == ["100000"]
        assert (group / "cpu.cfs_quota_us").read_text().split() == ["100000"]
    else:
        assert (group / "cpu.weight.nice").read_text().split() == [str(nice)]
        assert (group / "cpu.max").read_text().split() == ["100000", "100000"]


@needs_cgroup
@pytest.mark.parametrize("tier_name", TIERS)
def test_each_worker_in_its_own_bounded_group(tier_name: str) -> None:
    version, parent = _cell(os.getpid())
    earlier = set(_groups_of(os.getpid()))  # sandboxes this process keeps open (fixtures)
    with Sandbox(SandboxConfig(tier=tier_name), {}) as a, \
            Sandbox(SandboxConfig(tier=tier_name), {}) as b:
        assert a.exec("x = 1").ok and b.exec("x = 2").ok
        groups = []
        for sb in (a, b):
            cells = {_cell(pid) for pid in _worker_pids(sb)}
            assert len(cells) == 1, cells  # every process of the worker (bwrap's too)
            ((cell_version, group),) = cells
            assert cell_version == version and group.parent == parent, (group, parent)
            _check_limits(version, group)
            groups.append(group)
        assert groups[0] != groups[1]
        assert _cpu_cgroup() == (version, parent) or version == 2  # v2: the supervisor's leaf
    assert not any(g.exists() for g in groups)  # removed at close
    assert [g for g in _groups_of(os.getpid())
            if not g.name.endswith(".host") and g not in earlier] == []


@needs_cgroup
@pytest.mark.parametrize("tier_name", TIERS)
def test_group_removed_after_the_worker_is_killed(tier_name: str) -> None:
    with Sandbox(SandboxConfig(tier=tier_name), {}) as sb:
        assert sb.exec("x = 1").ok
        first = {_cell(pid) for pid in _worker_pids(sb)}
        ((_, group),) = first
        for pid in reversed(_worker_pids(sb)):  # the interpreter, then bwrap's processes
            with contextlib.suppress(ProcessLookupError):  # died with the one killed first
                os.kill(pid, signal.SIGKILL)
        result = sb.exec("y = 2", deadline_s=10)
        crashed = result.error is not None and result.error.type == "WorkerCrashed"
        assert result.ok or crashed, result
        assert sb.exec("z = 3").ok  # the new worker, in a new group
        ((_, new_group),) = {_cell(pid) for pid in _worker_pids(sb)}
        assert new_group != group and not group.exists()
        _check_limits(first.pop()[0], new_group)
    assert not new_group.exists()


SUPERVISOR = textwrap.dedent("""
    import sys, time
    from sandbox import Sandbox, SandboxConfig
    sb = Sandbox(SandboxConfig(tier=sys.argv[1]), {})
    print(sb.exec("x = 1").ok, flush=True)
    if sys.argv[2] == "exit":
        sys.exit(0)
    time.sleep(60)
""")


@needs_cgroup
@pytest.mark.parametrize("tier_name", TIERS)
def test_no_group_left_by_a_supervisor_killed_or_exiting(tier_name: str) -> None:
    """kill -9 of the supervisor at seeded random points (starting, idle after a cell): its
    worker dies by PDEATHSIG and the next supervisor's start removes its group; a supervisor
    that exits (sys.exit, without closing its sandbox) removes its own."""
    rng = random.Random(14)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    for how in ("exit", *(f"kill@{rng.uniform(0.0, 1.5):.2f}" for _ in range(3)), "kill@idle"):
        child = subprocess.Popen([sys.executable, "-c", SUPERVISOR, tier_name, how], env=env,
                                 stdout=subprocess.PIPE, text=True)
        if how == "exit":
            assert child.communicate(timeout=60)[0].strip() == "True"
            assert _groups_of(child.pid) == []
            continue
        if how == "kill@idle":
            assert child.stdout is not None and child.stdout.readline().strip() == "True"
            assert len(_groups_of(child.pid)) >= 1  # it had one
        else:
            time.sleep(float(how.split("@")[1]))
        child.kill()
        child.communicate(timeout=30)
        after = subprocess.run([sys.executable, "-c", "from sandbox import probe; "
                                "print(probe().cpu_group)"], env=env, capture_output=True,
                               text=True, timeout=60, check=True)
        assert after.stdout.strip() == "True", after.stderr
        assert _groups_of(child.pid) == [], how  # swept by the next start


OUT_OF_DESCRIPTORS = textwrap.dedent("""
    import os, resource, sys
    from sandbox import cpu_group, launch
    from sandbox.config import SandboxError
    assert cpu_group.status()[0]  # the probe's trial group made and removed first
    r, w = os.pipe()
    os.close(w)
    command = launch.Command([sys.executable, "-c", "pass"], (r,), None)
    held = {int(x) for x in os.listdir("/proc/self/fd")}  # (the listing's own among them)
    held = {fd for fd in held if os.path.exists(f"/proc/self/fd/{fd}")}
    fill = [os.open(os.devnull, os.O_RDONLY) for _ in set(range(max(held) + 1)) - held]
    top = max(int(x) for x in os.listdir("/proc/self/fd"))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (top + 2, hard))  # a file's room, no pipe's
    try:
        launch.spawn(command)
    except (SandboxError, OSError) as exc:  # main: OSError
        print("refused", type(exc).__name__, exc)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    print("command fd", os.path.exists(f"/proc/self/fd/{r}"))
    sys.stdout.flush()
    os._exit(0)  # no exit handler: what spawn left stays for the test to see
""")


@needs_cgroup
def test_a_worker_out_of_descriptors_leaves_no_group() -> None:
    """A spawn whose pipes fail (EMFILE) after its group was made removes the group and closes
    the command's descriptors, as a failed Popen does (main: the group stayed until the
    supervisor's exit, the descriptors for good, and a raw OSError came out)."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    child = subprocess.Popen([sys.executable, "-c", OUT_OF_DESCRIPTORS], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = child.communicate(timeout=60)
    left = _groups_of(child.pid)
    for group in left:  # the test's own cleanup of what the defect leaves
        with contextlib.suppress(OSError):
            group.rmdir()
    assert out.startswith("refused "), (out, err)
    assert left == []  # main: rmh-sandbox.PID.START.2, until the supervisor's exit
    assert "command fd False" in out, out
    assert out.startswith("refused SandboxError cannot start the worker:"), out


@pytest.mark.skipif(NO_CGROUP is None, reason="a cpu cgroup can be made here (root or a "
                    "delegated subtree): the fallback does not apply")
@pytest.mark.skipif(not TIERS, reason="no sandbox tier runs here")
def test_without_cgroups_the_sandbox_runs_and_says_why() -> None:
    report = probe()
    assert report.cpu_group is False and report.cpu_group_detail
    assert report.to_json()["cpu_group"] is False
    with Sandbox(SandboxConfig(tier=TIERS[0]), {}) as sb:
        assert sb.exec("print(sum(range(10)))").ok
        assert {_cell(pid) for pid in _worker_pids(sb)} == {_cpu_cgroup()}



NICE_SUPERVISOR = textwrap.dedent("""
    import os, sys
    from pathlib import Path
    from sandbox import Sandbox, SandboxConfig
    with Sandbox(SandboxConfig(tier=sys.argv[1]), {}) as sb:
        assert sb.exec("x = 1").ok
        pid = sb._proc.proc.pid
        line = [l for l in open(f"/proc/{pid}/cgroup") if ":cpu:" in l or ":cpu," in l or
                l.startswith("0::")][0]
        group = Path(sys.argv[2]) / Path(line.strip().split(":", 2)[2]).name
        weight = group / ("cpu.shares" if sys.argv[3] == "1" else "cpu.weight.nice")
        print(os.getpriority(os.PRIO_PROCESS, 0), group.name, weight.read_text().strip())
""")


@needs_cgroup
@pytest.mark.skipif(not TIERS, reason="no sandbox tier runs here")
def test_in_a_shared_cgroup_the_worker_weighs_one_process_at_the_supervisors_nice() -> None:
    """A supervisor at nice +7 in a shared cpu cgroup made for the test (a service's, where
    autogroup does not apply): its worker's group is made inside it and weighs one process at
    that nice value (a fixed nice-0 weight let the cell take 90 % of a nice-10 supervisor's
    cgroup, NOTES-SBX14); the group is removed at close, the shared cgroup left empty."""
    version, parent = _cell(os.getpid())
    shared = parent / f"rmh-test-shared.{os.getpid()}"
    shared.mkdir()
    try:
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
        child = subprocess.run(
            ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec nice -n 7 "$@"', str(shared),
             sys.executable, "-c", NICE_SUPERVISOR, TIERS[0], str(shared), str(version)],
            env=env, capture_output=True, text=True, timeout=60, check=True)
        nice, name, weight = child.stdout.split()
        assert int(nice) == min(os.getpriority(os.PRIO_PROCESS, 0) + 7, 19)
        assert name.startswith("rmh-sandbox."), name
        assert weight == (str(WEIGHTS[int(nice) + 20]) if version == 1 else nice)
        assert [p.name for p in shared.iterdir() if p.is_dir()] == []  # removed at close
    finally:
        shared.rmdir()


@pytest.mark.parametrize("autogroup", ["", "/autogroup-7 nice 5\n", "garbled"])
def test_the_supervisors_nice_in_the_root_cgroup(autogroup: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """In the root cgroup with autogroup on, the supervisor weighs at its autogroup's nice; a
    process in the root autogroup reads an empty /proc/self/autogroup (CI ran in one and the
    test's own reading failed there) and weighs at its own nice, as does an unreadable line."""
    from sandbox import cpu_group
    files = {"/proc/sys/kernel/sched_autogroup_enabled": "1\n", "/proc/self/autogroup": autogroup}
    monkeypatch.setattr(cpu_group, "_read", lambda path: files[str(path)])
    monkeypatch.setattr(os.path, "ismount", lambda path: True)
    own = os.getpriority(os.PRIO_PROCESS, 0)
    found = cpu_group.Hierarchy(1, Path("/sys/fs/cgroup/cpu"))
    assert cpu_group._nice(found) == (5 if autogroup.startswith("/autogroup") else own)
