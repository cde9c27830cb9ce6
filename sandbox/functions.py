"""Host functions: the only way user code reaches the vault or the LLM.

A call arrives from the worker as JSON (already schema-checked by the host loop); the function
runs on the sandbox's host-call thread, in the context of the exec that called it
(sandbox/hostcalls.py: abandoned at the cell's deadline or cancel). Its result must be JSON-able. A
`HostFunctionError` becomes an exception of the class it names in the worker (`NoteNotFound`,
`RlmBudgetExceeded`); any other exception becomes a generic `HostError` with a safe message
(the exception's class name only: a message might carry host paths or secrets).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


class HostFunctionError(Exception):
    """Raised by a host function to raise `type_name(message)` inside the worker."""

    def __init__(self, type_name: str, message: str) -> None:
        super().__init__(message)
        self.type_name = type_name if type_name.isidentifier() else "HostError"
        self.message = message


@dataclass(frozen=True)
class HostFunction:
    """A function offered to user code: `help(name)` shows `signature` and `doc`."""

    fn: Callable[..., Any]
    doc: str
    signature: str = "(*args, **kwargs)"


def describe(functions: Mapping[str, HostFunction]) -> dict[str, dict[str, str]]:
    """The table sent to the worker at start: names, docs, signatures; never the callables."""
    return {name: {"doc": f.doc, "signature": f.signature} for name, f in sorted(functions.items())}


def invoke(function: HostFunction, args: list[Any], kwargs: dict[str, Any],
           max_bytes: int) -> dict[str, Any]:
    """Run one host function and build the reply frame (`ok`, then `value` or `type`+`message`).

    A result that is not JSON (or larger than `max_bytes` once encoded) is a HostError. An
    argument holding a lone surrogate (`chr(0xd800)`: not valid Unicode, as `rpc.calls` refuses
    it in a request) is a ValueError and the function never runs.
    """
    if _has_lone_surrogate([args, kwargs]):
        return {"t": "reply", "ok": False, "type": "ValueError",
                "message": "an argument holds a lone surrogate (not valid Unicode): refused"}
    try:
        inspect.signature(function.fn).bind(*args, **kwargs)
    except TypeError as exc:  # the caller's mistake: the message names only the arguments
        return {"t": "reply", "ok": False, "type": "TypeError", "message": str(exc)[:500]}
    except ValueError:  # no signature available (a builtin): let the call decide
        pass
    try:
        value = function.fn(*args, **kwargs)
        encoded = json.dumps(value, allow_nan=False)
    except HostFunctionError as exc:
        return {"t": "reply", "ok": False, "type": exc.type_name, "message": exc.message}
    except Exception as exc:  # a bug in a host function must not reach the worker verbatim
        return {"t": "reply", "ok": False, "type": "HostError",
                "message": f"host function failed ({type(exc).__name__})"}
    if len(encoded) > max_bytes:
        return {"t": "reply", "ok": False, "type": "HostError",
                "message": f"result of {len(encoded)} bytes exceeds the frame cap"}
    return {"t": "reply", "ok": True, "value": value}


def _has_lone_surrogate(value: Any) -> bool:
    """Whether a string anywhere in `value` (a JSON value: keys included) cannot be UTF-8."""
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return True
        elif isinstance(item, dict):
            todo += [*item.keys(), *item.values()]
        elif isinstance(item, list):
            todo += item
    return False


def reject_constant(name: str) -> float:
    """json.loads hook: NaN and Infinity are not JSON; a frame carrying them is hostile."""
    raise ValueError(f"non-JSON constant {name}")

