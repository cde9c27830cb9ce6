"""Per-exec bookkeeping on the host: output capture, the outcome, and frame schemas."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .channel import ProtocolViolation
from .result import ErrorInfo

# Exact key sets of the frames a worker may send during an exec, with each value's type.
_CALL = {"t": str, "id": int, "fn": str, "args": list, "kwargs": dict}
_RESULT = {"t": str, "id": int, "ok": bool, "value": (str, type(None)),
           "error": (dict, type(None)), "threads": int}
_ERROR = {"type": str, "message": str, "traceback": str}
TYPE_CAP = 200  # the worker cuts an exception's class name to this many characters


class Capture:
    """Keeps the first `cap` bytes of a stream and counts the rest."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._buf = bytearray()
        self.dropped = 0

    def add(self, data: bytes) -> None:
        room = self.cap - len(self._buf)
        self._buf += data[:max(room, 0)]
        self.dropped += max(len(data) - max(room, 0), 0)

    @property
    def truncated(self) -> bool:
        return self.dropped > 0

    def text(self) -> str:
        return self._buf.decode("utf-8", "replace")


@dataclass
class Outcome:
    """What the exec loop learned: the result frame, or a sandbox-level error."""

    result: dict[str, Any] | None = None
    error: ErrorInfo | None = None
    value: str | None = None
    kill: bool = False
    calls: dict[str, int] = field(default_factory=dict)

    def fail(self, type_name: str, message: str) -> Outcome:
        self.error, self.kill = ErrorInfo(type_name, message), True
        return self

    def finish(self) -> Outcome:
        """Turn a checked result frame into value/error; threads left running -> restart."""
        assert self.result is not None
        frame = self.result
        self.value = None if frame["value"] is None else valid_text(frame["value"])
        if frame["error"] is not None:
            e = {key: valid_text(text) for key, text in frame["error"].items()}
            self.error = ErrorInfo(e["type"], e["message"], e["traceback"])
        elif not frame["ok"]:
            self.error = ErrorInfo("WorkerError", "the worker reported failure without an error")
        if frame["threads"] > 1:
            self.threads_left(frame["threads"] - 1)
        return self

    def threads_left(self, count: int) -> None:
        """The cell left `count` threads running: the worker is restarted."""
        self.kill = True
        if self.error is None:
            self.error = ErrorInfo(
                "ThreadsLeftRunning",
                f"the cell left {count} thread(s) running; the worker was restarted and its "
                "state lost (join threads before the cell ends)")


def valid_text(text: str) -> str:
    """`text` with each lone surrogate (a JSON escape such as "\\ud800" reads back as one, and
    it is not Unicode) as "?", the worker's own rule for what it sends: a hostile worker's
    value in `ExecResult` made `rmh exec` and `rmh repl` die printing it."""
    return text.encode("utf-8", "replace").decode("utf-8")


def _check_keys(frame: Mapping[str, Any], schema: Mapping[str, Any], what: str) -> None:
    if set(frame) != set(schema):
        raise ProtocolViolation(f"{what} frame has keys {sorted(frame)[:10]}")
    for key, kind in schema.items():
        value = frame[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise ProtocolViolation(f"{what} frame: {key} has the wrong type")


def check_frame(frame: Mapping[str, Any], exec_id: int, functions: Mapping[str, Any],
                value_cap: int) -> str:
    """Validate a frame received during exec `exec_id`; return its kind ("call"/"result").

    The caps the honest worker applies are enforced here again, on what the host receives
    (the worker is hostile): a result's value, message and traceback at most `value_cap`
    characters each, an error type at most `TYPE_CAP`."""
    kind = frame.get("t")
    if kind == "call":
        _check_keys(frame, _CALL, "call")
        if frame["fn"] not in functions:
            raise ProtocolViolation("call to an unknown host function")
        if not all(isinstance(k, str) for k in frame["kwargs"]):
            raise ProtocolViolation("call frame: keyword names must be strings")
    elif kind == "result":
        _check_keys(frame, _RESULT, "result")
        texts = [frame["value"] or ""]
        if frame["error"] is not None:
            _check_keys(frame["error"], _ERROR, "error")
            texts += [frame["error"]["message"], frame["error"]["traceback"]]
            if len(frame["error"]["type"]) > TYPE_CAP:
                raise ProtocolViolation("result frame: error type over its cap")
        if max(len(t) for t in texts) > value_cap:
            raise ProtocolViolation(f"result frame: a text over the {value_cap}-character cap")
    else:
        raise ProtocolViolation(f"unexpected frame type {str(kind)[:40]!r}")
    if frame["id"] != exec_id:
        raise ProtocolViolation(f"frame for exec {frame['id']} during exec {exec_id}")
    return str(kind)
