"""Parameter declarations and the one place arguments from outside are checked.

A `Param` says a parameter's name, kind, default and bounds. From a tuple of them this module
derives everything a surface needs, so the surfaces cannot disagree:
- `bind(params, args, kwargs)`: the checked arguments, defaults filled in, or `BadArgument`
  naming the parameter (MCP tool arguments, REPL calls and the CLI go through it);
- `check(params, given)`: the same for arguments already matched by name (JSON-RPC params,
  which the dispatcher binds to `signature(params)`: they are matched once, not twice);
- `json_schema(params)`: the MCP `inputSchema` (JSON Schema, no extra properties);
- `signature(params)` and `signature_text(params, returns)`: the Python signature a JSON-RPC
  method and a REPL function present (the text is what `help(name)` shows after the name).

Kinds: "string" (a str, not blank unless `blank_ok`, at most `max_length` characters, one of
`choices` when given); "boolean" (a bool, never an int);
"integer" (an int, never a bool, within [minimum, maximum]); "date" (an ISO date string, given
to the operation as a `datetime.date`); "json" (JSON text or an object/array, JSON text at
most `max_length` characters); "number" (an int or a finite float, never a bool, within
[minimum, maximum]); "boolean" (true or false); "any" (passed as given: the operation checks
its shape).
A parameter whose default is None also accepts an explicit None.
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal

from .errors import BadArgument

Kind = Literal["string", "integer", "number", "boolean", "date", "json", "any"]


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()  # the default of a parameter that must be given

_PY_TYPE: Mapping[Kind, str] = {"string": "str", "integer": "int", "number": "float",
                                "boolean": "bool", "date": "str",
                                "json": "str | dict | list", "any": ""}
_JSON_TYPE: Mapping[Kind, Any] = {"string": "string", "integer": "integer", "number": "number",
                                  "boolean": "boolean", "date": "string",
                                  "json": ["string", "object", "array"]}


@dataclass(frozen=True)
class Param:
    """One parameter of an operation, as every surface presents and checks it."""

    name: str
    kind: Kind
    description: str = ""
    default: Any = REQUIRED
    minimum: int | None = None
    maximum: int | None = None
    max_length: int | None = None
    blank_ok: bool = False
    keyword_only: bool = False  # REPL: after `*` (never bound by position)
    choices: tuple[str, ...] | None = None  # the allowed values of a "string"
    pattern: tuple[str, str] | None = None  # (regex a "string" matches whole, what it is)

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def check(self, value: Any) -> Any:
        """The checked value (a `date` for kind "date"); `BadArgument` naming the parameter."""
        if value is None and self.default is None:
            return None
        if self.kind == "any":
            return value
        if self.kind == "integer":
            if not isinstance(value, int) or isinstance(value, bool):
                raise BadArgument(self.name, "must be an integer")
            lo = self.minimum if self.minimum is not None else value
            hi = self.maximum if self.maximum is not None else value
            if not lo <= value <= hi:
                raise BadArgument(self.name, _range(self.minimum, self.maximum))
            return value
        if self.kind == "number":
            if not isinstance(value, int | float) or isinstance(value, bool) \
                    or not math.isfinite(number := _as_float(value)):
                raise BadArgument(self.name, "must be a finite number")
            if (self.minimum is not None and number < self.minimum) or (
                    self.maximum is not None and number > self.maximum):
                raise BadArgument(self.name, _range(self.minimum, self.maximum))
            return number
        if self.kind == "boolean":
            if not isinstance(value, bool):
                raise BadArgument(self.name, "must be true or false")
            return value
        if self.kind == "json" and isinstance(value, dict | list):
            return value
        if not isinstance(value, str):
            raise BadArgument(self.name, "must be a string" if self.kind != "json"
                              else "must be JSON text, an object or an array")
        if not self.blank_ok and not value.strip():
            raise BadArgument(self.name, "must not be empty")
        if self.max_length is not None and len(value) > self.max_length:
            raise BadArgument(self.name, f"longer than {self.max_length} characters")
        if self.kind == "date":
            try:
                return date.fromisoformat(value)
            except ValueError as exc:
                raise BadArgument(self.name, "must be an ISO date (YYYY-MM-DD)") from exc
        if self.choices is not None and value not in self.choices:
            raise BadArgument(self.name, f"must be one of {', '.join(self.choices)}")
        if self.pattern is not None and not re.fullmatch(self.pattern[0], value):
            raise BadArgument(self.name, f"must be {self.pattern[1]}")
        return value

    def schema(self) -> dict[str, Any]:
        """This parameter as a JSON Schema property."""
        out: dict[str, Any] = {}
        if self.kind != "any":
            out["type"] = _JSON_TYPE[self.kind]
        if self.description:
            out["description"] = self.description
        if self.kind == "date":
            out["format"] = "date"
        if self.choices is not None:
            out["enum"] = list(self.choices)
        if self.kind in ("string", "date") and not self.blank_ok and self.choices is None:
            out["minLength"] = 1  # (an enum bounds its own length)
        if self.max_length is not None and self.kind in ("string", "date") \
                and self.choices is None:
            out["maxLength"] = self.max_length
        if self.pattern is not None:
            out["pattern"] = f"^{self.pattern[0]}$"
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        if not self.required and self.default is not None:
            out["default"] = self.default
        return out


def _as_float(value: int | float) -> float:
    """`float(value)`; an integer past the float range (JSON's `1` and 400 zeros, which
    `math.isfinite` and `float` raise OverflowError on) is infinite, refused like `1e400`."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _range(lo: int | None, hi: int | None) -> str:
    if lo is not None and hi is not None:
        return f"must be between {lo} and {hi}"
    return f"must be at least {lo}" if lo is not None else f"must be at most {hi}"


def bind(params: Sequence[Param], args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """Match arguments to `params` by position and name, check each, fill in defaults."""
    positional = [p for p in params if not p.keyword_only]
    if len(args) > len(positional):
        raise BadArgument("params", f"at most {len(positional)} positional arguments")
    given: dict[str, Any] = {p.name: v for p, v in zip(positional, args, strict=False)}
    by_name = {p.name: p for p in params}
    for name, value in kwargs.items():
        if name not in by_name:
            raise BadArgument(str(name)[:100], "unknown argument")
        if name in given:
            raise BadArgument(name, "given twice")
        given[name] = value
    return check(params, given)


def check(params: Sequence[Param], given: Mapping[str, Any]) -> dict[str, Any]:
    """Check arguments already matched to `params` by name, and fill in defaults (a missing
    required one is `BadArgument`; names not in `params` are the matcher's business)."""
    out: dict[str, Any] = {}
    for p in params:
        if p.name in given:
            out[p.name] = p.check(given[p.name])
        elif p.required:
            raise BadArgument(p.name, "required")
        else:
            out[p.name] = p.default
    return out


def json_schema(params: Sequence[Param]) -> dict[str, Any]:
    """The JSON Schema of an arguments object for `params` (MCP `inputSchema`)."""
    return {
        "type": "object",
        "properties": {p.name: p.schema() for p in params},
        "required": [p.name for p in params if p.required],
        "additionalProperties": False,
    }


def signature(params: Sequence[Param]) -> inspect.Signature:
    """The Python signature of a function taking `params` (for binding by introspection)."""
    empty = inspect.Parameter.empty
    return inspect.Signature([
        inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY if p.keyword_only
                          else inspect.Parameter.POSITIONAL_OR_KEYWORD,
                          default=empty if p.required else p.default)
        for p in params
    ])


def signature_text(params: Sequence[Param], returns: str) -> str:
    """"(query: str, k: int = 10) -> list[dict]": the signature as `help(name)` shows it."""
    parts: list[str] = []
    for p in params:
        if p.keyword_only and "*" not in parts:
            parts.append("*")
        text = p.name
        py_type = _PY_TYPE[p.kind]
        if py_type:
            text += f": {py_type}" + (" | None" if p.default is None else "")
        if not p.required:
            text += f" = {p.default!r}" if py_type else f"={p.default!r}"
        parts.append(text)
    return f"({', '.join(parts)}) -> {returns}"
