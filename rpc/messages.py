"""Parsing one frame into JSON-RPC 2.0 requests, and building response objects.

Spec-exact: each element of a batch is validated on its own (a batch of non-objects gets one
error per element), an empty batch gets one error (not an array), `"jsonrpc"` must be exactly
`"2.0"`, `id` must be a string, a finite number or null (booleans, arrays, objects and a number
such as `1e400` that only decodes to infinity are invalid: such an element is answered -32600
with id null, and its batch siblings are answered as usual), `params` an array or an object.
A well-formed response object (`result` or `error` and an id, no `method`) is not answered:
it is a `Stray` (MCP peers send both ways; see `parse_item`).
The id of an invalid request is echoed when it is valid, else null. NaN/Infinity literals are a
parse error; so is nesting deeper than the interpreter can decode (answered, never a crash). A
byte order mark before a frame's JSON is skipped (RFC 8259 section 8.1 allows it). A
parse error's reason names an LSP `Content-Length:` header, or a second value on the line. A
batch of more than `MAX_BATCH` elements gets one error, id null, as an empty batch does.
An integer of more digits than Python converts (`sys.get_int_max_str_digits()`, 4,300) is
valid JSON, not a parse error: as an id it is -32600 and in params -32602, each saying so,
and the frame's other elements are answered as usual.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from typing import Any

from .errors import INVALID_REQUEST, PARSE_ERROR, RpcError, invalid_params, spec_error

NO_ID: Any = object()  # sentinel: a notification has no id member at all
# Elements of one batch at most: a frame of 2.8 million `{}` cost ~1.7 GB and ~60 s of CPU
# in per-element work and error answers (REV-B, session 24); geth's default is 1,000.
MAX_BATCH = 10_000


@dataclass(frozen=True)
class Request:
    """A well-formed request object. `id is NO_ID` for a notification."""

    method: str
    params: list[Any] | dict[str, Any]
    id: Any = NO_ID

    @property
    def is_notification(self) -> bool:
        return self.id is NO_ID


@dataclass(frozen=True)
class Invalid:
    """An element that is not a valid request: it is answered with `error`, id `id` (`NO_ID`:
    a notification the server cannot run, logged and answered by nothing)."""

    error: RpcError
    id: Any = None


@dataclass(frozen=True)
class Stray:
    """A well-formed response object sent to us: answered by nothing (see `parse_item`)."""

    id: Any


@dataclass(frozen=True)
class Parsed:
    """A frame: its items (requests and invalid elements), and whether it was a batch.

    `error` is set instead when the frame as a whole is answered with one error (parse error,
    empty batch, a non-container top level)."""

    items: tuple[Request | Invalid | Stray, ...] = ()
    is_batch: bool = False
    error: RpcError | None = None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


@dataclass(frozen=True)
class LongInt:
    """Stands in for an integer literal of more digits than `int()` converts. Such a frame is
    valid JSON, but it was answered -32700 "invalid JSON" with id null (MCPRPC2, session 29),
    so a client learnt neither which request nor why."""

    digits: int

    def reason(self) -> str:
        return (f"an integer of {self.digits} digits: this server reads integers of at most "
                f"{sys.get_int_max_str_digits()} digits")


def _parse_int(text: str) -> int | LongInt:
    try:
        return int(text)
    except ValueError:  # the only one JSON's integer grammar leaves: too many digits
        return LongInt(len(text.lstrip("-")))


def _long_int_in(value: Any) -> tuple[str, LongInt] | None:
    """The first `LongInt` inside params, with the top-level member it is under."""
    top: list[tuple[str, Any]] = (
        [(str(k), v) for k, v in value.items()] if isinstance(value, dict)
        else [(str(i), v) for i, v in enumerate(value)])
    for name, item in top:
        stack = [item]
        while stack:
            node = stack.pop()
            if isinstance(node, LongInt):
                return name, node
            if isinstance(node, dict):
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
    return None


def valid_id(value: Any) -> bool:
    """An id may be a string, a finite number or null (never a boolean, array or object).

    A JSON number too large for a float (`1e400`) decodes to infinity, which no JSON encoder
    can echo: it is refused here, so it can never poison the encoding of a whole batch."""
    if value is None or isinstance(value, (str, int)):
        return not isinstance(value, bool)
    return isinstance(value, float) and math.isfinite(value)


def _bad(reason: str, rid: Any = None) -> Invalid:
    return Invalid(spec_error(INVALID_REQUEST, {"reason": reason}), rid)


def parse_item(obj: Any, long_ints: bool = False) -> Request | Invalid | Stray:
    """Validate one element (the whole frame, or one element of a batch). A well-formed
    response object (no method; a result or an error, not both; an id, null only with an
    error) is a `Stray`: MCP is two-way, and this server sends no requests, so the peer has
    answered nothing of ours. Answering it -32600 (MCPRPC, session 28) sent the client an
    error under an id of its own namespace, a second answer to its own request of that id,
    and two peers that answer what they cannot read would ping-pong errors for ever.
    `long_ints`: the frame held a `LongInt` (its params are searched for one only then)."""
    if not isinstance(obj, dict):
        return _bad("not an object")
    has_id = "id" in obj
    rid = obj.get("id")
    if _response(obj, has_id, rid):
        return Stray(rid)
    echo = rid if has_id and valid_id(rid) else None
    if obj.get("jsonrpc") != "2.0":
        return _bad('jsonrpc must be "2.0"', echo)
    method = obj.get("method")
    if not isinstance(method, str):
        return _bad("method must be a string", echo)
    if isinstance(rid, LongInt):
        return _bad(f"id is {rid.reason()}")
    if has_id and not valid_id(rid):
        return _bad("id must be a string, finite number or null")
    params = obj.get("params", {})
    if not isinstance(params, (list, dict)):
        return _bad("params must be array or object", echo)
    if "result" in obj or "error" in obj:
        return _bad("a response is not a request", echo)
    if long_ints and (found := _long_int_in(params)) is not None:
        # a notification's error is never answered (JSON-RPC 2.0 section 4.1): NO_ID says so
        return Invalid(invalid_params(found[0], found[1].reason()), echo if has_id else NO_ID)
    return Request(method, params, rid if has_id else NO_ID)


def _response(obj: dict[str, Any], has_id: bool, rid: Any) -> bool:
    if "method" in obj or obj.get("jsonrpc") != "2.0" or not has_id or not valid_id(rid):
        return False
    if "result" in obj:
        return "error" not in obj and rid is not None
    error = obj.get("error")
    return isinstance(error, dict) and isinstance(error.get("code"), int)


def parse_frame(raw: bytes) -> Parsed:
    """Decode and validate one frame (no newline). Never raises."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return Parsed(error=spec_error(PARSE_ERROR, {"reason": "invalid UTF-8"}))
    # A UTF-8 byte order mark before the JSON (Windows tools write one at a stream's start) is
    # skipped, as RFC 8259 section 8.1 lets a parser do: it was "invalid JSON", so a client's
    # first request, its `initialize`, was lost without saying why (MCPRPC2, session 29).
    text = text.removeprefix("\ufeff")
    long_ints: list[LongInt] = []

    def parse_int(literal: str) -> int | LongInt:
        value = _parse_int(literal)
        if isinstance(value, LongInt):
            long_ints.append(value)
        return value

    try:
        obj = json.loads(text, parse_constant=_reject_constant, parse_int=parse_int)
    except RecursionError:
        return Parsed(error=spec_error(PARSE_ERROR, {"reason": "nesting too deep"}))
    except json.JSONDecodeError as exc:
        return Parsed(error=spec_error(PARSE_ERROR, {"reason": _undecodable(text, exc)}))
    except ValueError:  # NaN/Infinity
        return Parsed(error=spec_error(PARSE_ERROR, {"reason": "invalid JSON"}))
    if isinstance(obj, list):
        if not obj:
            return Parsed(error=spec_error(INVALID_REQUEST, {"reason": "empty batch"}))
        if len(obj) > MAX_BATCH:  # one error, as for an empty batch: nothing of it runs
            return Parsed(error=spec_error(INVALID_REQUEST, {
                "reason": f"batch too large ({len(obj)} elements; at most {MAX_BATCH})"}))
        return Parsed(items=tuple(parse_item(o, bool(long_ints)) for o in obj), is_batch=True)
    return Parsed(items=(parse_item(obj, bool(long_ints)),))


# The two framing mistakes a client makes, said as such (MCPRPC, session 28: both were
# "invalid JSON", which does not tell a client that LSP-style Content-Length framing, or two
# messages written on one line, is why its request was lost).
LSP_HEADER = ("a Content-Length header: this server reads one JSON message per line "
              "(newline-delimited, as MCP's stdio transport), not LSP framing")
EXTRA_DATA = "more than one JSON value on the line: write one message per line"


def _undecodable(text: str, exc: json.JSONDecodeError) -> str:
    """The parse error's reason: a framing mistake by name, else "invalid JSON"."""
    if text.lstrip()[:15].lower() == "content-length:":
        return LSP_HEADER
    return EXTRA_DATA if exc.msg == "Extra data" else "invalid JSON"


def success(rid: Any, result: Any) -> dict[str, Any]:
    """A success response object."""
    return {"jsonrpc": "2.0", "result": result, "id": rid}


def failure(rid: Any, error: RpcError) -> dict[str, Any]:
    """An error response object (`rid` None when the id could not be determined)."""
    return {"jsonrpc": "2.0", "error": error.to_json(), "id": rid}
