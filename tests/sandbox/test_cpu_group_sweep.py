"""The sweep of groups left by supervisors that are gone (sandbox/cgroup_owner.py `sweep`) never
removes a live supervisor's group, whichever PID namespace either runs in.

Session 39's CI failed here: a supervisor that is pid 1 of a PID namespace with its own /proc
named its groups `rmh-sandbox.1.START.N`; a host supervisor starting meanwhile read pid 1 as the
host's init, found another start time, and removed the new group before the worker was moved in
("cannot write '9' to .../cgroup.procs: No such file or directory"). The other way, a
namespaced supervisor's sweep found no host pid in its /proc and removed host supervisors' new
groups. Names carry the PID namespace now, and a live supervisor holds a lock on each of its
groups (session 40: judged by the name alone, a group of another namespace was never swept). The
sweep only lists, locks and rmdirs, so a plain directory stands for the cgroup parent."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sandbox import cgroup_owner

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

needs_pid_namespaces = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None,
    reason="needs root and unshare(1) for PID namespaces")

# A supervisor stand-in: prints its groups' tag; then per input line "make FOLDER SUFFIX" makes
# its group FOLDER/TAG.SUFFIX as a supervisor does (holding its lock), and "sweep FOLDER" sweeps
# the folder and says which names are left, until stdin closes.
SUPERVISOR = textwrap.dedent("""
    import os, sys
    from pathlib import Path
    from sandbox import cgroup_owner
    tag = cgroup_owner.tag()
    print(tag, flush=True)
    held = []
    for line in sys.stdin:
        verb, folder, *rest = line.split()
        if verb == "make":
            held.append(cgroup_owner.make_held(Path(folder) / f"{tag}.{rest[0]}"))
            print("made", flush=True)
        else:
            cgroup_owner.sweep(Path(folder))
            print(" ".join(sorted(os.listdir(folder))), flush=True)
""")


def _start(namespace: bool) -> tuple[subprocess.Popen[str], str]:
    argv = [sys.executable, "-c", SUPERVISOR]
    if namespace:
        argv = ["unshare", "-p", "-f", "--mount-proc", *argv]
    proc = subprocess.Popen(argv, env=ENV, cwd="/", stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def _ask(proc: subprocess.Popen[str], line: str) -> str:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(f"{line}\n")
    proc.stdin.flush()
    return proc.stdout.readline()


def _sweep_in(proc: subprocess.Popen[str], parent: Path) -> set[str]:
    return set(_ask(proc, f"sweep {parent}").split())


def test_a_gone_supervisors_groups_are_swept_and_a_live_ones_kept(tmp_path: Path) -> None:
    """In one namespace: a supervisor that ended leaves groups the next sweep removes (also
    names of the form before the namespace was in them, from the initial namespace); this
    process's own groups stay."""
    gone = subprocess.run([sys.executable, "-c", "from sandbox import cgroup_owner; "
                           "print(cgroup_owner.tag())"], env=ENV, capture_output=True, text=True,
                          check=True).stdout.strip()
    live = cgroup_owner.tag()
    names = [f"{gone}.2", f"{gone}.host", f"{live}.5", f"{live}.host", "unrelated"]
    legacy = ".".join(gone.split(".")[:-1]) + ".3"  # rmh-sandbox.PID.START.3
    for name in [*names, legacy]:
        (tmp_path / name).mkdir()
    cgroup_owner.sweep(tmp_path)
    left = {p.name for p in tmp_path.iterdir()}
    assert left == {f"{live}.5", f"{live}.host", "unrelated"} | (
        set() if cgroup_owner.pid_namespace() == cgroup_owner.INIT_PID_NAMESPACE else {legacy})


@needs_pid_namespaces
def test_no_sweep_removes_a_live_supervisors_group_in_another_pid_namespace(
        tmp_path: Path) -> None:
    """Live supervisors on the host and in two PID namespaces (each pid 1 there), each with
    groups, and groups of host supervisors that ended; every one sweeps in a seeded order.
    Every live supervisor's group stays; the ended host supervisors' groups go at the first
    sweep (before: the host sweep removed both namespaces' groups, and theirs the host's)."""
    rng = random.Random(40)
    supervisors = [_start(namespace) for namespace in (False, True, True)]
    try:
        tags = [tag for _, tag in supervisors]
        assert tags[1].split(".")[1] == "1" and tags[2].split(".")[1] == "1"  # pid 1 twice
        assert len(set(tags)) == 3
        ended = [subprocess.run([sys.executable, "-c", "from sandbox import cgroup_owner; "
                                 "print(cgroup_owner.tag())"], env=ENV, capture_output=True,
                                text=True, check=True).stdout.strip() for _ in range(2)]
        live = set()
        for (proc, tag) in supervisors:
            for suffix in rng.sample(["1", "2", "7", "host"], 2):
                assert _ask(proc, f"make {tmp_path} {suffix}").strip() == "made"
                live.add(f"{tag}.{suffix}")
        dead = {f"{tag}.{rng.choice(['1', '3', 'host'])}" for tag in ended}
        for name in sorted(dead):
            (tmp_path / name).mkdir()
        order = list(range(3)) * 2
        rng.shuffle(order)
        for index in order:
            left = _sweep_in(supervisors[index][0], tmp_path)
            assert live <= left, (index, sorted(live - left))
        assert {p.name for p in tmp_path.iterdir()} == live
    finally:
        for proc, _ in supervisors:
            proc.communicate("", timeout=30)
