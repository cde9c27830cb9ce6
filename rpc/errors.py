"""JSON-RPC 2.0 error codes and the one table of application codes, mapped at the boundary.

Spec codes (https://www.jsonrpc.org/specification#error_object): -32700 parse error,
-32600 invalid request, -32601 method not found, -32602 invalid params, -32603 internal error.
Application codes live in -32000..-32099 and are keyed by a domain error's `code_name`
(for vault errors, the `VaultError` subclass's `code_name`), so the packages that raise never
know a number and this table is the only place a number is chosen. -32800 is the LSP
`RequestCancelled` code, answered to a request cancelled by `$/cancelRequest`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800

SPEC_MESSAGES: Mapping[int, str] = {
    PARSE_ERROR: "Parse error",
    INVALID_REQUEST: "Invalid Request",
    METHOD_NOT_FOUND: "Method not found",
    INVALID_PARAMS: "Invalid params",
    INTERNAL_ERROR: "Internal error",
    REQUEST_CANCELLED: "Request cancelled",
}

# code_name -> (code, message). Numbers are part of the public protocol: never renumber.
APPLICATION_CODES: Mapping[str, tuple[int, str]] = {
    "vault_error": (-32000, "Vault error"),
    "not_a_vault": (-32001, "Not a vault"),
    "path_refused": (-32002, "Path refused"),
    "note_not_found": (-32003, "Note not found"),
    "ambiguous_note": (-32004, "Ambiguous note"),
    "note_exists": (-32005, "Note already exists"),
    "not_text": (-32006, "Not a text note"),
    "quota_exceeded": (-32007, "Quota exceeded"),
    "model_unavailable": (-32008, "Model unavailable"),
    "note_format": (-32009, "Note format error"),
    "index_unusable": (-32010, "Index unusable"),
    "conversation_format": (-32011, "Conversation format error"),
    "ledger_error": (-32012, "Learning ledger error"),
    "edit_conflict": (-32013, "Note changed since it was read"),
    "edit_refused": (-32014, "Edit cannot apply"),
    "note_skipped": (-32015, "Note skipped by the index"),
    "disk_full": (-32016, "Disk full"),
    "permission_denied": (-32017, "Permission denied"),
    "read_only_vault": (-32018, "Vault is read only"),
    "erasure_pending": (-32019, "Erasure pending"),
    "sandbox_error": (-32020, "Sandbox error"),
    "sandbox_refused": (-32021, "Sandbox refused to run code"),
    "exec_busy": (-32022, "Another exec is running"),
    "llm_error": (-32030, "LLM error"),
    "budget_exceeded": (-32031, "Budget exceeded"),
    "session_error": (-32040, "Session error"),
    "no_session": (-32041, "No open session"),
    "response_too_large": (-32090, "Response too large"),
    "server_shutting_down": (-32091, "Server is shutting down"),
}

APPLICATION_FALLBACK: tuple[int, str] = (-32099, "Application error")


class RpcError(Exception):
    """An error response to send: code, message and JSON-safe `data` (no host paths).

    A method may raise it to answer with exactly this error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(code, message)
        self.code: int = code
        self.message: str = message
        self.data: Any = data

    def to_json(self) -> dict[str, Any]:
        """The JSON-RPC error object."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            out["data"] = self.data
        return out


def spec_error(code: int, data: Any = None) -> RpcError:
    """An error with one of the spec codes and its standard message."""
    return RpcError(code, SPEC_MESSAGES[code], data)


# The longest parameter name an answer echoes: the name of an unexpected parameter is the
# client's key, up to a whole frame long (ADVRPC: a 5 MB key, echoed twice, made the answer
# too large to send, so the client learnt `response_too_large`, not which parameter).
MAX_PARAM_ECHO = 200


def invalid_params(param: str, reason: str) -> RpcError:
    """-32602 naming the offending parameter (cut to `MAX_PARAM_ECHO` characters)."""
    param = param[:MAX_PARAM_ECHO]
    return RpcError(INVALID_PARAMS, f"Invalid params: {param}", {"param": param, "reason": reason})


def application_error(code_name: str, data: Mapping[str, Any] | None = None) -> RpcError:
    """The application error for a domain `code_name`; `data` gains `"kind": code_name`."""
    code, message = APPLICATION_CODES.get(code_name, APPLICATION_FALLBACK)
    payload: dict[str, Any] = {"kind": code_name}
    if data:
        payload.update(data)
    return RpcError(code, message, payload)
