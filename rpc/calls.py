"""Calling one method for one validated request: lookup, params binding, errors that never leak.

Contract of `call_method`:
- an unknown method is -32601 with `data.method` (the name, cut to 200 characters);
- `params` is bound to the method's signature with `inspect.Signature.bind` (array params are
  positional, object params are keywords); a mismatch is -32602 naming the first offending
  parameter (`data.param`: an unexpected keyword, else a missing required one, else `params`
  when there are too many positional values), found from the signature, never from the text
  of a `TypeError`;
- a string anywhere in a parameter (a value or an object key) that holds a lone surrogate
  (`"\\ud800"`: valid JSON, not valid Unicode) is -32602 naming that parameter, before the
  method runs, so no method ever sees text it cannot encode;
- the method's value is the result; an `RpcError` it raises is answered as is; any other
  exception goes through `map_exception` (the composition root's one error map); unmapped, it
  is logged to stderr and answered as a bare -32603 with no text (no paths, no secrets).

jsonrpcserver (5.x) is deliberately not used here: its public `dispatch` validates a batch as
one schema (not per element), its invalid-params result carries only the `TypeError` text (no
parameter name), and its internal-error result carries the exception text. Doing the lookup
and the binding here is shorter than undoing those.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

from .errors import INTERNAL_ERROR, METHOD_NOT_FOUND, RpcError, invalid_params, spec_error

log = logging.getLogger("rpc")

AsyncMethod = Callable[..., Awaitable[Any]]
ExceptionMapper = Callable[[Exception], RpcError | None]

_NAMED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def no_mapping(exc: Exception) -> RpcError | None:
    """The default exception map: nothing is a domain error."""
    return None


def _culprit(sig: inspect.Signature, params: list[Any] | dict[str, Any]) -> tuple[str, str]:
    """The parameter that makes binding fail, and why (from the signature alone)."""
    kinds = {p.kind for p in sig.parameters.values()}
    if isinstance(params, dict):
        named = {n for n, p in sig.parameters.items() if p.kind in _NAMED}
        if inspect.Parameter.VAR_KEYWORD not in kinds:
            for key in params:
                if key not in named:
                    return key, "unexpected parameter"
        given: set[str] = set(params)
        positional_given = 0
    else:
        given = set()
        positional_given = len(params)
        capacity = sum(p.kind in _POSITIONAL for p in sig.parameters.values())
        if inspect.Parameter.VAR_POSITIONAL not in kinds and positional_given > capacity:
            return "params", f"at most {capacity} positional parameters"
    for i, (name, p) in enumerate(sig.parameters.items()):
        if p.default is not inspect.Parameter.empty or p.kind in (
            inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD
        ):
            continue
        if p.kind in _POSITIONAL and i < positional_given:
            continue
        if name not in given or p.kind is inspect.Parameter.POSITIONAL_ONLY:
            return name, "missing required parameter"
    return "params", "params do not match the method's parameters"


def _strings(value: Any) -> Iterator[str]:
    """Every string inside a decoded JSON value, keys included (iterative: any depth)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())


def _has_lone_surrogate(value: Any) -> bool:
    for text in _strings(value):
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                return True
    return False


def bind(fn: AsyncMethod, params: list[Any] | dict[str, Any]) -> inspect.BoundArguments:
    """Bind `params` to `fn`'s signature; raises `RpcError` (-32602, naming the parameter)."""
    sig = inspect.signature(fn)
    try:
        bound = sig.bind(**params) if isinstance(params, dict) else sig.bind(*params)
    except TypeError:
        name, reason = _culprit(sig, params)
        raise invalid_params(name, reason) from None
    for name, value in bound.arguments.items():
        if _has_lone_surrogate(value):
            raise invalid_params(name, "string holds a lone surrogate (not valid Unicode)")
    return bound


async def call_method(
    methods: Mapping[str, AsyncMethod],
    method: str,
    params: list[Any] | dict[str, Any],
    map_exception: ExceptionMapper = no_mapping,
) -> Any:
    """The result of `method(params)`; raises `RpcError` for every failure (see module doc)."""
    fn = methods.get(method)
    if fn is None:
        raise spec_error(METHOD_NOT_FOUND, {"method": method[:200]})
    bound = bind(fn, params)
    try:
        return await fn(*bound.args, **bound.kwargs)
    except RpcError:
        raise
    except Exception as exc:
        try:
            mapped = map_exception(exc)
        except Exception:
            log.exception("exception map failed for method %s", method[:200])
            mapped = None
        if mapped is not None:
            raise mapped from exc
        log.exception("method %s failed", method[:200])
        raise spec_error(INTERNAL_ERROR) from exc
