"""A fork server for the kill-at-every-step sweeps: a real process per run, without paying for a
fresh interpreter each time.

A sweep kills a process after its 1st, 2nd, ... N-th file operation (the store's fault
injection SIGKILLs the process itself) and checks what the next open finds. Each of those runs
must be a real, separate process that dies by SIGKILL; it need not re-import numpy, the vault
and the CLI from source. `ForkServer` starts one Python that imports `preload` once, then forks
a child per `run`: the child takes the run's environment, working folder, argv and stdin, runs
`python -m MODULE ARGS` or `python -c CODE ARGS` as that command line would (`runpy`, `exec`,
its SystemExit and its interpreter shutdown), and its exit status comes back as
`subprocess.run` reports it (-9 for the SIGKILL); `run_together` forks several children at
once, which run concurrently (a race between real processes). Only the import work is shared:
nothing in `preload` may open a vault or start a thread (a fork copies neither safely).

What a fork does not redo: the interpreter's start-up reading of the environment (PYTHONPATH,
PYTHONHASHSEED: every child has the server's hash seed; the shared servers of `run_cli` and
`run_python` are one per set of PYTHON* variables). TZ is read again (`time.tzset`) in each
child. The sweeps' promises hold for any.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType

SERVER = r"""
import gc, io, json, os, sys, time
exec(sys.argv[1])
proto_in, proto_out = sys.stdin.buffer, sys.stdout.buffer


def serve():
    while True:
        line = proto_in.readline()
        if not line:
            sys.exit(0)
        reqs = json.loads(line)  # a list: its commands run at once, each in its own child
        sys.stdout.flush()
        sys.stderr.flush()
        # What the server holds, out of the collector's sight: a child's collections and its
        # interpreter shutdown then walk only what the command made, instead of touching (and
        # so copying) every page of the pre-imported heap. Nothing of the server is garbage.
        gc.collect()
        gc.freeze()
        pids = []
        for req in reqs:
            pid = os.fork()
            if pid == 0:
                return req
            pids.append(pid)
        codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids]
        proto_out.write(b" ".join(b"%d" % code for code in codes) + b"\n")
        proto_out.flush()


req = serve()
del serve
for fd, (path, flags) in enumerate(((req["stdin"], os.O_RDONLY),
                                    (req["stdout"], os.O_WRONLY | os.O_TRUNC),
                                    (req["stderr"], os.O_WRONLY | os.O_TRUNC))):
    opened = os.open(path, flags)
    os.dup2(opened, fd)
    os.close(opened)
# The standard streams a fresh interpreter would make on these files: the server's own
# encodings and error handlers (same locale), stderr line-buffered.
streams = [sys.stdin, sys.stdout, sys.stderr]
sys.stdin, sys.stdout, sys.stderr = (
    io.TextIOWrapper(open(fd, "rb" if fd == 0 else "wb", closefd=False), encoding=s.encoding,
                     errors=s.errors, line_buffering=fd == 2)
    for fd, s in enumerate(streams))
sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr
del streams
os.environ.clear()
os.environ.update(req["env"])
time.tzset()  # the C library's zone from this TZ, as a fresh interpreter reads it
os.chdir(req["cwd"])
if req["module"] is not None:
    import runpy
    sys.argv = [req["module"], *req["args"]]
    runpy.run_module(req["module"], run_name="__main__", alter_sys=True)
else:
    sys.argv = ["-c", *req["args"]]
    code = compile(req["code"], "<string>", "exec")
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    del req
    exec(code, namespace)
"""


class ForkServer:
    """One pre-imported Python that runs each command in a forked child (module docstring).
    Use it as a context manager; `run` is one command at a time."""

    def __init__(self, preload: str, *, workdir: Path, env: Mapping[str, str] | None = None,
                 cwd: Path | None = None) -> None:
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self._proc = subprocess.Popen(
            [sys.executable, "-c", SERVER, preload], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, env=dict(os.environ if env is None else env), cwd=cwd,
            start_new_session=True)  # its own group: a timeout kills the child with it
        self._runs = 0
        self.lock = threading.Lock()  # one command at a time (`run_cli` shares a server)

    def run(self, args: Sequence[str], *, module: str | None = None, code: str | None = None,
            env: Mapping[str, str], cwd: Path, stdin: str = "",
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """`python -m module *args` (or `python -c code *args`) in a forked child, with exactly
        `env` as its environment; its output and status as `subprocess.run(text=True)` gives
        them."""
        assert (module is None) != (code is None), "one of module and code"
        (done,) = self.run_together([args], module=module, code=code, env=env, cwd=cwd,
                                    stdin=stdin, timeout=timeout)
        return done

    def run_together(self, commands: Sequence[Sequence[str]], *, module: str | None = None,
                     code: str | None = None, env: Mapping[str, str], cwd: Path,
                     stdin: str = "", timeout: float = 300
                     ) -> list[subprocess.CompletedProcess[str]]:
        """Each of `commands` (its args) as `run` runs one, all forked at once and running
        concurrently (real processes racing); their results in the same order once all
        ended."""
        assert (module is None) != (code is None), "one of module and code"
        assert self._proc.stdin is not None and self._proc.stdout is not None
        requests, outputs = [], []
        for args in commands:
            self._runs += 1
            files = {name: self.workdir / f"{self._runs}.{name}" for name in
                     ("stdin", "stdout", "stderr")}
            files["stdin"].write_text(stdin, encoding="utf-8")
            for name in ("stdout", "stderr"):
                files[name].write_bytes(b"")
            requests.append({"module": module, "code": code, "args": list(args),
                             "env": dict(env), "cwd": str(cwd),
                             **{k: str(v) for k, v in files.items()}})
            outputs.append(files)
        self._proc.stdin.write(json.dumps(requests).encode() + b"\n")
        self._proc.stdin.flush()
        codes = _readline(self._proc, timeout).split()
        assert len(codes) == len(commands), codes
        done = []
        for args, files, status in zip(commands, outputs, codes, strict=True):
            out, err = (files[n].read_text(encoding="utf-8", errors="replace")
                        for n in ("stdout", "stderr"))
            for f in files.values():
                f.unlink()
            argv = [sys.executable, *(["-m", module] if module else ["-c", "<code>"]), *args]
            done.append(subprocess.CompletedProcess(argv, int(status), out, err))
        return done

    def close(self) -> None:
        if self._proc.stdin is not None:
            with contextlib.suppress(OSError):  # a server killed at a timeout
                self._proc.stdin.close()
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            _kill_group(self._proc)
        if self._proc.stdout is not None:
            self._proc.stdout.close()

    def __enter__(self) -> ForkServer:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the server and the child it is waiting for (one process group)."""
    import signal

    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _readline(proc: subprocess.Popen[bytes], timeout: float) -> bytes:
    """The server's answer (the child's exit status), or an error when the child runs past
    `timeout` (the server is killed with it) or the server died."""
    import selectors

    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        if not sel.select(timeout):
            _kill_group(proc)
            raise subprocess.TimeoutExpired(proc.args, timeout)
    line = proc.stdout.readline()
    if not line:
        raise RuntimeError(f"the fork server died (status {proc.wait()})")
    return line


# What a vault's open, sync and writes import on first use (the sparse matrices of the link
# graph and search, the YAML of frontmatter, the text-encoding detector of ingested files):
# ~0.1 s of CPU in every forked child that opens a vault, where the server has not imported
# them (CLI_PRELOAD imports all but the YAML). A vault sweep's preload adds it after its own
# imports.
VAULT_PRELOAD = """
import scipy.sparse, scipy.sparse.csgraph, charset_normalizer, vault.notes.yaml_loader
"""

# What `rmh` commands import (every public vault name, the CLI's parser and its command
# modules, the sparse matrices of search and the tokenizer library), for a server whose
# children run `python -m harness`. Not onnxruntime: its import starts a thread.
CLI_PRELOAD = """
import vault
for name in vault.__all__:
    getattr(vault, name)
import harness.cli, harness.compose
harness.cli.build_parser()
import scipy.sparse, scipy.sparse.csgraph, tokenizers
"""


def cli_runner(server: ForkServer, cwd: Path
               ) -> Callable[[list[str], dict[str, str]], subprocess.CompletedProcess[str]]:
    """`rmh ARGS` with an environment, as a forked `python -m harness` of `server`."""
    return lambda args, env: server.run(args, module="harness", env=env, cwd=cwd)


def cli_env(work: Path, *, fault_after: int | None = None) -> dict[str, str]:
    """The environment of an `rmh` a test runs: this checkout on PYTHONPATH, HOME and the
    embedding cache in `work`, none of the caller's vault, config or fault count
    (`fault_after`: RMH_FAULT_AFTER_OPS, the store's kill-after-N-operations seam)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("RMH_VAULT", "RMH_CONFIG", "RMH_FAULT_AFTER_OPS")}
    env.update({"PYTHONPATH": str(Path(__file__).resolve().parents[1]),
                "RMH_EMBED_CACHE": str(work / "shared.sqlite"), "HOME": str(work)})
    if fault_after is not None:
        env["RMH_FAULT_AFTER_OPS"] = str(fault_after)
    return env


_SHARED: dict[tuple[str, tuple[tuple[str, str], ...]], ForkServer] = {}
_SHARED_LOCK = threading.Lock()


def run_cli(args: Sequence[str], *, env: Mapping[str, str], cwd: Path, stdin: str = "",
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`python -m harness ARGS` as a real process with exactly `env`, like `subprocess.run(...,
    input=stdin, capture_output=True, text=True)`: a child of a shared server (one per set of
    PYTHON* variables, which an interpreter reads as it starts: a test's PYTHONHASHSEED keeps
    its meaning), or a fresh interpreter while another thread uses that server, so commands
    a test runs concurrently still run concurrently."""
    (done,) = run_cli_together([args], env=env, cwd=cwd, stdin=stdin, timeout=timeout)
    return done


def run_cli_together(commands: Sequence[Sequence[str]], *, env: Mapping[str, str], cwd: Path,
                     stdin: str = "", timeout: float = 300
                     ) -> list[subprocess.CompletedProcess[str]]:
    """`python -m harness ARGS` for each ARGS of `commands`, all started at once and racing
    (each its own process, as `run_cli` runs one); their results in order once all ended."""
    return _shared_run(commands, module="harness", code=None, env=env, cwd=cwd, stdin=stdin,
                       timeout=timeout)


def run_python(code: str, args: Sequence[str] = (), *, env: Mapping[str, str] | None = None,
               cwd: Path | None = None, stdin: str = "", timeout: float = 300
               ) -> subprocess.CompletedProcess[str]:
    """`python -c CODE ARGS` as a real process, as `subprocess.run([sys.executable, "-c", CODE,
    *ARGS], input=stdin, capture_output=True, text=True, env=env, cwd=cwd)` runs it (`env`
    None: this process's environment; `cwd` None: its folder), from the shared server that
    `run_cli` uses: a kill-at-every-operation sweep's child still dies by its own SIGKILL
    (status -9) without importing numpy and the vault again for each point."""
    (done,) = _shared_run([args], module=None, code=code,
                          env=dict(os.environ if env is None else env),
                          cwd=Path.cwd() if cwd is None else cwd, stdin=stdin, timeout=timeout)
    return done


def _shared_run(commands: Sequence[Sequence[str]], *, module: str | None, code: str | None,
                env: Mapping[str, str], cwd: Path, stdin: str, timeout: float
                ) -> list[subprocess.CompletedProcess[str]]:
    """Each of `commands` in a child of the shared server for `env`'s PYTHON* variables, all
    forked at once, or in fresh interpreters while another thread uses that server."""
    key = (CLI_PRELOAD, tuple(sorted((k, v) for k, v in env.items() if k.startswith("PYTHON"))))
    with _SHARED_LOCK:
        server = _SHARED.get(key)
        if server is None:
            server = _SHARED[key] = ForkServer(
                CLI_PRELOAD, workdir=Path(tempfile.mkdtemp(prefix="rmh-forks-")), env=env,
                cwd=cwd)
    if not server.lock.acquire(blocking=False):
        return _fresh_together(commands, module=module, code=code, env=env, cwd=cwd,
                               stdin=stdin, timeout=timeout)
    try:
        return server.run_together(commands, module=module, code=code, env=env, cwd=cwd,
                                   stdin=stdin, timeout=timeout)
    except (RuntimeError, subprocess.TimeoutExpired):
        with _SHARED_LOCK:  # a dead or killed server is replaced on the next call
            if _SHARED.get(key) is server:
                del _SHARED[key]
        server.close()  # and its folder goes with it (it was left in the temporary folder)
        shutil.rmtree(server.workdir, ignore_errors=True)
        raise
    finally:
        server.lock.release()


def _fresh_together(commands: Sequence[Sequence[str]], *, module: str | None,
                    code: str | None, env: Mapping[str, str], cwd: Path, stdin: str,
                    timeout: float) -> list[subprocess.CompletedProcess[str]]:
    """`_shared_run` in fresh interpreters (while another thread uses the server)."""
    head = ["-m", module] if module is not None else ["-c", str(code)]
    procs = [subprocess.Popen([sys.executable, *head, *args], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=dict(env), cwd=cwd) for args in commands]
    done = []
    for proc in procs:
        out, err = proc.communicate(stdin, timeout=timeout)
        done.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return done


def close_shared() -> None:
    """End the shared servers (the session's end) and remove their folders. Also run at
    the interpreter's exit (`atexit`): a script or probe that used `run_cli` without calling
    it left an `rmh-forks-*` folder in the temporary folder each time (HOUSE41)."""
    with _SHARED_LOCK:
        servers = list(_SHARED.values())
        _SHARED.clear()
    for server in servers:
        server.close()
        shutil.rmtree(server.workdir, ignore_errors=True)


atexit.register(close_shared)
