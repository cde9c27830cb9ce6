"""The checked fields of an intent file (storage/intents.py): a string, a list of strings, a
list of objects, each refused with TypeError (or UnicodeEncodeError) when the JSON holds
anything else, so a damaged or forged intent is reported unreadable instead of half-run."""

from __future__ import annotations

from typing import Any

VERSION = 1  # of every intent file


def text(value: object) -> str:
    """`value` when it is a string UTF-8 can encode (TypeError, or UnicodeEncodeError for a
    lone surrogate `\\ud800` that JSON can spell), as every path and text of a plan is."""
    if not isinstance(value, str):
        raise TypeError(f"expected a string, not {type(value).__name__}")
    value.encode("utf-8")
    return value


def texts(value: object) -> tuple[str, ...]:
    """`value` when it is a list of strings UTF-8 can encode (`text`; TypeError else)."""
    if not isinstance(value, list):
        raise TypeError("expected a list of strings")
    return tuple(text(v) for v in value)


def objects(value: object) -> list[dict[str, Any]]:
    """`value` when it is a list of JSON objects (TypeError else)."""
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise TypeError("expected a list of objects")
    return value
