"""The untrusted side: a persistent Python namespace that runs cells sent by the host.

Run as `python -I -S -B worker.py IN_FD OUT_FD` (stdlib only, bound read-only into the
sandbox). Everything here is in-process with user code, so nothing here is a boundary: user
code can rewrite this module, forge frames or exit. The host treats every frame as hostile.

Protocol (4-byte big-endian length, then UTF-8 JSON; see `channel.py` for the host side):
worker -> host  {"t":"hello","pid":n}  (first, before any guard: the pid as the worker sees it)
host -> worker  {"t":"init","plan":{...},"functions":{name:{"doc","signature"}},"caps":{...}}
                {"t":"exec","id":n,"code":s} | {"t":"reply","ok":b,...}
worker -> host  {"t":"ready","guards":[...]} | {"t":"call","id":n,"fn":s,"args":[],"kwargs":{}}
                {"t":"result","id":n,"ok":b,"value":s|null,"error":{...}|null,"threads":k}
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import ctypes
import io
import json
import linecache
import os
import re
import signal
import struct
import sys
import threading
import traceback
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sandbox import worker_guard, worker_root
else:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import worker_guard
    import worker_root

_HEADER = struct.Struct(">I")
_STRUCTURAL = (b",", b":", b"[", b"{")
_TOKEN = re.compile(rb'"[^"\\]*(?:\\(?:.|\Z)[^"\\]*)*(?:"|\Z)|[,:\[{]', re.DOTALL)


def _values_over(data: bytes, cap: int) -> bool:
    """The host's `channel.values_over` (the host refuses such a frame and kills the worker;
    here the call is refused with a ValueError and the cell goes on)."""
    if sum(map(data.count, _STRUCTURAL)) < cap:
        return False
    marks = strings = 0
    for match in _TOKEN.finditer(data):
        strings, marks = (strings + 1, marks) if data[match.start()] == 0x22 else (strings,
                                                                                   marks + 1)
        if marks >= cap or strings > cap:
            return True
    return marks >= cap


class HostError(Exception):
    """Base class of every error a host function raised (the concrete class is named by it)."""


class _Channel:
    def __init__(self, in_fd: int, out_fd: int, max_frame: int) -> None:
        self.in_fd, self.out_fd, self.max_frame = in_fd, out_fd, max_frame
        self.max_values = 1 << 18
        self.lock = threading.Lock()

    def _read_exact(self, n: int) -> bytes:
        chunks: list[bytes] = []
        while n:
            chunk = os.read(self.in_fd, min(n, 1 << 20))
            if not chunk:
                raise EOFError("host closed the channel")
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def recv(self) -> dict[str, Any]:
        (size,) = _HEADER.unpack(self._read_exact(_HEADER.size))
        frame: dict[str, Any] = json.loads(self._read_exact(size))
        return frame

    def send(self, frame: dict[str, Any]) -> None:
        """A call's arguments go as they are (a lone surrogate as a JSON escape: the host
        refuses the call), save a high surrogate followed by a low one: JSON reads those two
        escapes back as one other character, so that call is refused here; elsewhere one
        becomes "?" (output, values, errors)."""
        text = json.dumps(frame, allow_nan=False, ensure_ascii=False)
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            if frame.get("t") != "call":
                data = text.encode("utf-8", "replace")
            elif re.search("[\ud800-\udbff][\udc00-\udfff]", text):
                raise ValueError("an argument holds a lone surrogate (not valid Unicode): "
                                 "refused") from None
            else:
                data = json.dumps(frame, allow_nan=False).encode("ascii")
        what = f"the arguments of {frame.get('fn')}()" if frame.get("t") == "call" else "message"
        if len(data) > self.max_frame:  # (a 100 MB slice said "message of .. bytes": PLUG5)
            raise ValueError(f"{what}: {len(data)} bytes as JSON, over the {self.max_frame}-"
                             "byte cap of one host call (pass less)")
        if _values_over(data, self.max_values):
            raise ValueError(f"{what}: more than {self.max_values} JSON values (the cap)")
        view = memoryview(_HEADER.pack(len(data)) + data)
        while view:
            view = view[os.write(self.out_fd, view):]


class Worker:
    """The exec loop and the host-function stubs placed in the user namespace."""

    def __init__(self, channel: _Channel, caps: dict[str, int]) -> None:
        self.channel = channel
        self.value_cap = caps.get("value", 65536)
        self.exec_id: int | None = None
        self.error_types: dict[str, type[HostError]] = {}
        self.ns: dict[str, Any] = {}
        self.functions: dict[str, dict[str, str]] = {}
        self.cells = 0

    def fresh_namespace(self) -> None:
        self.ns = {"__name__": "__main__", "__builtins__": builtins, "HostError": HostError}
        for name, meta in self.functions.items():
            self.ns[name] = self._stub(name, meta)

    def _error_class(self, name: str) -> type[HostError]:
        if not name.isidentifier():
            name = "HostError"
        if name == "HostError":
            return HostError
        if name not in self.error_types:
            self.error_types[name] = type(name, (HostError,), {"__module__": "host"})
        return self.error_types[name]

    def _stub(self, name: str, meta: dict[str, str]) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            if self.exec_id is None:
                raise RuntimeError("host functions can only be called while a cell runs")
            frame = {"t": "call", "id": self.exec_id, "fn": name, "args": list(args),
                     "kwargs": kwargs}
            with self.channel.lock:
                self.channel.send(frame)
                reply = self.channel.recv()
            if reply.get("ok"):
                return reply.get("value")
            raise self._error_class(str(reply.get("type"))).__call__(str(reply.get("message")))

        call.__name__ = call.__qualname__ = name
        signature = meta.get("signature", "(*args, **kwargs)")
        call.__doc__ = f"{name}{signature}\n\n{meta.get('doc', '')}"
        return call

    def help(self, *args: Any) -> None:
        """help(): the host functions, one line each; help(f) or help("f") for a host
        function: its signature line and its doc, once (pydoc would print a generic
        "(*args, **kwargs)" signature line above them); anything else: pydoc."""
        if not args:
            width = max((len(n) for n in self.functions), default=0)
            print("Vault functions (help(name) for one in full):")
            for fn, info in sorted(self.functions.items()):
                first = (info.get("doc", "").strip().splitlines() or [""])[0]
                print(f"  {fn.ljust(width)}  {first}")
            return
        target = args[0]
        name = target if isinstance(target, str) else getattr(target, "__name__", None)
        if (isinstance(name, str) and name in self.functions
                and (isinstance(target, str) or self.ns.get(name) is target)):
            meta = self.functions[name]
            print(f"{name}{meta.get('signature', '(*args, **kwargs)')}\n\n"
                  f"{meta.get('doc', '')}".rstrip())
            return
        import pydoc

        pydoc.help(*args)

    def _safe_repr(self, value: Any) -> str:
        try:
            text = repr(value)
        except BaseException as exc:  # a hostile __repr__ must not take the worker down
            text = f"<unrepresentable {type(value).__name__}: {type(exc).__name__}>"
        if not isinstance(text, str):
            text = "<repr did not return a str>"
        return text[: self.value_cap]

    def _error(self, exc: BaseException, filename: str) -> dict[str, str]:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
        lines = traceback.format_list(frames)
        try:
            message = str(exc)
        except BaseException:
            message = "<unprintable message>"
        tail = "".join(traceback.format_exception_only(type(exc), exc)) if not frames else ""
        text = ("Traceback (most recent call last):\n" + "".join(lines)) if lines else ""
        text += tail or f"{type(exc).__name__}: {message}\n"
        cap = self.value_cap
        return {"type": type(exc).__name__[:200], "message": message[:cap], "traceback": text[:cap]}

    def run(self, exec_id: int, code: str) -> dict[str, Any]:
        self.cells += 1
        filename = f"<cell {self.cells}>"
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        value: str | None = None
        error: dict[str, str] | None = None
        self.exec_id = exec_id
        try:
            tree = ast.parse(code, filename, "exec")
            last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            if last is not None:
                tree.body.pop()
            exec(compile(tree, filename, "exec"), self.ns)
            if last is not None:
                result = eval(compile(ast.Expression(last.value), filename, "eval"), self.ns)
                if result is not None:
                    self.ns["_"] = result
                    value = self._safe_repr(result)
        except BaseException as exc:  # user code may raise anything, SystemExit included
            error = self._error(exc, filename)
        finally:
            self.exec_id = None
            _disarm_timers()
            _flush()
        return {"t": "result", "id": exec_id, "ok": error is None, "value": value,
                "error": error, "threads": threading.active_count()}


def _disarm_timers() -> None:
    """The cell's interval timers end with it: an ITIMER_VIRTUAL or ITIMER_PROF it armed fired
    in the next cell (SIGVTALRM's default action killed the worker there: state lost), and an
    ITIMER_REAL's SIGALRM, held by the stop between cells, came there too (SBX8)."""
    for which in (signal.ITIMER_REAL, signal.ITIMER_VIRTUAL, signal.ITIMER_PROF):
        with contextlib.suppress(BaseException):
            signal.setitimer(which, 0.0)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):
            stream.flush()
    with contextlib.suppress(BaseException):
        ctypes.CDLL(None).fflush(None)  # C-level printf buffers


def main(argv: list[str]) -> int:
    in_fd, out_fd = int(argv[1]), int(argv[2])
    parent = os.getppid()  # the supervisor (bwrap's init inside bwrap); checked by the guards
    channel = _Channel(in_fd, out_fd, 8 << 20)
    channel.send({"t": "hello", "pid": os.getpid()})  # seccomp's kill/tgkill checks need it
    init = channel.recv()
    channel.max_frame = int(init.get("caps", {}).get("frame", 8 << 20))
    channel.max_values = int(init.get("caps", {}).get("values", 1 << 18))
    try:
        guards = worker_guard.install(init["plan"], parent)
    except (worker_guard.GuardError, worker_root.MountError, OSError) as exc:
        # a guard the tier needs is refused: say why in one line (the host shows it), no code
        os.write(2, f"sandbox guard refused: {exc}\n".encode("utf-8", "backslashreplace"))
        return 1
    for fd, name in ((1, "stdout"), (2, "stderr")):
        stream = io.TextIOWrapper(io.FileIO(fd, "w", closefd=False), encoding="utf-8",
                                  errors="backslashreplace", write_through=True)
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)
    worker = Worker(channel, dict(init.get("caps", {})))
    worker.functions = dict(init.get("functions", {}))
    worker.fresh_namespace()
    setattr(builtins, "help", worker.help)  # noqa: B010 (no site module: help is ours)
    os.environ.clear()  # PWD from bwrap, LC_CTYPE from locale coercion: user code sees none
    channel.send({"t": "ready", "guards": guards})
    while True:
        try:
            frame = channel.recv()
        except EOFError:
            return 0
        kind = frame.get("t")
        if kind == "exec":
            channel.send(worker.run(int(frame["id"]), str(frame["code"])))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
