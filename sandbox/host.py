"""The trusted supervisor of one untrusted worker: `Sandbox.exec(code) -> ExecResult`.

One exec at a time (a lock); `cancel()` may come from any thread, and a `CancelToken` given to
`exec` cancels that exec even before it starts (sandbox/cancel.py). During an exec the host
multiplexes the worker's channel, stdout and stderr with select(2) until the result frame, the
deadline, or the worker's death. Host functions run on the sandbox's host-call thread
(sandbox/hostcalls.py): the cell still ends at its deadline, or at a cancel, while one runs.
Every frame is checked (size, JSON, exact keys, types, exec id, known function); any
violation kills the worker's process group, respawns it, and the exec reports
`ProtocolViolation` with `state_lost=True`. Output is kept up to `output_cap` bytes per
stream, the rest is read and dropped (so the worker never blocks on a full pipe).
"""

from __future__ import annotations

import contextvars
import os
import selectors
import subprocess
import threading
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from . import channel, context, launch, lint
from .cancel import CancelToken
from .config import MAX_DEADLINE_S, SandboxConfig, SandboxError, check_deadline
from .functions import HostFunction, describe, invoke
from .hostcalls import Abandoned, HostCalls
from .probe import choose_tier
from .registry import tier
from .result import ErrorInfo, ExecResult
from .seccomp_policy import compile_bpf
from .session import Capture, Outcome, check_frame


class Sandbox:
    """A persistent sandboxed Python namespace with host functions as globals."""

    def __init__(self, config: SandboxConfig, functions: Mapping[str, HostFunction]) -> None:
        self.config = config
        self.tier: str = choose_tier(config)
        self._functions = dict(functions)
        self._exec_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._proc: launch.WorkerProcess | None = None
        self._running = False
        self._cancelled = False
        self._closed = False
        self._exec_id = 0
        self._calls = HostCalls()
        self._wake = threading.Event()  # set by a cancel: a wait for a host call ends
        self.guards: tuple[str, ...] = ()
        self._spawn()

    # -- lifecycle ---------------------------------------------------------------------------

    def _spawn(self) -> None:
        """Start a worker: it says hello with its own pid (before any user code exists, so it
        is still ours), the host compiles the seccomp allowlist for that pid and sends the
        plan, the worker installs its guards and answers ready."""
        kind = tier(self.tier)
        proc = launch.spawn(kind.command(self.config))
        deadline = time.monotonic() + self.config.start_timeout_s
        reader = channel.FrameReader(self.config.max_frame)
        try:
            pid = self._await(proc, reader, deadline, "hello").get("pid")
            if (not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0
                    or (not kind.pid_namespace and pid != proc.proc.pid)):
                raise channel.ProtocolViolation(f"bad hello frame (pid {pid!r})")
            bpf = (compile_bpf(pid, read_only=kind.read_only_filter) if kind.sandboxed
                   else None)
            init = {"t": "init", "plan": kind.guard_plan(self.config, bpf),
                    "functions": describe(self._functions),
                    "caps": {"frame": self.config.max_frame, "value": self.config.output_cap,
                             "values": channel.MAX_VALUES}}
            channel.send(proc.to_worker, init, deadline)
            frame = self._await(proc, reader, deadline, "ready")
            if not isinstance(frame.get("guards"), list):
                raise channel.ProtocolViolation("bad ready frame")
        except (channel.ProtocolViolation, channel.WriteTimeout, OSError, SandboxError) as exc:
            err = _drain(proc.stderr, 4000)
            proc.close()
            raise SandboxError(f"worker failed to start ({self.tier}): {exc}; {err}") from exc
        guards = tuple(str(g) for g in frame["guards"])
        if kind.sandboxed and "seccomp" not in guards:
            proc.close()
            raise SandboxError(f"worker started without seccomp: {guards}")
        self.guards = guards
        with self._state_lock:
            self._proc = proc

    def _await(self, proc: launch.WorkerProcess, reader: channel.FrameReader, deadline: float,
               kind: str) -> dict[str, Any]:
        while (remaining := deadline - time.monotonic()) > 0:
            sel_r, _, _ = _select([proc.from_worker], remaining)
            if not sel_r:
                continue
            data = os.read(proc.from_worker, 65536)
            if not data:
                proc.proc.wait()
                raise SandboxError(f"worker {proc.describe_exit()}")
            frames = reader.feed(data)
            if frames:
                frame = frames[0]
                if len(frames) != 1 or reader.pending or frame.get("t") != kind:
                    raise channel.ProtocolViolation(f"bad {kind} frame")
                return frame
        raise SandboxError(f"worker sent no {kind} frame within {self.config.start_timeout_s} s")

    def _replace(self) -> None:
        with self._state_lock:
            proc, self._proc = self._proc, None
        if proc is not None:
            proc.close()
        if not self._closed:
            self._spawn()

    def reset(self) -> None:
        """Empty the namespace by replacing the worker (also ends any threads it left)."""
        with self._exec_lock:
            self._replace()

    def close(self) -> None:
        """Kill the worker; the sandbox cannot be used afterwards."""
        with self._exec_lock:
            self._closed = True
            self._replace()
            self._calls.close()

    @property
    def host_busy(self) -> str | None:
        """The host function a past cell abandoned at its deadline or cancel that is still
        running (its result will be discarded), else None."""
        return self._calls.busy

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def cancel(self) -> bool:
        """Kill the running exec (from another thread). False when nothing is running.
        An exec that has not started yet is not affected: give it a `CancelToken`."""
        return self._cancel(None)

    def _cancel(self, exec_id: int | None) -> bool:
        with self._state_lock:
            if not self._running or self._proc is None or exec_id not in (None, self._exec_id):
                return False
            self._cancelled = True
            self._proc.kill()
            self._wake.set()
        return True

    # -- exec --------------------------------------------------------------------------------

    def exec(self, code: str, *, deadline_s: float | None = None,
             cancel: CancelToken | None = None) -> ExecResult:
        """Run one cell; blocking. Never raises for anything user code does. With `cancel`,
        the cell ends as `Cancelled` once the token is cancelled, whenever that happens
        (before the cell started, it never runs). A `deadline_s` that is not a number above 0
        and at most MAX_DEADLINE_S (NaN, infinity) is a ValueError: the cell never runs."""
        start = time.monotonic()
        limit = self.config.deadline_s if deadline_s is None else deadline_s
        if not check_deadline(limit):
            raise ValueError(f"deadline_s must be above 0 and at most {MAX_DEADLINE_S:g} s, "
                             f"not {limit!r}")
        with self._exec_lock:
            if self._closed:
                raise SandboxError("the sandbox is closed")
            if self._proc is not None and self._proc.owner != os.getpid():
                raise SandboxError(f"the sandbox belongs to process {self._proc.owner}: a "
                                   f"process forked from it must open its own")
            issues = lint.check(code) if self.config.lint else []
            if refused := [i for i in issues if i.severity == "refuse"]:
                error = ErrorInfo("LintError", "\n".join(str(i) for i in refused))
                return self._result(Outcome(error=error), Capture(0), Capture(0), start, False)
            lost = False
            if self._proc is None or _readable(self._proc.from_worker):
                self._replace()  # died idle or spoke out of turn
                lost = True
            assert self._proc is not None
            proc = self._proc
            out, err = Capture(self.config.output_cap), Capture(self.config.output_cap)
            with self._state_lock:
                self._exec_id += 1
                self._running, self._cancelled = True, False
                self._wake.clear()
            exec_id = self._exec_id
            if cancel is not None and not cancel.attach(lambda: self._cancel(exec_id)):
                with self._state_lock:
                    self._running = False
                error = ErrorInfo("Cancelled", "the cell was cancelled before it started")
                return self._result(Outcome(error=error), out, err, start, lost)
            proc.resume()  # paused since its last cell answered
            try:
                with context.running(start + limit):  # host functions see the deadline
                    ctx = contextvars.copy_context()  # the exec's context, for its host calls
                    outcome = self._run(proc, code, start + limit, limit, out, err, ctx)
            finally:
                if cancel is not None:
                    cancel.detach()
                with self._state_lock:
                    self._running = False
            if outcome.kill:
                self._replace()
                lost = True
            else:
                proc.pause(tier(self.tier).pid_namespace)
            result = self._result(outcome, out, err, start, lost)
            warned = lint.warning_text(issues)
            return replace(result, stderr=warned + result.stderr) if warned else result

    def _result(self, outcome: Outcome, out: Capture, err: Capture, start: float,
                lost: bool) -> ExecResult:
        ok = outcome.error is None
        return ExecResult(ok, out.text(), err.text(), outcome.value, outcome.error,
                          time.monotonic() - start, out.truncated, err.truncated, lost,
                          self.tier, dict(outcome.calls))

    def _run(self, proc: launch.WorkerProcess, code: str, deadline: float, limit: float,
             out: Capture, err: Capture, ctx: contextvars.Context) -> Outcome:
        sinks = {proc.stdout: out, proc.stderr: err}
        outcome = self._loop(proc, code, deadline, limit, sinks, ctx)
        if not outcome.kill and (extra := _threads_left(proc, self.tier)):
            outcome.threads_left(extra)  # the worker's own count missed them
        if outcome.kill:
            proc.kill()
        for fd, sink in sinks.items():
            for _ in range(64):  # what was written before the result (or the kill) is in the pipe
                data = _read(fd)
                if not data:
                    break
                sink.add(data)
        return outcome

    def _loop(self, proc: launch.WorkerProcess, code: str, deadline: float, limit: float,
              sinks: dict[int, Capture], ctx: contextvars.Context) -> Outcome:
        outcome = Outcome()
        reader = channel.FrameReader(self.config.max_frame)
        sel = selectors.DefaultSelector()
        for fd in (proc.from_worker, proc.stdout, proc.stderr):
            sel.register(fd, selectors.EVENT_READ)
        try:
            channel.send(proc.to_worker, {"t": "exec", "id": self._exec_id, "code": code},
                         deadline)
            while outcome.result is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return outcome.fail("DeadlineExceeded", f"the cell ran past its {limit:g} s "
                                        "deadline; the worker was killed and restarted")
                for key, _ in sel.select(remaining):
                    fd = int(key.fd)
                    data = _read(fd)
                    if fd in sinks:
                        if data == b"":
                            sel.unregister(fd)
                        elif data:
                            sinks[fd].add(data)
                    elif not data:
                        return self._died(proc, outcome, deadline)
                    else:
                        for frame in reader.feed(data):
                            self._handle(proc, frame, outcome, deadline, ctx)
                        if outcome.result is not None and reader.pending \
                                and outcome.result["threads"] <= 1:
                            raise channel.ProtocolViolation("bytes after the result frame")
        except channel.ProtocolViolation as exc:
            return outcome.fail("ProtocolViolation", f"{exc}; the worker was killed and restarted")
        except Abandoned as exc:
            if self._cancelled:
                return outcome.fail("Cancelled", f"the cell was cancelled {exc.describe()}; "
                                    "the worker was restarted")
            return outcome.fail("DeadlineExceeded", f"the cell ran past its {limit:g} s deadline "
                                f"{exc.describe()}; the worker was killed and restarted")
        except channel.WriteTimeout:
            return outcome.fail("DeadlineExceeded", f"the cell ran past its {limit:g} s deadline")
        except OSError:  # EPIPE: the worker died (or closed its channel) while we were writing
            return self._died(proc, outcome, deadline)
        finally:
            sel.close()
        return outcome.finish()

    def _died(self, proc: launch.WorkerProcess, outcome: Outcome, deadline: float) -> Outcome:
        """The channel ended (EOF, or EPIPE on a write): the worker died, or closed its end and
        lives on (it can answer nothing more). It has until the deadline, at most
        `_EXIT_WAIT_S` and at least `_EXIT_WAIT_MIN_S`, to be reaped (a crash's status says
        why); then it is killed. Waiting for it without a limit let a worker that closed its
        channel and slept hold the cell past its deadline for as long as it liked."""
        wait = min(_EXIT_WAIT_S, max(_EXIT_WAIT_MIN_S, deadline - time.monotonic()))
        try:
            proc.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.proc.wait()
            if not self._cancelled:
                return outcome.fail("ProtocolViolation", "the worker closed its channel and "
                                    "ran on; the worker was killed and restarted")
        if self._cancelled:
            return outcome.fail("Cancelled", "the cell was cancelled; the worker was restarted")
        return outcome.fail("WorkerCrashed", f"the worker {proc.describe_exit()}; "
                            "it was restarted and its state lost")

    def _handle(self, proc: launch.WorkerProcess, frame: dict[str, Any], outcome: Outcome,
                deadline: float, ctx: contextvars.Context) -> None:
        if outcome.result is not None:
            if outcome.result["threads"] > 1:  # a thread the cell left running called on in
                return  # the same read: not served; the worker is restarted (Outcome.finish)
            raise channel.ProtocolViolation("frame after the result")
        kind = check_frame(frame, self._exec_id, self._functions, self.config.output_cap)
        if kind == "result":
            outcome.result = frame
            return
        name = str(frame["fn"])
        outcome.calls[name] = outcome.calls.get(name, 0) + 1
        if sum(outcome.calls.values()) > self.config.max_calls:
            reply: dict[str, Any] = {
                "t": "reply", "ok": False, "type": "HostCallLimit",
                "message": f"more than {self.config.max_calls} host calls in one cell"}
        else:
            function, args, kwargs = self._functions[name], frame["args"], frame["kwargs"]
            cap = self.config.max_frame - 64
            reply = self._calls.run(name, lambda: invoke(function, args, kwargs, cap), ctx,
                                    deadline, self._wake, lambda: self._cancelled)
        channel.send(proc.to_worker, reply, deadline)


def _threads_left(proc: launch.WorkerProcess, tier_name: str) -> int:
    """Threads of the worker besides its main one once it answered, as the host counts them
    (0 where /proc does not say). A thread that has just been joined may still be leaving the
    kernel, so a count above one is looked at again for up to `_THREADS_SETTLE_S`."""
    give_up = time.monotonic() + _THREADS_SETTLE_S
    while (count := proc.threads(tier(tier_name).pid_namespace) or 1) > 1 \
            and time.monotonic() < give_up:
        time.sleep(0.005)
    return count - 1


_THREADS_SETTLE_S = 1.0  # generous on a loaded machine: a false count costs the state
_EXIT_WAIT_S, _EXIT_WAIT_MIN_S = 1.0, 0.1  # a worker whose channel ended: time to be reaped


def _select(fds: list[int], timeout: float) -> tuple[list[int], list[int], list[int]]:
    import select

    return select.select(fds, [], [], timeout)


def _readable(fd: int) -> bool:
    return bool(_select([fd], 0)[0])


def _read(fd: int) -> bytes | None:
    """Up to 64 KiB; b"" at EOF; None when nothing is available now."""
    try:
        return os.read(fd, 65536)
    except BlockingIOError:
        return None


def _drain(fd: int, cap: int) -> str:
    chunks = b""
    while len(chunks) < cap and (data := _read(fd)):
        chunks += data
    return chunks[:cap].decode("utf-8", "replace").strip()
