"""The harness's own errors, and the one map from any exception to each surface's error.

    HarnessError
     ├── BadArgument(param, reason)  an argument from outside: missing, mistyped, out of range
     ├── BadShape(reason)            a REPL value of the wrong shape (a slice, a list of pairs)
     └── Refused(code_name, reason)  cannot run here: no sandbox, no broker, no open session

Every exception an operation raises is first classified (`classify`), then rendered for the
surface that called it; this module is the only place that does either:

    class        JSON-RPC error (`to_rpc`)        MCP tool result (`to_mcp`)      REPL (`to_repl`)
    bad argument -32602 naming the parameter      isError, kind bad_argument     ValueError("p: r")
    bad shape    -32602 ("params")                isError, the error object       TypeError(reason)
    domain       its application code + data      isError, the error object       its class, message
    internal     -32603, no text                  isError, -32603, no text        HostError, no text

"Domain" is any exception with a `code_name` string and a `data()` mapping (every VaultError,
RlmError and Refused), the sandbox's SandboxError ("sandbox_error", its reason cut to 300
characters), and an OSError or SQLite error that `vault.storage_error` types: a full disk is
`disk_full` (-32016) and a refused file permission `permission_denied` (-32017) wherever
they happen (the index, the ledger, a note), never an internal error. An MCP error result
carries `mcp_error` (kind, message, code and the data fields)
as `structuredContent` and its text. An
internal error is logged here with its traceback and never shows its text to a client.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from vault import LedgerError, storage_error

if TYPE_CHECKING:  # imported where used: a CLI command that fails needs neither
    from rpc import RpcError
    from sandbox import HostFunctionError

log = logging.getLogger("rmh.errors")

Kind = Literal["bad_argument", "bad_shape", "domain", "internal"]
SANDBOX_REASON_MAX = 300


class HarnessError(Exception):
    """Base of the harness's own errors."""


class BadArgument(HarnessError):
    """An argument from outside is missing or has the wrong type/range; names the parameter."""

    def __init__(self, param: str, reason: str) -> None:
        super().__init__(f"{param}: {reason}")
        self.param = param
        self.reason = reason


class BadShape(HarnessError):
    """A REPL value whose shape the operation cannot use (a slice, a list of pairs)."""


class Refused(HarnessError):
    """The operation cannot run in this server's configuration or state (`code_name` says why)."""

    def __init__(self, code_name: str, reason: str) -> None:
        super().__init__(reason)
        self.code_name = code_name
        self.reason = reason

    def data(self) -> dict[str, object]:
        return {"reason": self.reason}


def typed(exc: BaseException) -> BaseException:
    """`exc`, or the typed vault error an untyped OSError/SQLite error stands for (DiskFull,
    PermissionDenied: `vault.storage_error`), or the bad argument a LedgerError names (a time
    or event before the learning log's base)."""
    if isinstance(exc, OSError | sqlite3.Error) and not isinstance(
            getattr(exc, "code_name", None), str):
        return storage_error(exc) or exc
    if isinstance(exc, LedgerError) and exc.param is not None:  # a point before the base
        return BadArgument(exc.param, str(exc))
    return exc


def _sandbox_error(exc: BaseException) -> bool:
    """Whether `exc` is the sandbox's SandboxError. The sandbox is imported only by what
    runs code (its import costs half a second to `rmh read`): until it is, no SandboxError
    exists."""
    sandbox = sys.modules.get("sandbox")
    return sandbox is not None and isinstance(exc, sandbox.SandboxError)


def classify(exc: BaseException) -> Kind:
    """Which row of the module's table `exc` falls in."""
    exc = typed(exc)
    if isinstance(exc, BadArgument):
        return "bad_argument"
    if isinstance(exc, BadShape):
        return "bad_shape"
    if _sandbox_error(exc):
        return "domain"
    if isinstance(getattr(exc, "code_name", None), str) and callable(getattr(exc, "data", None)):
        return "domain"
    return "internal"


def _domain(exc: BaseException) -> RpcError:
    from rpc import application_error

    if _sandbox_error(exc):
        return application_error("sandbox_error", {"reason": str(exc)[:SANDBOX_REASON_MAX]})
    code_name, data_fn = getattr(exc, "code_name", None), getattr(exc, "data", None)
    data = data_fn() if callable(data_fn) else None
    return application_error(str(code_name), data if isinstance(data, Mapping) else None)


def to_rpc(exc: BaseException) -> RpcError:
    """The JSON-RPC error for `exc` (internal errors: a bare -32603)."""
    from rpc import INTERNAL_ERROR, invalid_params, spec_error

    exc = typed(exc)
    kind = classify(exc)
    if isinstance(exc, BadArgument):
        return invalid_params(exc.param, exc.reason)
    if kind == "bad_shape":
        return invalid_params("params", str(exc))
    if kind == "domain":
        return _domain(exc)
    return spec_error(INTERNAL_ERROR)


def map_exception(exc: Exception) -> RpcError | None:
    """The dispatcher's hook: `to_rpc`, or None for an internal error (the dispatcher logs it
    with its method name and answers a bare -32603)."""
    return None if classify(exc) == "internal" else to_rpc(exc)


def tool_result(value: Any, *, is_error: bool = False) -> dict[str, Any]:
    """An MCP `tools/call` result: the value as compact JSON text (no indentation: every
    character costs the model context), and as `structuredContent` when it is an object (a
    list is wrapped as {"items": [...]}, and the text is that object's: the specification's
    text mirror is the serialized structured content); `isError` only when true."""
    if isinstance(value, list):
        value = {"items": value}
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                           separators=(",", ":"))
    out: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if is_error:  # absent means false (MCP CallToolResult)
        out["isError"] = True
    if isinstance(value, dict):
        out["structuredContent"] = value
    return out


def mcp_error(exc: BaseException) -> dict[str, Any]:
    """The one structured form of a tool failure: {"error": {"kind", "message", "code",
    ...data}}, as the CLI prints under --json. kind: the domain kind (note_not_found, ...),
    "bad_argument" (with param and reason), "bad_shape" or "internal" (no text)."""
    kind = classify(exc)
    error = to_rpc(exc)
    data = dict(error.data) if isinstance(error.data, Mapping) else {}
    name = str(data.pop("kind", kind))
    if kind == "internal":
        message = "internal error (logged by the server)"
    elif isinstance(exc, BadArgument):
        message = f"bad argument {exc.param}: {exc.reason}"
    elif _sandbox_error(exc):
        message = str(exc)[:SANDBOX_REASON_MAX]
    else:
        message = str(exc)[:500]
    return {"error": {"kind": name, "message": message, "code": error.code, **data}}


def to_mcp(exc: BaseException, tool: str = "?") -> dict[str, Any]:
    """The MCP tool error result for `exc`: isError, `mcp_error` as structured content and
    as its text mirror."""
    if classify(exc) == "internal":
        log.error("tool %s failed", tool, exc_info=exc)
    return tool_result(mcp_error(exc), is_error=True)


def to_repl(exc: BaseException, function: str = "?") -> HostFunctionError:
    """The exception user code sees in the REPL for `exc` (raised there by the worker)."""
    from sandbox import HostFunctionError

    exc = typed(exc)
    kind = classify(exc)
    if kind == "bad_argument":
        return HostFunctionError("ValueError", str(exc))
    if kind == "bad_shape":
        return HostFunctionError("TypeError", str(exc))
    if kind == "domain":
        return HostFunctionError(type(exc).__name__, str(exc)[:SANDBOX_REASON_MAX]
                                 if _sandbox_error(exc) else str(exc))
    log.error("host function %s failed", function, exc_info=exc)
    return HostFunctionError("HostError", f"host function failed ({type(exc).__name__})")
