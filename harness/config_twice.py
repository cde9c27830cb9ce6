"""Which key or table of `rmh.toml` is given twice, in the words of every other refusal.

TOML refuses a key set twice, and tomllib says so as "Cannot overwrite a value (at end of
document)" (Python 3.11: no line, no key) or "Cannot declare ('search',) twice": a user of a
long file is left to hunt for it (CONFIG2). `twice(text)` finds it line by line, each line
read by tomllib alone (a header gives the table, a `key = value` line its dotted key and
value; a line that is no whole TOML document, inside a multi-line string or array, is passed
over), and says `[section].key is set twice (lines 3 and 7: 5, then 7); set it once`. None
when it finds nothing (the caller then keeps tomllib's own message).
"""

from __future__ import annotations

import tomllib
from typing import Any

_TWICE = ("Cannot overwrite a value", "Cannot declare", "Duplicate inline table key",
          "Cannot mutate")
_SEVERAL = object()  # the value of a key whose value goes on over the next lines


def about_twice(error: tomllib.TOMLDecodeError) -> bool:
    """Whether tomllib refused a document for a key or table given twice."""
    return str(error).startswith(_TWICE)


def _flat(table: dict[str, Any], prefix: tuple[str, ...]) -> list[tuple[tuple[str, ...], Any]]:
    """(dotted key, value) of each value a one-line document sets (inline tables kept)."""
    out: list[tuple[tuple[str, ...], Any]] = []
    for key, value in table.items():
        if isinstance(value, dict) and value and len(table) == 1:
            out += _flat(value, (*prefix, key))
        else:
            out.append(((*prefix, key), value))
    return out


def _where(path: tuple[str, ...]) -> str:
    head, rest = path[0], ".".join(path[1:])
    return f"[{head}].{rest}" if rest else f"[{head}]"


def _shown(value: Any) -> str:
    if value is _SEVERAL:
        return "a value over several lines"
    text = repr(value) if isinstance(value, str) else str(value).lower() if isinstance(
        value, bool) else "a table" if isinstance(value, dict) else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def twice(text: str) -> str | None:
    """The one-line refusal naming the key or table `text` gives twice, or None."""
    table: tuple[str, ...] = ()
    seen: dict[tuple[str, ...], tuple[int, Any]] = {}
    headers: dict[tuple[str, ...], int] = {}
    inside = ""  # the quotes of the multi-line string a line is in
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if inside:
            inside = "" if stripped.count(inside) % 2 else inside
            continue
        if not stripped or stripped.startswith("#") or stripped.startswith("[["):
            continue
        try:
            doc = tomllib.loads(stripped)
        except tomllib.TOMLDecodeError as exc:
            inside = next((q for q in ('"""', "'''") if stripped.count(q) % 2), "")
            head, eq, _ = stripped.partition("=")
            if str(exc).startswith("Duplicate inline table key") and eq:
                name = str(exc).split("'")[1] if "'" in str(exc) else "?"
                return (f"rmh.toml: {_where((*table, head.strip(), name))} is set twice "
                        f"(line {number}); set it once")
            try:  # a value over several lines (a string, an array): its key alone
                doc = tomllib.loads(f"{head} = 0") if eq else {}
            except tomllib.TOMLDecodeError:
                continue
            doc = {"...": doc}  # its value is not shown
        if stripped.startswith("["):
            path = tuple(_flat(doc, ())[0][0])
            if path in headers:
                return (f"rmh.toml: {_where(path)} is declared twice (lines {headers[path]} "
                        f"and {number}); give each table once")
            headers[path], table = number, path
            continue
        partial = list(doc) == ["..."]
        for key, value in _flat(doc["..."] if partial else doc, ()):
            full, value = (*table, *key), _SEVERAL if partial else value
            if full in seen:
                first, old = seen[full]
                return (f"rmh.toml: {_where(full)} is set twice (lines {first} and {number}: "
                        f"{_shown(old)}, then {_shown(value)}); set it once")
            seen[full] = (number, value)
    return None
