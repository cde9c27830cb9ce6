"""A health report (a JSON document) as indented text: `rmh doctor` and `rmh learning`."""

from __future__ import annotations

from typing import Any


def report_text(report: dict[str, Any]) -> str:
    """A whole report as lines, its keys sorted (`rmh learning`)."""
    return "\n".join(line for key in sorted(report, key=str)
                     for line in section_lines(str(key), report[key], ""))


def entry_line(item: Any) -> str:
    """One entry of a report's list as a line: its fields' values joined by ": " (a dict), else
    as it is (paths are printable already: vault/storage/paths.py)."""
    if isinstance(item, dict):
        return ": ".join(str(v) for v in item.values())
    return str(item)


def scalar_text(value: Any) -> str:
    """A leaf of the report in words: None or "" as "-", an empty list or table as "none"."""
    if value is None or value == "":
        return "-"
    if value in ([], {}):
        return "none"
    return str(value)


def section_lines(key: str, value: Any, pad: str) -> list[str]:
    """A report entry as indented lines: a table's keys sorted, one under another; a list one
    "- item" a line (a list of numbers on one line); never a Python repr of a dict or list."""
    if isinstance(value, dict) and value:
        lines = [f"{pad}{key}:"]
        for sub in sorted(value, key=str):
            lines += section_lines(str(sub), value[sub], pad + "  ")
        return lines
    if isinstance(value, list) and value:
        if all(isinstance(v, (int, float)) for v in value):
            return [f"{pad}{key}: {', '.join(str(v) for v in value)}"]
        lines = [f"{pad}{key}:"]
        for item in value:
            body = section_lines("", item, pad + "    ")
            one = len(body) == 1 or not isinstance(item, dict)
            lines += [f"{pad}  - {entry_line(item)}"] if one else [f"{pad}  -", *body[1:]]
        return lines
    return [f"{pad}{key}: {scalar_text(value)}"]
