"""cgroup v2: the supervisor's move into a leaf of its own is undone at its exit (HOUSE39).

On a delegated v2 subtree the supervisor moves itself into `rmh-sandbox.PID.START.PIDNS.host` and
turns `+cpu` on in its cgroup's `cgroup.subtree_control` (sandbox/cpu_group.py); before, that
was never undone: `remove_all` (atexit) removed the workers' groups and left the leaf and
`+cpu`, so the service's cgroup could hold no process of its own afterwards (a controller on
for children: the "no internal process" rule). This host mounts cgroup v1, so the kernel's
part cannot run here: a folder stands in for the v2 cgroup and the writes to its control files
are recorded in order (what the kernel would be told); the folders are made and removed for
real. The real v2 run is left to a host that has one (NOTES-HOUSE39.md)."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox import cgroup_owner, cpu_group

ENV = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}


@pytest.fixture
def v2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, list[str]]]:
    """A v2 cgroup folder without `cpu` in its subtree_control; the writes, as 'FILE VALUE'
    relative to it ('*' for the per-group limits)."""
    parent = tmp_path / "service"
    parent.mkdir()
    writes: list[str] = []

    def write(path: Path, value: str) -> None:
        rel = path.relative_to(parent)
        writes.append(f"{rel if len(rel.parts) == 1 or rel.name == 'cgroup.procs' else '*'} "
                      f"{value}")

    monkeypatch.setattr(cpu_group, "_own_cgroup", lambda: cpu_group.Hierarchy(2, parent))
    monkeypatch.setattr(cpu_group, "_write", write)
    monkeypatch.setattr(cpu_group, "_read", lambda path: "")
    monkeypatch.setattr(cpu_group, "_HOST", [], raising=False)  # this test's moves only
    cpu_group._setup_once.cache_clear()
    yield parent, writes
    cpu_group._setup_once.cache_clear()


def test_the_exit_moves_the_supervisor_back_and_turns_cpu_off(
        v2: tuple[Path, list[str]]) -> None:
    parent, writes = v2
    assert cpu_group.status()[0]
    leaf = f"{cgroup_owner.tag()}.host"
    assert writes[:2] == [f"{leaf}/cgroup.procs 0", "cgroup.subtree_control +cpu"]
    group = cpu_group.make()
    assert group is not None and group.path.is_dir()
    del writes[:]
    cpu_group.remove_all()
    # main: [] and the leaf left, the supervisor in it, +cpu on
    assert writes == ["cgroup.subtree_control -cpu", "cgroup.procs 0"]
    assert sorted(p.name for p in parent.iterdir()) == []
    cpu_group.remove_all()  # once only
    assert writes == ["cgroup.subtree_control -cpu", "cgroup.procs 0"]


def test_a_refused_step_ends_the_undo_there(
        v2: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    """`-cpu` refused (a child turned cpu on below: EBUSY): the supervisor is not moved into a
    cgroup that may hold no process, and its leaf stays."""
    parent, writes = v2
    assert cpu_group.status()[0]
    recorded = cpu_group._write

    def busy(path: Path, value: str) -> None:
        recorded(path, value)
        if value == "-cpu":
            raise cpu_group.CpuGroupError("busy") from OSError(errno.EBUSY, "busy")

    monkeypatch.setattr(cpu_group, "_write", busy)
    del writes[:]
    cpu_group.remove_all()
    assert writes == ["cgroup.subtree_control -cpu"]
    assert [p.name for p in parent.iterdir()] == [f"{cgroup_owner.tag()}.host"]


# Another supervisor in the same cgroup: it moved into a leaf of its own before this one turned
# `cpu` on (both started at once) and made a worker's group there, as cpu_group._make does
# (the control files are not there in a folder: its writes are dropped); it holds the group
# until stdin closes.
OTHER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from sandbox import cpu_group
    cpu_group._write = lambda path, value: None
    group = cpu_group._make(cpu_group.Hierarchy(2, Path(sys.argv[1])))
    print(group.path.name, flush=True)
    sys.stdin.read()
""")


def _other(parent: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-c", OTHER, str(parent)], env=ENV, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def test_the_exit_leaves_cpu_on_while_another_supervisor_relies_on_it(
        v2: tuple[Path, list[str]]) -> None:
    """main: `-cpu` at this supervisor's exit took the controller from under the other
    supervisor's live worker group (its limits gone, its next group refused for want of
    cpu.weight.nice). Now the last to leave turns it off; this one stays in its leaf."""
    parent, writes = v2
    assert cpu_group.status()[0]
    proc, name = _other(parent)
    try:
        del writes[:]
        cpu_group.remove_all()
        assert writes == []
        assert sorted(p.name for p in parent.iterdir()) == sorted(
            [name, f"{cgroup_owner.tag()}.host"])
    finally:
        proc.communicate("", timeout=30)


def test_the_last_supervisor_to_leave_turns_cpu_off(v2: tuple[Path, list[str]]) -> None:
    """The other supervisor was killed -9 with its group made: the exit's sweep removes the
    group, and this supervisor, the last in the cgroup, turns `cpu` off and moves back."""
    parent, writes = v2
    assert cpu_group.status()[0]
    proc, name = _other(parent)
    proc.kill()
    proc.communicate(timeout=30)
    assert (parent / name).is_dir()
    del writes[:]
    cpu_group.remove_all()
    assert writes == ["cgroup.subtree_control -cpu", "cgroup.procs 0"]
    assert list(parent.iterdir()) == []


# Another supervisor starting beside this one, still in the shared cgroup itself: it lists its
# pid in the stand-in's `cgroup.procs` (the processes the cgroup itself holds), and after
# `delay` seconds (never, when negative) moves into a leaf of its own: it empties that file.
STARTING = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    procs, delay = Path(sys.argv[1]) / "cgroup.procs", float(sys.argv[2])
    procs.write_text(f"{os.getpid()}\\n")
    print("in", flush=True)
    if delay >= 0:
        time.sleep(delay)
        procs.write_text("")
    sys.stdin.read()
""")


def _kernel_rule(parent: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stand-in refuses `+cpu` (EBUSY) while its `cgroup.procs` lists a process, as the
    kernel does for a cgroup holding processes of its own."""
    recorded = cpu_group._write

    def write(path: Path, value: str) -> None:
        recorded(path, value)
        if value == "+cpu" and (parent / "cgroup.procs").read_text().strip():
            raise cpu_group.CpuGroupError("busy") from OSError(errno.EBUSY, "busy")

    monkeypatch.setattr(cpu_group, "_write", write)
    monkeypatch.setattr(cpu_group, "_read", lambda path: path.read_text()
                        if path.name == "cgroup.procs" and path.exists() else "")


@pytest.mark.parametrize("delay", [0.5, 1.0])
def test_a_supervisor_starting_beside_this_one_does_not_cost_it_its_cpu_group(
        v2: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch, delay: float) -> None:
    """Two rmh starting in one cgroup: this one turns `cpu` on while the other is still in the
    cgroup itself, before its own move into its leaf. main: EBUSY, given up ("not delegated
    with cpu"), no cpu group for its workers. Now tried again until the other has moved."""
    parent, writes = v2
    _kernel_rule(parent, monkeypatch)
    monkeypatch.setattr(cpu_group, "_BUSY_S", 30.0, raising=False)  # however loaded
    other = subprocess.Popen([sys.executable, "-c", STARTING, str(parent), str(delay)],
                             env=ENV, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert other.stdout is not None and other.stdout.readline() == "in\n"
        ok, why = cpu_group.status()
        assert ok, why
        assert "cgroup.subtree_control +cpu" in writes
        assert [p.name for p in parent.iterdir() if p.is_dir()] == [
            f"{cgroup_owner.tag()}.host"]
        group = cpu_group.make()
        assert group is not None and group.path.is_dir()
    finally:
        other.communicate("", timeout=30)


def test_a_process_that_stays_in_the_cgroup_is_named(
        v2: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    """A process of the service stays in the cgroup itself: no cpu group, and the reason says
    so and names it (main: "not delegated with cpu: ... busy", which it is)."""
    parent, writes = v2
    _kernel_rule(parent, monkeypatch)
    monkeypatch.setattr(cpu_group, "_BUSY_S", 0.2, raising=False)
    other = subprocess.Popen([sys.executable, "-c", STARTING, str(parent), "-1"],
                             env=ENV, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert other.stdout is not None and other.stdout.readline() == "in\n"
        ok, why = cpu_group.status()
        assert not ok
        assert "not delegated" not in why and str(other.pid) in why and "leaf" in why, why
        assert [p.name for p in parent.iterdir() if p.is_dir()] == []
        assert writes[-1] == "cgroup.procs 0", writes  # moved back
    finally:
        other.communicate("", timeout=30)
