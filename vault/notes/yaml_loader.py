"""The YAML loader and dumper of frontmatter (frontmatter.py says what they read and write),
apart so that a process that parses no frontmatter never imports PyYAML (~0.02 s of CPU at
every start of `rmh`: issue 33 item 5)."""

from __future__ import annotations

import math
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node

from ..errors import NoteFormatError
from .yaml_core import core_int, core_resolvers, portable_resolvers
from .yaml_keys import key_str

_TIMESTAMP = "tag:yaml.org,2002:timestamp"

# libyaml when the wheel has it (~10x faster; its marks count characters too), else pure Python.
_SafeLoaderBase: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Loader(_SafeLoaderBase):  # type: ignore[valid-type,misc]
    """SafeLoader that keeps dates and times as their source strings and refuses a mapping
    with two keys that load as one JSON key: `a` twice, or `1`/`01`/`0x1`/`"1"`, or `true`/
    `True`/`"true"` (the core schema resolves them alike, and a dict keeps only the last value,
    which would vanish without a word; `yes` and `on` are text). Merge keys (`<<`) may still
    be overridden."""

    def construct_mapping(self, node: Node, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, MappingNode):
            seen: dict[str, str] = {}
            loaded: dict[Any, str] = {}  # Python merges keys too: 1, 1.0 and True are one
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                if isinstance(key, list | dict):
                    continue  # unhashable: the base constructor says so
                name, written = key_str(key), str(key_node.value)
                first = seen.get(name) or loaded.get(key)
                if first is not None:
                    raise NoteFormatError(f"duplicate key {name!r} (written {first!r} "
                                          f"and {written!r})")
                seen[name] = loaded[key] = written
        return dict(super().construct_mapping(node, deep=deep))


class Dumper(yaml.SafeDumper):
    """SafeDumper that writes date-like strings plain (they load back as strings) and no anchors."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _source_text(loader: yaml.SafeLoader, node: Node) -> str:
    return str(loader.construct_scalar(node))  # type: ignore[arg-type]


def _float_or_text(loader: yaml.SafeLoader, node: Node) -> float | str:
    value = float(loader.construct_yaml_float(node))  # type: ignore[arg-type]
    return value if math.isfinite(value) else str(node.value)


def _set_as_list(loader: yaml.SafeLoader, node: Node) -> list[Any]:
    return list(loader.construct_mapping(node))  # type: ignore[arg-type]


Loader.yaml_implicit_resolvers = core_resolvers()
Dumper.yaml_implicit_resolvers = portable_resolvers()  # quotes what 1.2 or 1.1 reads otherwise
Loader.add_constructor("tag:yaml.org,2002:int", core_int)
Loader.add_constructor(_TIMESTAMP, _source_text)
Loader.add_constructor("tag:yaml.org,2002:binary", _source_text)
Loader.add_constructor("tag:yaml.org,2002:float", _float_or_text)
Loader.add_constructor("tag:yaml.org,2002:set", _set_as_list)
