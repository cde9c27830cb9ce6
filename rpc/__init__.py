"""JSON-RPC 2.0 over newline-delimited JSON: framing, spec-exact parsing, dispatch, the server.

Pure protocol: imports nothing else of rmh. `Dispatcher.dispatch` is the one frame -> frame
function; `StdioServer` is the stdio loop around it. The composition root supplies only the
method table, its exception map, its control methods and an `on_shutdown` hook.
"""

from .calls import AsyncMethod, ExceptionMapper
from .dispatch import CANCEL_METHODS, Dispatcher
from .errors import (
    APPLICATION_CODES,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    RpcError,
    application_error,
    invalid_params,
    spec_error,
)
from .flight import InFlight, id_key
from .framing import DEFAULT_MAX_FRAME, Frame, FrameTooLarge, LineSplitter, encode
from .held_signals import holding as holding_signals
from .messages import NO_ID, Invalid, Parsed, Request, failure, parse_frame, success
from .server import ShutdownHook, StdioServer, shutdown_signals

__all__ = [
    "APPLICATION_CODES",
    "CANCEL_METHODS",
    "DEFAULT_MAX_FRAME",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "NO_ID",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "AsyncMethod",
    "Dispatcher",
    "ExceptionMapper",
    "Frame",
    "FrameTooLarge",
    "InFlight",
    "Invalid",
    "LineSplitter",
    "Parsed",
    "Request",
    "RpcError",
    "ShutdownHook",
    "StdioServer",
    "application_error",
    "encode",
    "failure",
    "holding_signals",
    "id_key",
    "invalid_params",
    "parse_frame",
    "shutdown_signals",
    "spec_error",
    "success",
]
