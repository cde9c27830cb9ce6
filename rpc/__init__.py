"""JSON-RPC 2.0 over newline-delimited JSON: framing, spec-exact parsing, dispatch, error codes.

Pure protocol: imports nothing else of rmh. The stdio loop lives in `harness.server`.
"""

from .dispatch import AsyncMethod, Dispatcher, ExceptionMapper
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
from .framing import DEFAULT_MAX_FRAME, Frame, FrameTooLarge, LineSplitter, encode
from .messages import NO_ID, Invalid, Parsed, Request, failure, id_key, parse_frame, success

__all__ = [
    "APPLICATION_CODES",
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
    "Invalid",
    "LineSplitter",
    "Parsed",
    "Request",
    "RpcError",
    "application_error",
    "encode",
    "failure",
    "id_key",
    "invalid_params",
    "parse_frame",
    "spec_error",
    "success",
]
