"""Spawn one worker process for a tier, and kill it: the OS-level half of the host.

The worker is `python -I -S -B worker.py IN OUT`: isolated mode, no site, no bytecode writes,
an empty environment (MALLOC_ARENA_MAX=2 only: glibc's per-thread arenas would otherwise
starve threads under RLIMIT_AS; in bwrap, LD_LIBRARY_PATH too for a shared-library build, whose
libpython is bound at /opt/python/lib), stdin /dev/null, stdout/stderr on pipes the host drains, and
no inherited descriptor but the two channel pipes. It leads its own session and process group
so one SIGKILL to the group ends it (bwrap adds --die-with-parent and a PID namespace, so the
sandboxed interpreter dies with the outer bwrap process).

The worker dies with its supervisor: it sets PR_SET_PDEATHSIG itself after its last credential
change (worker_guard), the filter refuses any change of it, and every live worker's process
group is SIGKILLed on the supervisor's way out (`kill_all_workers`: atexit here, and the
SIGTERM/SIGINT handling of `rmh serve` and `rmh exec`).

Between cells the worker is stopped (`WorkerProcess.pause`, SIGSTOP; SIGCONT when the next cell
starts) and its threads are counted from /proc: nothing of a cell runs once it has answered.

Identity (identity.py): as root, bwrap itself runs as the dedicated uid with no supplementary
groups, so the uid its user namespace maps is not root; it gets the trees it binds read-only as
descriptors opened here (`--ro-bind-fd`). bwrap 0.8 still resolves each descriptor's path
(/proc/self/fd/N) as that uid, so the uid needs search rights on the trees' ancestors: where it
lacks them (an interpreter under a 0700 /root) the tier fails its probe and `auto` takes the
next one (`rmh doctor` says why; session 29 NOTES-FLAKE). /dev is a small read-only tmpfs
holding only null, zero, random and urandom (bwrap 0.8 cannot bind a device read-only: a
read-only bind is also nodev, so these four are device binds; the worker's uid owns none of
them, and the filter refuses chmod and utime); /tmp is the only writable mount, of `scratch_mb`
(its file count capped by the worker's guards); there is no /dev/shm.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import cpu_group
from .config import SandboxConfig, SandboxError
from .identity import WorkerIdentity, worker_identity

_HERE = Path(__file__).resolve().parent
WORKER_FILES = ("worker.py", "worker_guard.py", "worker_root.py")
_INSIDE_PYTHON = "/opt/python"
_INSIDE_WORKER = "/opt/rmh"
_LIB_DIRS = ("/usr/lib", "/usr/lib64", "/usr/lib32", "/lib", "/lib64", "/lib32")
_MB = 1 << 20
_DEVICES = ("/dev/null", "/dev/zero", "/dev/random", "/dev/urandom")
# bwrap --die-with-parent (PR_SET_PDEATHSIG) fires when the *thread* that forked it exits, and
# exec() runs in short-lived server threads: so every worker is forked by this one long-lived
# thread, which ends only with the supervisor process.
_SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rmh-sandbox-spawner")


def interpreter() -> tuple[Path, Path]:
    """(real interpreter binary, real prefix it belongs to); the venv is not needed."""
    exe = Path(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))
    prefix = Path(os.path.realpath(sys.base_prefix))
    return exe, prefix


@dataclass(frozen=True)
class Command:
    """A worker's command line, the descriptors it must inherit besides the channel, and the
    identity to start it as (None: the supervisor's own)."""

    argv: list[str]
    fds: tuple[int, ...]
    identity: WorkerIdentity | None

    def close(self) -> None:
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)

    def popen_identity(self) -> dict[str, Any]:
        """Popen's user/group/extra_groups for `identity` (no supplementary groups)."""
        if self.identity is None:
            return {}
        return {"user": self.identity.uid, "group": self.identity.gid, "extra_groups": []}


def own_libpython(prefix: Path) -> list[str]:
    """bwrap's `--setenv LD_LIBRARY_PATH /opt/python/lib` where the interpreter is a shared
    build (its libpython in `prefix`/lib): it finds that library by an absolute RUNPATH of the
    host's prefix, which is not there inside, and the loader took the system's libpython of the
    same soname instead (another patch release: `import ssl` failed on a missing symbol)."""
    if not any((prefix / "lib").glob("libpython*.so*")):
        return []
    return ["--setenv", "LD_LIBRARY_PATH", f"{_INSIDE_PYTHON}/lib"]


def bwrap_command(config: SandboxConfig) -> Command:
    """bwrap command line up to and including the interpreter's flags (`-I -S -B`); the
    read-only trees are bound from descriptors opened here (closed by `Command.close`)."""
    exe, prefix = interpreter()
    if not exe.is_relative_to(prefix):
        raise SandboxError(f"interpreter {exe} is outside its prefix {prefix}")
    fds: list[int] = []

    def ro_bind(source: str, dest: str) -> list[str]:
        fds.append(os.open(source, os.O_PATH | os.O_CLOEXEC))
        return ["--ro-bind-fd", str(fds[-1]), dest]

    try:
        # CAP_SYS_ADMIN (and CAP_SETPCAP, to empty the bounding set) in bwrap's user namespace
        # only, for the worker's guards to remount the device binds read-only before they drop
        # every capability; no --disable-userns (it would move the worker into a nested user
        # namespace that cannot remount): the filter refuses unshare, clone(CLONE_NEW*), clone3.
        argv = ["bwrap", "--unshare-all", "--unshare-user", "--cap-drop", "ALL", "--cap-add",
                "CAP_SYS_ADMIN", "--cap-add", "CAP_SETPCAP", "--uid", "65534", "--gid", "65534",
                "--die-with-parent", "--new-session",
                "--clearenv", "--setenv", "MALLOC_ARENA_MAX", "2",
                *own_libpython(prefix), *ro_bind(str(prefix), _INSIDE_PYTHON)]
        site = Path(f"lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages")
        if (prefix / site).is_dir():  # hide the base interpreter's third-party packages
            argv += ["--tmpfs", f"{_INSIDE_PYTHON}/{site}", "--remount-ro",
                     f"{_INSIDE_PYTHON}/{site}"]
        for lib in _LIB_DIRS:
            if os.path.islink(lib):
                argv += ["--symlink", os.readlink(lib), lib]
            elif os.path.isdir(lib):
                argv += ro_bind(lib, lib)
        for name in WORKER_FILES:
            argv += ro_bind(str(_HERE / name), f"{_INSIDE_WORKER}/{name}")
        argv += ["--size", str(64 << 10), "--tmpfs", "/dev"]
        for dev in _DEVICES:
            if os.path.exists(dev):
                argv += ["--dev-bind", dev, dev]
        argv += ["--remount-ro", "/dev", "--size", str(config.scratch_mb * _MB), "--tmpfs",
                 "/tmp", "--remount-ro", "/", "--chdir", "/tmp",
                 f"{_INSIDE_PYTHON}/{exe.relative_to(prefix)}", "-I", "-S", "-B"]
    except OSError as exc:
        for fd in fds:
            os.close(fd)
        raise SandboxError(f"cannot open a tree to bind into bwrap: {exc}") from exc
    return Command(argv, tuple(fds), worker_identity(config.worker_user))


def bwrap_worker_command(config: SandboxConfig) -> Command:
    """The bwrap tier's worker: `bwrap_command` running worker.py bound inside."""
    command = bwrap_command(config)
    command.argv.append(f"{_INSIDE_WORKER}/worker.py")
    return command


def plain_command(config: SandboxConfig) -> Command:
    """The worker started as the supervisor (Landlock, seccomp, unsafe tiers): it drops its
    own identity in worker_guard."""
    exe, _ = interpreter()
    return Command([str(exe), "-I", "-S", "-B", str(_HERE / "worker.py")], (), None)


def device_nodes() -> list[str]:
    """The device nodes bwrap binds (and the worker remounts read-only) that exist here."""
    return [dev for dev in _DEVICES if os.path.exists(dev)]


def landlock_paths() -> list[str]:
    """What a Landlock worker may read (and, in its private root, sees): the interpreter's
    prefix, the library folders and the worker files (real paths)."""
    _, prefix = interpreter()
    paths = {str(prefix)} | {os.path.realpath(p) for p in _LIB_DIRS if os.path.isdir(p)}
    paths |= {str(_HERE / name) for name in WORKER_FILES}
    return sorted(paths)


def lib_symlinks() -> dict[str, str]:
    """The library folders that are symlinks (/lib -> usr/lib), re-created in a private root."""
    return {lib: os.readlink(lib) for lib in _LIB_DIRS if os.path.islink(lib)}


@dataclass
class WorkerProcess:
    """A spawned worker: its process and the host ends of its four pipes."""

    proc: subprocess.Popen[bytes]
    to_worker: int
    from_worker: int
    stdout: int
    stderr: int
    group: cpu_group.CpuGroup | None = None  # its own cpu cgroup, where one can be made
    _paused: tuple[bool, tuple[int, ...]] | None = None
    owner: int = field(default_factory=os.getpid)  # the process that spawned it

    def kill(self) -> None:
        """SIGKILL the whole process group (idempotent; never signals anything else; a no-op in
        a process forked from the supervisor: the worker is not its own)."""
        if self.proc.returncode is None and os.getpid() == self.owner:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)

    def close(self) -> None:
        """Kill, reap, and close the host's descriptors (in a forked process only its
        copies of the descriptors)."""
        if os.getpid() != self.owner:
            for fd in (self.to_worker, self.from_worker, self.stdout, self.stderr):
                with contextlib.suppress(OSError):
                    os.close(fd)
            return
        self.kill()
        self.proc.wait()
        with _LIVE_LOCK:
            _LIVE.pop(self.proc.pid, None)
        if self.group is not None:
            self.group.remove()  # still busy (inner processes dying): at exit, next start
        for fd in (self.to_worker, self.from_worker, self.stdout, self.stderr):
            with contextlib.suppress(OSError):
                os.close(fd)

    def _tree(self, descendants: bool) -> dict[int, tuple[int, int]]:
        """(parent, threads) of the worker's processes from /proc: the worker alone, or with
        `descendants` (bwrap) the process started here and every process below it."""
        tree: dict[int, tuple[int, int]] = {}
        todo = [self.proc.pid]
        every: dict[int, tuple[int, int] | None] | None = None  # read only without children files
        while todo:  # no fork in the sandbox: bwrap's two processes and the worker at most
            pid = todo.pop()
            if (stat := _proc_stat(pid)) is None:
                continue
            tree[pid] = stat
            if descendants:
                children = _children(pid)
                if children is None:  # a kernel without them: every process, once
                    every = _proc_stats() if every is None else every
                    children = [child for child, st in every.items() if st and st[0] == pid]
                todo += children
        return tree

    def threads(self, descendants: bool) -> int | None:
        """The most threads of any process in the worker's tree, as /proc tells the host (the
        worker's own count is only its word: a `_thread` thread is not in it). None where
        /proc does not say."""
        return max((stat[1] for stat in self._tree(descendants).values()), default=None)

    def pause(self, descendants: bool) -> None:
        """SIGSTOP every process of the worker's tree once a cell has answered: nothing of a
        cell may run between cells (a signal handler on a timer, a patched exec loop would
        otherwise spin until RLIMIT_CPU); `resume` continues them."""
        self._paused = (descendants, tuple(self._tree(descendants)) or (self.proc.pid,))
        self._signal(self._paused[1], signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT what `pause` stopped: the process started here always (an unreaped child
        of ours: its pid is no other process's, and where /proc does not say it is the one
        `pause` stopped), the others while still in the worker's tree (a pid below bwrap that
        died meanwhile may be another process's by now); a no-op when nothing is paused."""
        if self._paused is not None:
            descendants, pids = self._paused
            self._paused = None
            tree = self._tree(descendants)
            self._signal(tuple(pid for pid in pids if pid == self.proc.pid or pid in tree),
                         signal.SIGCONT)

    def _signal(self, pids: tuple[int, ...], signum: int) -> None:
        if self.proc.returncode is None and os.getpid() == self.owner:
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signum)

    def describe_exit(self) -> str:
        code = self.proc.poll()
        if code is None:
            return "still running"
        if code < 0:
            return f"killed by signal {signal.Signals(-code).name}"
        return f"exited with status {code}"


def _proc_stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, number of threads) of `pid` from /proc/PID/stat (proc(5)), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), int(fields[17])


def _children(pid: int) -> list[int] | None:
    """The children of `pid` from /proc/PID/task/TID/children (proc(5); a few reads, where
    scanning every process of a busy host costs milliseconds a cell), or None where the
    kernel has no such files (CONFIG_PROC_CHILDREN) or /proc does not say."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
        found: list[int] = []
        for tid in sorted(tasks):
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                found += [int(child) for child in f.read().split()]
    except (OSError, ValueError):  # gone, or no children files: the caller scans
        return None
    return found


def _proc_stats() -> dict[int, tuple[int, int] | None]:
    """`_proc_stat` of every process the host sees."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return {}
    return {int(name): _proc_stat(int(name)) for name in names if name.isdigit()}


def _popen(argv: list[str], out: int, err: int, fds: tuple[int, ...],
           identity: dict[str, Any]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                            pass_fds=fds, env={"MALLOC_ARENA_MAX": "2"}, cwd="/",
                            start_new_session=True, **identity)


def spawn(command: Command) -> WorkerProcess:
    """Start a worker by its tier's `command` (closed here) in its own cpu cgroup where one can
    be made (cpu_group.py: its processes are moved in before this returns, so before any
    cell); the caller sends it the init frame next."""
    try:
        group = cpu_group.make()
    except SandboxError:
        command.close()
        raise
    pipes: list[int] = []
    try:  # out of descriptors (EMFILE): the group, the pipes made and the command's go too
        for _ in range(4):
            pipes.extend(os.pipe())
    except OSError as exc:
        for fd in pipes:
            os.close(fd)
        command.close()
        if group is not None:
            group.remove()
        raise SandboxError(f"cannot start the worker: {exc}") from exc
    to_r, to_w, from_r, from_w, out_r, out_w, err_r, err_w = pipes
    argv = [*command.argv, str(to_r), str(from_w)]
    try:
        proc = _SPAWNER.submit(_popen, argv, out_w, err_w, (to_r, from_w, *command.fds),
                               command.popen_identity()).result()
    except (OSError, subprocess.SubprocessError) as exc:
        for fd in (to_r, to_w, from_r, from_w, out_r, out_w, err_r, err_w):
            os.close(fd)
        if group is not None:
            group.remove()
        raise SandboxError(f"cannot start the worker: {exc}") from exc
    finally:
        command.close()
    with _LIVE_LOCK:
        _LIVE[proc.pid] = proc
    for fd in (to_r, from_w, out_w, err_w):
        os.close(fd)
    for fd in (to_w, from_r, out_r, err_r):
        os.set_blocking(fd, False)
    worker = WorkerProcess(proc, to_w, from_r, out_r, err_r, group)
    if group is not None:
        try:
            group.place(lambda: worker._tree(True) or (proc.pid,))
        except SandboxError:
            worker.close()
            raise
    return worker


_LIVE: dict[int, subprocess.Popen[bytes]] = {}  # every worker spawned and not yet closed
_LIVE_LOCK = threading.Lock()


def kill_all_workers() -> None:
    """SIGKILL the process group of every live worker (the supervisor is on its way out).
    Safe from a signal handler and at exit: no waiting, never signals anything else."""
    for pid, proc in list(_LIVE.items()):
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)


def _at_exit() -> None:
    kill_all_workers()
    cpu_group.remove_all()


def _forked() -> None:
    """In a process forked from the supervisor: it owns none of the supervisor's workers (its
    exit handler, inherited, killed them all: session 40, NOTES-SBX16), nor their groups; its
    spawner thread was not forked with it (a sandbox started there waited for it forever)."""
    global _LIVE_LOCK, _SPAWNER
    _LIVE_LOCK = threading.Lock()  # another thread may have held it at the fork
    _LIVE.clear()
    _SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rmh-sandbox-spawner")
    cpu_group.forked()


atexit.register(_at_exit)
os.register_at_fork(after_in_child=_forked)
