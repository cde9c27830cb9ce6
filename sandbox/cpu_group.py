"""One CPU cgroup per worker, where the machine lets the supervisor make one.

Inside a shared cpu cgroup (a systemd service's `rmh serve` and its workers) the kernel's
autogroup does not apply and each of a cell's threads weighs as much as any other process
there: 1,000 spinning threads left the supervisor and other sessions' cells a few percent of
their CPU (session 38, NOTES-SBX13). A group bounds it: each worker gets its own child cgroup
of the supervisor's cpu cgroup, made before the worker starts (`make`), the worker's processes
moved in before any cell exists (`CpuGroup.place`), and removed at the worker's end
(`CpuGroup.remove`), at the supervisor's exit (`remove_all`), and, for a supervisor killed
outright, by the next supervisor's start (cgroup_owner.py: the sweep of groups no live
supervisor holds a lock on, judged alike from every PID namespace).

The limits (kernel Documentation/admin-guide/cgroup-v2.rst "CPU Interface Files";
Documentation/admin-guide/cgroup-v1/cgroups.rst for the files, Documentation/scheduler/
sched-design-CFS.rst and sched-bwc.rst for cpu.shares and the CFS bandwidth quota):
- weight: the worker as a whole weighs what the supervisor weighs beside it, whatever number
  of threads it runs (cgroup v2 `cpu.weight.nice`; v1 `cpu.shares`, the CFS weight of that
  nice value, 1024 at nice 0: kernel/sched/core.c `sched_prio_to_weight`): in the root cpu
  cgroup with autogroup on, the supervisor's autogroup's nice (/proc/self/autogroup, sched(7)
  "The autogroup feature"), else the supervisor's own nice value. A fixed nice-0 weight let a
  cell under a nice-10 supervisor in a service's cgroup take 90 % of that cgroup's CPU; the
  supervisor's nice in the root cgroup made a cell 10x weaker than main's autogroup under
  other sessions' load (NOTES-SBX14);
- quota: at most one CPU (`cpu.max` "100000 100000"; v1 `cpu.cfs_quota_us` 100000 per
  `cpu.cfs_period_us` 100000), kept to the parent's own quota where that is lower (v1 refuses
  a child's quota above its parent's: the parent's then bounds it).

cgroup v1 needs write access to the supervisor's cpu cgroup (root, or a directory given to
the user). cgroup v2 needs a delegated subtree (systemd `Delegate=yes`, cgroup-v2.rst
"Delegation") with the cpu controller: because of the "no internal process" rule the
supervisor first moves itself into a leaf of its own (`rmh-sandbox.PID.START.PIDNS.host`) and
enables `+cpu` in its cgroup's `cgroup.subtree_control`; at its exit (`remove_all`) it turns
`cpu` off there again and moves back (`_leave`), so the service's cgroup is left as found,
unless another supervisor still relies on it (a supervisor killed outright leaves both: its
empty leaf goes at the next start's sweep, and `+cpu` stays). Where neither works (an unprivileged
user without delegation) `probe` says why and workers run as before, in the supervisor's
cgroup (README "Known limits"; `rmh doctor`'s sandbox `cpu_group_detail`). So they do inside a
cgroup namespace whose hierarchy was mounted outside it: /proc/self/cgroup is relative to the
namespace's root there, and the directory it names is checked to hold the supervisor's pid
(session 39, NOTES-SBX15: the groups were made at the hierarchy's top, outside the
supervisor's cgroup and its quota). A setup that failed of a passing shortage (descriptors,
memory) is not kept (shortage.py); a group name another supervisor took is passed over.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from . import cgroup_owner, shortage
from .config import SandboxError

PERIOD_US = 100_000
QUOTA_US = 100_000  # one CPU
# The CFS weight of each nice value, -20..19 (kernel/sched/core.c sched_prio_to_weight).
NICE_WEIGHTS = (88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
                9548, 7620, 6100, 4904, 3906, 3121, 2501, 1991, 1586, 1277,
                1024, 820, 655, 526, 423, 335, 272, 215, 172, 137,
                110, 87, 70, 56, 45, 36, 29, 23, 18, 15)
_REMOVE_WAIT_S = 2.0  # a bwrap worker's inner processes die by PDEATHSIG, just after it
_BUSY_S = 2.0  # another rmh starting in the same v2 cgroup moves into its own leaf (_cpu_on)


class CpuGroupError(SandboxError):
    """A worker's cpu cgroup could not be made, filled or removed where the probe said it can."""


@dataclass(frozen=True)
class Hierarchy:
    """Where workers' groups are made: the cgroup `version` (1 or 2) and the directory."""

    version: int
    parent: Path


@dataclass
class CpuGroup:
    """One worker's cpu cgroup (its directory)."""

    version: int
    path: Path

    def place(self, pids: Callable[[], Iterable[int]]) -> None:
        """Move every process `pids` lists into the group, until a listing finds none not moved
        (bwrap forks its inner processes meanwhile: a child forked after its parent moved is
        born inside). CpuGroupError when the kernel refuses."""
        moved: set[int] = set()
        for _ in range(1000):
            todo = [pid for pid in pids() if pid not in moved]
            if not todo:
                return
            for pid in todo:
                try:
                    _write(self.path / "cgroup.procs", str(pid))
                except CpuGroupError as exc:
                    if not isinstance(exc.__cause__, ProcessLookupError):
                        raise  # else it ended: nothing to bound
                moved.add(pid)
        raise CpuGroupError(f"the worker's processes kept changing while moving them into "
                            f"{self.path}")

    def remove(self) -> bool:
        """rmdir the group once its processes have ended (waits up to a few seconds); False
        when it is still busy (left to `remove_all` and the next start's sweep)."""
        end = time.monotonic() + _REMOVE_WAIT_S
        while True:
            try:
                self.path.rmdir()
            except FileNotFoundError:
                break
            except OSError as exc:
                if exc.errno != errno.EBUSY or time.monotonic() > end:
                    return False
                time.sleep(0.01)
                continue
            break
        with _LOCK:
            cgroup_owner.release(_MADE.pop(self.path, None))
        return True


_LOCK = threading.Lock()
_MADE: dict[Path, int] = {}  # each group made and not removed: the descriptor of its lock
_HOST: list[tuple[Path, Path, int | None]] = []  # (cgroup, leaf, its lock): moved into (v2)
_COUNTER = itertools.count(1)


def _write(path: Path, value: str) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.write(fd, value.encode())
        finally:
            os.close(fd)
    except OSError as exc:
        raise CpuGroupError(f"cannot write {value!r} to {path}: {exc.strerror}") from exc


def _own_cgroup() -> Hierarchy | str:
    """The supervisor's cpu cgroup directory (v1 cpu controller first, else v2), or why none
    (proc(5) /proc/self/cgroup and /proc/self/mountinfo)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
        mounts = [line.split(" - ", 1) for line in Path("/proc/self/mountinfo").read_text()
                  .splitlines() if " - " in line]
    except OSError as exc:
        shortage.note(exc)
        return f"cannot read /proc/self/cgroup: {exc.strerror}"
    own: dict[str, str] = {}
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            own[name] = path
    for version, key in ((1, "cpu"), (2, "")):
        if key not in own:
            continue
        for head, tail in mounts:
            fields, info = head.split(), tail.split()
            if (len(info) < 3 or info[0] != ("cgroup" if version == 1 else "cgroup2")
                    or (version == 1 and "cpu" not in info[2].split(","))):
                continue
            root, mountpoint = fields[3], fields[4]
            path = own[key]
            rel = path[len(root):] if root != "/" and path.startswith(root) else path
            directory = Path(mountpoint) / rel.lstrip("/")
            if directory.name == f"{cgroup_owner.tag()}.host":  # moved there by a setup not kept
                directory = directory.parent
            elif str(os.getpid()) not in _read(directory / "cgroup.procs").split():
                # inside a cgroup namespace whose hierarchy was mounted outside it the path
                # is relative to the namespace's root, not the mount's: groups made from it
                # would sit outside the supervisor's own cgroup (and its quota)
                return (f"its cpu cgroup {path} is not {directory} (a cgroup namespace of a "
                        f"mount made outside it)")
            if version == 2 and "cpu" not in _read(directory / "cgroup.controllers").split():
                return f"cgroup v2 at {directory} without the cpu controller"
            return Hierarchy(version, directory)
    return "no cpu cgroup hierarchy mounted"


def _read(path: Path) -> str:
    """The file's text, "" where it cannot be read; a passing shortage (shortage.py) raises."""
    try:
        return path.read_text()
    except OSError as exc:
        if shortage.passing(exc):
            raise
        return ""


def _setup() -> Hierarchy | str:
    """Find the hierarchy, sweep leftovers, and check a group can be made and removed here
    (once per process, whichever thread asks first); the reason as a string where not."""
    with _SETUP_LOCK:
        return _setup_once()


_SETUP_LOCK = threading.Lock()


@shortage.kept
def _setup_once() -> Hierarchy | str:
    try:
        return _setup_found()
    except (OSError, CpuGroupError) as exc:
        if not shortage.note(exc):
            raise
        return f"cannot set up a cpu cgroup now: {exc}"


def _setup_found() -> Hierarchy | str:
    found = _own_cgroup()
    if isinstance(found, str):
        return found
    cgroup_owner.sweep(found.parent)
    if found.version == 2 and "cpu" not in _read(found.parent / "cgroup.subtree_control").split():
        leaf = found.parent / f"{cgroup_owner.tag()}.host"
        lock = None
        try:
            leaf.mkdir(mode=0o755, exist_ok=True)
            lock = cgroup_owner.hold(leaf)
            _write(leaf / "cgroup.procs", "0")  # the whole supervisor (cgroup-v2.rst)
            _cpu_on(found.parent)
        except (OSError, CpuGroupError) as exc:
            with contextlib.suppress(OSError, CpuGroupError):
                _write(found.parent / "cgroup.procs", "0")
                leaf.rmdir()
            cgroup_owner.release(lock)
            if shortage.passing(exc):
                raise
            why = "" if isinstance(exc, _Occupied) else " is not delegated with cpu"
            return f"cgroup v2 at {found.parent}{why}: {exc}"
        _HOST.append((found.parent, leaf, lock))
    try:
        _make(found).remove()
    except CpuGroupError as exc:
        if shortage.passing(exc):
            raise
        why = ("a read-only cgroup file system" if isinstance(exc.__cause__, OSError)
               and exc.__cause__.errno == errno.EROFS else
               "unprivileged without a delegated subtree")
        return f"{exc} (no cgroup can be made: {why})"
    return found


class _Occupied(CpuGroupError):
    """`+cpu` refused because the cgroup itself still holds processes."""


def _cpu_on(parent: Path) -> None:
    """`+cpu` in `parent`'s subtree_control; EBUSY while `parent` itself holds a process (the
    "no internal process" rule): two rmh starting in one cgroup each move into a leaf of their
    own, and the first found the other still in `parent`, between its check and its move (it
    gave up, saying "not delegated", and could not move back once the other turned `cpu` on:
    session 41, NOTES-SBX17). That passes in moments: tried again for `_BUSY_S` (`+cpu` where
    it is on succeeds); a process that stays (another program of the service) is named."""
    end = time.monotonic() + _BUSY_S
    while True:
        try:
            return _write(parent / "cgroup.subtree_control", "+cpu")
        except CpuGroupError as exc:
            if not (isinstance(exc.__cause__, OSError) and exc.__cause__.errno == errno.EBUSY):
                raise
            if time.monotonic() >= end:
                pids = _read(parent / "cgroup.procs").split()
                raise _Occupied(f"cpu cannot be turned on for its cgroups while it holds "
                                f"processes of its own ({' '.join(pids[:5]) or 'none listed'}"
                                "): move them into a leaf cgroup, or start rmh again once "
                                "another rmh starting beside it has moved into its own") from exc
        time.sleep(0.01)


def _make(found: Hierarchy) -> CpuGroup:
    for _ in range(100):  # a name taken (a /proc shared by PID namespaces can name two alike;
        path = found.parent / f"{cgroup_owner.tag()}.{next(_COUNTER)}"  # a sweeper got it
        try:  # before its lock was held: cgroup_owner.make_held) is passed over
            lock = cgroup_owner.make_held(path)
            break
        except FileExistsError:
            continue
        except OSError as exc:
            raise CpuGroupError(f"cannot make a cgroup in {found.parent}: {exc.strerror}") \
                from exc
    else:
        raise CpuGroupError(f"cannot make a cgroup in {found.parent}: every name taken")
    with _LOCK:
        _MADE[path] = lock
    group = CpuGroup(found.version, path)
    try:
        try:
            nice = _nice(found)
        except OSError as exc:
            raise CpuGroupError(f"cannot read the supervisor's autogroup: {exc}") from exc
        if found.version == 2:
            _write(path / "cpu.weight.nice", str(nice))
            _quota(path / "cpu.max", f"{QUOTA_US} {PERIOD_US}")
        else:
            _write(path / "cpu.shares", str(NICE_WEIGHTS[nice + 20]))
            _write(path / "cpu.cfs_period_us", str(PERIOD_US))
            _quota(path / "cpu.cfs_quota_us", str(QUOTA_US))
    except CpuGroupError:
        group.remove()
        raise
    return group


def _nice(found: Hierarchy) -> int:
    """The nice value whose weight the supervisor has beside its workers (module doc); the top
    of the mounted hierarchy is taken for the root cgroup (inside a cgroup namespace it is not,
    and the supervisor's autogroup nice, 0 unless set, is used there too)."""
    nice = os.getpriority(os.PRIO_PROCESS, 0)
    if (os.path.ismount(found.parent)
            and _read(Path("/proc/sys/kernel/sched_autogroup_enabled")).strip() == "1"):
        words = _read(Path("/proc/self/autogroup")).split()  # "/autogroup-N nice V"
        if len(words) == 3 and words[1] == "nice" and words[2].lstrip("-").isdigit():
            nice = int(words[2])
    return min(max(nice, -20), 19)


def _quota(path: Path, value: str) -> None:
    """Write the quota; a parent whose own quota is lower refuses it (EINVAL): its bound holds."""
    try:
        _write(path, value)
    except CpuGroupError as exc:
        if not isinstance(exc.__cause__, OSError) or exc.__cause__.errno != errno.EINVAL:
            raise


def status() -> tuple[bool, str]:
    """Whether each worker gets its own cpu cgroup here, and where or why not."""
    found = _setup()
    if isinstance(found, str):
        return False, found
    return True, (f"cgroup v{found.version}: one group per worker in {found.parent}, "
                  f"weighing what rmh weighs beside it, at most one CPU")


def make() -> CpuGroup | None:
    """A new group for the next worker, or None where the probe found none can be made;
    CpuGroupError where the setup failed of a passing shortage (the worker would have run
    outside a group; the next start sets up again)."""
    before = shortage.seen()
    found = _setup()
    if isinstance(found, str) and shortage.seen() != before:
        raise CpuGroupError(found)
    return None if isinstance(found, str) else _make(found)


def remove_all() -> None:
    """rmdir every group this process made and has not removed (the supervisor's exit, after
    its workers were killed)."""
    with _LOCK:
        paths = sorted(_MADE)
    for path in paths:
        CpuGroup(0, path).remove()
    while _HOST:
        _leave(*_HOST.pop())


def forked() -> None:
    """In a process forked from the supervisor (launch.py): none of its groups or its v2 leaf
    are this process's to remove or leave; the inherited lock descriptors are closed (the
    supervisor's own keep the locks)."""
    global _LOCK, _SETUP_LOCK
    _LOCK, _SETUP_LOCK = threading.Lock(), threading.Lock()
    for lock in [*_MADE.values(), *(host[2] for host in _HOST)]:
        cgroup_owner.release(lock)
    _MADE.clear()
    _HOST.clear()


def _leave(parent: Path, leaf: Path, lock: int | None) -> None:
    """Undo the move into `leaf` (cgroup v2, `_setup_once`), in the order the kernel allows:
    `-cpu` in the parent's subtree_control (off before: the move was made only then), the
    whole supervisor back into the parent (a cgroup with a controller on for its children
    holds no process: cgroup-v2.rst "No Internal Process Constraint"), the leaf removed.
    Only the last to leave turns `cpu` off: where the parent holds another cgroup once the
    groups of supervisors that are gone are swept (another supervisor that moved into its own
    leaf before this one turned `cpu` on, and its workers' groups), `-cpu` would take the
    controller from under them (their limits gone, their next group refused for want of
    `cpu.weight.nice`; session 40, NOTES-SBX16): nothing is undone, as for a supervisor
    killed outright, and the next start's sweep takes the leaf. A step refused ends it there:
    a child that turned `cpu` on below (EBUSY) keeps it on and the supervisor in its leaf; a
    process it started, born in the leaf and still alive, keeps the leaf (the sweep's, once
    empty)."""
    cgroup_owner.sweep(parent)
    with contextlib.suppress(OSError):
        if any(entry.is_dir() and entry.name != leaf.name for entry in os.scandir(parent)):
            return
    with contextlib.suppress(CpuGroupError, OSError):
        _write(parent / "cgroup.subtree_control", "-cpu")
        _write(parent / "cgroup.procs", "0")
        leaf.rmdir()
    cgroup_owner.release(lock)
