"""Dispatch of validated requests to async methods, through jsonrpcserver, made spec-exact.

jsonrpcserver does the method lookup, the binding of `params` to the method's signature
(-32601, -32602) and the call. Around it this module adds what the spec and a safe server need:
the per-element frame handling of `rpc.messages`, notifications never answered, concurrent
batch elements (anyio), and errors that never leak: an unexpected exception is logged (stderr)
and answered as a bare -32603 with no text; a domain exception is turned into an application
error by the `map_exception` hook the composition root supplies (rpc knows no domain types).
Responses larger than the frame cap, or not JSON-serialisable, become errors for their id.
"""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
from jsonrpcserver.async_dispatcher import dispatch_request
from jsonrpcserver.request import Request as JrsRequest
from jsonrpcserver.result import Success
from jsonrpcserver.sentinels import NOCONTEXT, NODATA, NOID
from oslash.either import Right  # type: ignore[import-untyped]

from .errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    RpcError,
    application_error,
    invalid_params,
    spec_error,
)
from .framing import DEFAULT_MAX_FRAME, encode
from .messages import Invalid, Request, failure, parse_frame, success

log = logging.getLogger("rpc")

AsyncMethod = Callable[..., Awaitable[Any]]
ExceptionMapper = Callable[[Exception], RpcError | None]

_PARAM_NAME = re.compile(r"'([^']{1,100})'")


def _no_mapping(exc: Exception) -> RpcError | None:
    return None


def _wrap(name: str, fn: AsyncMethod, map_exception: ExceptionMapper) -> Callable[..., Any]:
    """Adapt a plain async method (returns a JSON value) to jsonrpcserver's Result protocol."""

    async def method(*args: Any, **kwargs: Any) -> Any:
        try:
            return Success(await fn(*args, **kwargs))
        except RpcError:
            raise
        except Exception as exc:
            mapped = map_exception(exc)
            if mapped is not None:
                raise mapped from exc
            log.exception("method %s failed", name)
            raise spec_error(INTERNAL_ERROR) from exc

    method.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
    return method


def _error_from_result(code: int, message: str, data: Any, method: str) -> RpcError:
    """Normalise a jsonrpcserver error result (never pass its exception text through)."""
    if code == METHOD_NOT_FOUND:
        return spec_error(METHOD_NOT_FOUND, {"method": method[:200]})
    if code == INVALID_PARAMS and isinstance(data, str):  # from signature binding
        found = _PARAM_NAME.search(data)
        return invalid_params(found.group(1) if found else "params", data)
    if code == INTERNAL_ERROR:
        return spec_error(INTERNAL_ERROR)
    return RpcError(code, message, None if data is NODATA else data)


class Dispatcher:
    """Calls methods for requests; pure apart from the methods themselves."""

    def __init__(
        self,
        methods: Mapping[str, AsyncMethod],
        *,
        map_exception: ExceptionMapper = _no_mapping,
        max_frame: int = DEFAULT_MAX_FRAME,
    ) -> None:
        self.max_frame = max_frame
        self._methods = {n: _wrap(n, f, map_exception) for n, f in methods.items()}

    def has_method(self, name: str) -> bool:
        return name in self._methods

    async def call(self, request: Request) -> dict[str, Any] | None:
        """Run one request; its response object, or None for a notification."""
        rid = NOID if request.is_notification else request.id
        jrs = JrsRequest(request.method, request.params, rid)
        _, result = await dispatch_request(self._methods, NOCONTEXT, jrs)
        if request.is_notification:
            return None
        if isinstance(result, Right):
            return success(request.id, result._value.result)
        err = result._error
        error = _error_from_result(err.code, err.message, err.data, request.method)
        return failure(request.id, error)

    def render(self, response: dict[str, Any] | list[dict[str, Any]]) -> bytes:
        """Encode a response (or batch) as one frame; oversize or unencodable -> an error."""
        try:
            frame = encode(response)
        except (TypeError, ValueError):
            log.exception("response not JSON-serialisable")
            frame = b""
            error: RpcError = spec_error(INTERNAL_ERROR)
        else:
            if len(frame) <= self.max_frame:
                return frame
            error = application_error("response_too_large", {"limit": self.max_frame})
        if isinstance(response, list):
            return encode([failure(r.get("id"), error) for r in response])
        return encode(failure(response.get("id"), error))

    async def dispatch(self, raw: bytes) -> bytes | None:
        """One whole frame in, its answer frame out (None: nothing to answer).

        Batch elements run concurrently; the batch answer keeps their order."""
        parsed = parse_frame(raw)
        if parsed.error is not None:
            return encode(failure(None, parsed.error))
        results: list[dict[str, Any] | None] = [None] * len(parsed.items)

        async def run(i: int, item: Request | Invalid) -> None:
            if isinstance(item, Invalid):
                results[i] = failure(item.id, item.error)
            else:
                results[i] = await self.call(item)

        async with anyio.create_task_group() as tg:
            for i, item in enumerate(parsed.items):
                tg.start_soon(run, i, item)
        answered = [r for r in results if r is not None]
        if not answered:
            return None
        return self.render(answered if parsed.is_batch else answered[0])
