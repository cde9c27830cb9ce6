"""Plain YAML scalars as Obsidian reads them: YAML 1.2's core schema (the `yaml` package it
bundles), for PyYAML's loader and dumper (frontmatter.py). PyYAML resolves YAML 1.1, which read
`time: 12:30` as 750, `country: NO` as false and `zip: 012345` as 5349; here `yes`, `no`, `on`,
`off`, `12:30`, `1_000` and `0b1` are text, `012` is 12, `0o17` 15, `0x1F` 31 and `1e5` a number.
No timestamps: a date stays its text. `<<` still merges."""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.nodes import Node

_CORE: tuple[tuple[str, str, str], ...] = (  # (tag, first characters, pattern), first match wins
    ("bool", "tTfF", r"true|True|TRUE|false|False|FALSE"),
    ("int", "-+0123456789", r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+"),
    ("float", "-+.0123456789", r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
     r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"),
    ("null", "~nN", r"~|null|Null|NULL"), ("null", "", ""), ("merge", "<", "<<"),
)


def core_resolvers() -> dict[Any, list[tuple[str, Any]]]:
    """`yaml_implicit_resolvers` for a loader or dumper class: first character -> rules."""
    table: dict[Any, list[tuple[str, Any]]] = {}
    for tag, firsts, pattern in _CORE:
        for first in firsts or [""]:
            table.setdefault(first, []).append((f"tag:yaml.org,2002:{tag}",
                                                re.compile(f"^(?:{pattern})$")))
    return table


def portable_resolvers() -> dict[Any, list[tuple[str, Any]]]:
    """`yaml_implicit_resolvers` for the dumper: the core schema's, then YAML 1.1's (PyYAML's,
    without timestamps). A string either reads as something else is quoted, so what rmh writes
    reads the same to Obsidian and to a YAML 1.1 reader (PyYAML, Jekyll): `draft: 'yes'`,
    `time: '12:30'`, `zip: '012345'`; a date stays plain (text to both, as before)."""
    table = core_resolvers()
    for first, rules in sorted(yaml.SafeDumper.yaml_implicit_resolvers.items(),
                               key=lambda kv: str(kv[0])):
        table.setdefault(first, []).extend(
            (tag, rx) for tag, rx in rules if tag != "tag:yaml.org,2002:timestamp")
    return table


def core_int(loader: yaml.SafeLoader, node: Node) -> int:
    """The int constructor for the core schema's forms."""
    text = str(node.value)  # `012` is 12; an explicit `!!int` of another form as PyYAML reads it
    try:
        return int(text, 8 if text.startswith("0o") else 16 if text.startswith("0x") else 10)
    except ValueError:
        return int(loader.construct_yaml_int(node))  # type: ignore[arg-type]
