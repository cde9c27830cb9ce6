"""Spawn one worker process for a tier, and kill it: the OS-level half of the host.

The worker is `python -I -S -B worker.py IN OUT`: isolated mode, no site, no bytecode writes,
an empty environment (MALLOC_ARENA_MAX=2 only: glibc's per-thread arenas would otherwise
starve threads under RLIMIT_AS), stdin /dev/null, stdout/stderr on pipes the host drains, and
no inherited descriptor but the two channel pipes. It leads its own session and process group
so one SIGKILL to the group ends it (bwrap adds --die-with-parent and a PID namespace, so the
sandboxed interpreter dies with the outer bwrap process).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config import TIER_BWRAP, TIER_LANDLOCK, TIER_UNSAFE, SandboxConfig, SandboxError

_HERE = Path(__file__).resolve().parent
WORKER_FILES = ("worker.py", "worker_guard.py")
_INSIDE_PYTHON = "/opt/python"
_INSIDE_WORKER = "/opt/rmh"
_LIB_DIRS = ("/usr/lib", "/usr/lib64", "/usr/lib32", "/lib", "/lib64", "/lib32")
_MB = 1 << 20
# bwrap --die-with-parent (PR_SET_PDEATHSIG) fires when the *thread* that forked it exits, and
# exec() runs in short-lived server threads: so every worker is forked by this one long-lived
# thread, which ends only with the supervisor process.
_SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rmh-sandbox-spawner")


def interpreter() -> tuple[Path, Path]:
    """(real interpreter binary, real prefix it belongs to); the venv is not needed."""
    exe = Path(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))
    prefix = Path(os.path.realpath(sys.base_prefix))
    return exe, prefix


def bwrap_argv(config: SandboxConfig) -> list[str]:
    """bwrap command line up to and including the interpreter's flags (`-I -S -B`)."""
    exe, prefix = interpreter()
    if not exe.is_relative_to(prefix):
        raise SandboxError(f"interpreter {exe} is outside its prefix {prefix}")
    argv = ["bwrap", "--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL",
            "--uid", "65534", "--gid", "65534", "--die-with-parent", "--new-session",
            "--clearenv", "--setenv", "MALLOC_ARENA_MAX", "2",
            "--ro-bind", str(prefix), _INSIDE_PYTHON]
    site = Path(f"lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages")
    if (prefix / site).is_dir():  # hide the base interpreter's third-party packages
        argv += ["--tmpfs", f"{_INSIDE_PYTHON}/{site}"]
    for lib in _LIB_DIRS:
        if os.path.islink(lib):
            argv += ["--symlink", os.readlink(lib), lib]
        elif os.path.isdir(lib):
            argv += ["--ro-bind", lib, lib]
    for name in WORKER_FILES:
        argv += ["--ro-bind", str(_HERE / name), f"{_INSIDE_WORKER}/{name}"]
    argv += ["--dev", "/dev", "--size", str(config.scratch_mb * _MB), "--tmpfs", "/tmp",
             "--chdir", "/tmp", f"{_INSIDE_PYTHON}/{exe.relative_to(prefix)}", "-I", "-S", "-B"]
    return argv


def guard_plan(tier: str, config: SandboxConfig, seccomp_bpf: bytes | None) -> dict[str, Any]:
    """What the worker installs on itself before user code (see worker_guard.install)."""
    rlimits = {"AS": config.memory_mb * _MB, "CPU": config.cpu_s,
               "NOFILE": config.open_files, "FSIZE": config.scratch_mb * _MB, "CORE": 0}
    plan: dict[str, Any] = {"rlimits": rlimits, "drop_caps": tier != TIER_UNSAFE}
    if tier == TIER_LANDLOCK:
        _, prefix = interpreter()
        paths = {str(prefix)} | {os.path.realpath(p) for p in _LIB_DIRS if os.path.isdir(p)}
        paths |= {str(_HERE / name) for name in WORKER_FILES}
        plan["landlock"] = sorted(paths)
    if tier != TIER_UNSAFE and seccomp_bpf is not None:
        plan["seccomp"] = seccomp_bpf.hex()
    return plan


@dataclass
class WorkerProcess:
    """A spawned worker: its process and the host ends of its four pipes."""

    proc: subprocess.Popen[bytes]
    to_worker: int
    from_worker: int
    stdout: int
    stderr: int

    def kill(self) -> None:
        """SIGKILL the whole process group (idempotent; never signals anything else)."""
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)

    def close(self) -> None:
        """Kill, reap, and close the host's descriptors."""
        self.kill()
        self.proc.wait()
        for fd in (self.to_worker, self.from_worker, self.stdout, self.stderr):
            with contextlib.suppress(OSError):
                os.close(fd)

    def describe_exit(self) -> str:
        code = self.proc.poll()
        if code is None:
            return "still running"
        if code < 0:
            return f"killed by signal {signal.Signals(-code).name}"
        return f"exited with status {code}"


def spawn(tier: str, config: SandboxConfig) -> WorkerProcess:
    """Start a worker for `tier`; the caller sends it the init frame next."""
    exe, _ = interpreter()
    to_r, to_w = os.pipe()
    from_r, from_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    if tier == TIER_BWRAP:
        argv = [*bwrap_argv(config), f"{_INSIDE_WORKER}/worker.py"]
    else:
        argv = [str(exe), "-I", "-S", "-B", str(_HERE / "worker.py")]
    argv += [str(to_r), str(from_w)]
    try:
        proc = _SPAWNER.submit(
            subprocess.Popen, argv, stdin=subprocess.DEVNULL, stdout=out_w, stderr=err_w,
            pass_fds=(to_r, from_w), env={"MALLOC_ARENA_MAX": "2"}, cwd="/",
            start_new_session=True).result()
    except OSError as exc:
        for fd in (to_r, to_w, from_r, from_w, out_r, out_w, err_r, err_w):
            os.close(fd)
        raise SandboxError(f"cannot start the worker: {exc}") from exc
    for fd in (to_r, from_w, out_w, err_w):
        os.close(fd)
    for fd in (to_w, from_r, out_r, err_r):
        os.set_blocking(fd, False)
    return WorkerProcess(proc, to_w, from_r, out_r, err_r)
