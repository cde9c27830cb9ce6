"""YAML frontmatter of one note: find the block, load it JSON-safe, dump it, edit it in place.

A block exists only when the text starts with a line exactly `---` (LF, CRLF or a lone CR: lines
as CodeMirror, Obsidian's editor, splits them, `lines_view`) and a later line is exactly `---` or
`...`; the YAML is what lies between. Loading uses a `yaml.SafeLoader`
subclass that reads plain scalars as Obsidian does (YAML 1.2's core schema: yaml_core.py), without
timestamps, so `date: 2024-01-02` stays the string "2024-01-02", `time: 12:30` "12:30";
`!!binary` stays its source text, `!!set` becomes a list, non-finite floats (`.nan`) their source
text, tuples lists and keys strings: every loaded value is JSON-safe. A block that fails to parse,
is not a mapping (empty is `{}`), nests deeper than `MAX_DEPTH` or expands (through aliases) to
more than `MAX_NODES` values raises `NoteFormatError`.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import NoteFormatError
from .remembered import Remembered
from .yaml_keys import key_str

if TYPE_CHECKING:
    from yaml.nodes import MappingNode, Node

MAX_DEPTH = 64
MAX_NODES = 100_000
_CLOSE = re.compile(r"^(?:---|\.\.\.)\r?$", re.MULTILINE)
_LONE_CR = re.compile(r"\r(?!\n)")


def lines_view(text: str) -> str:
    """`text` with each lone CR (a classic Mac line end) read as LF, every other character
    and so every offset kept: what the scanners read. CodeMirror, Obsidian's editor, splits
    lines at `\\r\\n?|\\n` (@codemirror/state `DefaultSplit`), so such a file shows lines,
    frontmatter and headings there; the file's bytes are never changed by reading it."""
    return _LONE_CR.sub("\n", text) if "\r" in text else text




@dataclass(frozen=True)
class Block:
    """Where the frontmatter block sits in a note's text."""

    yaml_start: int  # after the opening `---` line
    yaml_end: int  # start of the closing line
    body_start: int  # after the closing line
    newline: str  # "\r\n", "\n" or "\r", as the opening line ends


@dataclass(frozen=True)
class Loaded:
    data: dict[str, Any]
    root: MappingNode | None
    # source spans of scalar values holding "[[", with the scalar's style: "'" or '"' (quoted),
    # ":" (plain), "" (a literal or folded block)
    value_spans: tuple[tuple[int, int, str], ...]


BOM = "\ufeff"


def find_block(text: str) -> Block | None:
    """The frontmatter block of `text`, or None when it has none. A leading byte-order mark
    (which the store keeps, so files round-trip byte for byte) does not hide the block."""
    skip = 1 if text.startswith(BOM) else 0
    view = lines_view(text)
    if view.startswith("---\n", skip):
        start, newline = skip + 4, text[skip + 3]  # "\n", or "\r" alone (classic Mac)
    elif view.startswith("---\r\n", skip):
        start, newline = skip + 5, "\r\n"
    else:
        return None
    m = _CLOSE.search(view, start)
    if m is None:
        return None
    body_start = min(len(text), m.end() + 1)
    return Block(start, m.start(), body_start, newline)


def _json_safe(obj: object, depth: int, budget: list[int]) -> Any:
    budget[0] -= 1
    if budget[0] < 0 or depth > MAX_DEPTH:
        raise NoteFormatError("frontmatter too large or too deeply nested")
    if isinstance(obj, dict):
        return {key_str(k): _json_safe(v, depth + 1, budget) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_json_safe(v, depth + 1, budget) for v in obj]
    if isinstance(obj, bytes):
        return obj.decode("utf-8", "replace")
    return obj


_QUOTES = {"'": "'", '"': '"', None: ":", "": ":"}  # a ScalarNode's style -> value_spans' mark


def _value_spans(root: MappingNode, text: str) -> tuple[tuple[int, int, str], ...]:
    spans: list[tuple[int, int, str]] = []
    seen: set[int] = set()  # membership only: aliases share nodes
    from yaml.nodes import MappingNode, ScalarNode, SequenceNode

    stack: list[Node] = [v for _, v in reversed(root.value)]
    while stack and len(seen) < MAX_NODES:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, ScalarNode):
            a, b = node.start_mark.index, node.end_mark.index
            if "[[" in text[a:b]:
                spans.append((a, b, _QUOTES.get(node.style, "")))
        elif isinstance(node, SequenceNode):
            stack.extend(reversed(node.value))
        elif isinstance(node, MappingNode):
            stack.extend(v for _, v in reversed(node.value))
    return tuple(sorted(spans))


def load(yaml_text: str) -> Loaded:
    """Load a frontmatter block's YAML; NoteFormatError on anything but a mapping (or empty)."""
    from yaml.nodes import MappingNode

    from .yaml_loader import Loader

    try:
        loader = Loader(yaml_text)
        try:
            root = loader.get_single_node()
            if root is None:
                return Loaded({}, None, ())
            if not isinstance(root, MappingNode):
                raise NoteFormatError("frontmatter is not a mapping")
            data = loader.construct_document(root)
        finally:
            loader.dispose()
        safe = _json_safe(data, 0, [MAX_NODES])
        return Loaded(safe, root, _value_spans(root, yaml_text))
    except NoteFormatError:
        raise
    except Exception as exc:  # any YAML, recursion or constructor failure: arbitrary input
        raise NoteFormatError(" ".join(str(exc).split()) or type(exc).__name__) from exc


def plain(value: object, depth: int = 0) -> Any:
    """A value to store: JSON-like types as they are, dates as ISO strings, tuples as lists."""
    if depth > MAX_DEPTH:
        raise NoteFormatError("value too deeply nested")
    if value is None or isinstance(value, str | int | float):
        return value
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {key_str(k): plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v, depth + 1) for v in value]
    raise NoteFormatError(f"unsupported frontmatter value type {type(value).__name__}")


def _reloads(text: str, data: Any) -> bool:
    if _CLOSE.search(text):  # a line that would close the block early
        return False
    try:
        return canonical(load(text).data) == canonical(data)
    except NoteFormatError:
        return False


@Remembered  # each distinct entry dumped once (remembered.py)
def _dump_entry(key: str, value: Any) -> str:
    import yaml

    from .yaml_loader import Dumper

    for style in (None, '"'):
        text: str = yaml.dump(
            {key: value},
            Dumper=Dumper,
            allow_unicode=True,
            sort_keys=False,
            default_flow_style=False,
            width=1 << 30,
            default_style=style,
        )
        if _reloads(text, {key: value}):
            return text
    raise NoteFormatError(f"the value of {key[:100]!r} would not read back unchanged from YAML")


def dump(mapping: Mapping[str, Any]) -> str:
    """Block-style YAML for a mapping ("" when empty), "\\n" line ends, one entry per key.

    Each entry is dumped on its own and loaded back: PyYAML's plain and single-quoted styles
    mishandle some characters (NEL, a line reading `---`), so an entry that does not read back is
    written with every scalar double-quoted. Raises NoteFormatError for values that cannot
    round-trip (NaN, unsupported types).
    """
    return "".join(_dump_entry(k, v) for k, v in plain(mapping).items())


def canonical(value: object) -> str:
    """Compare values exactly: order, and int vs float vs bool, matter."""
    return json.dumps(value, ensure_ascii=False)


def _key_name(node: Node) -> str | None:
    from yaml.nodes import ScalarNode

    from .yaml_loader import Loader

    if not isinstance(node, ScalarNode):
        return None
    try:
        return key_str(Loader("").construct_object(node))
    except Exception:  # an odd key is simply never matched
        return None


def _entries(yaml_text: str, root: MappingNode) -> tuple[list[tuple[str | None, int]], int] | None:
    """(key, line start) of each top-level entry and their common column; None if not block."""
    entries: list[tuple[str | None, int]] = []
    col = -1
    if root.flow_style:
        return None
    for key_node, _ in root.value:
        idx = key_node.start_mark.index
        line_start = yaml_text.rfind("\n", 0, idx) + 1
        if yaml_text[line_start:idx].strip(" ") or col not in (-1, idx - line_start):
            return None
        col = idx - line_start
        entries.append((_key_name(key_node), line_start))
    return entries, max(col, 0)


def _trim(yaml_text: str, start: int, end: int, col: int) -> int:
    """Move `end` back over trailing blank lines and outer comments: they are not the entry's."""
    while True:
        line_start = yaml_text.rfind("\n", start, end - 1) + 1
        if line_start <= start:
            return end
        line = yaml_text[line_start:end]
        indent = len(line) - len(line.lstrip(" "))
        if line.strip() and not (line.strip().startswith("#") and indent <= col):
            return end
        end = line_start


def _entry(key: str, value: Any, col: int, newline: str) -> str:
    lines = dump({key: value}).split("\n")[:-1]
    return "".join((" " * col + ln if ln else ln) + newline for ln in lines)


def _edit(
    yaml_text: str, root: MappingNode | None, todo: Mapping[str, Any], newline: str
) -> str | None:
    """Replace, delete and append entries line by line; None when the layout is not block."""
    found = ([], 0) if root is None else _entries(yaml_text, root)
    if found is None:
        return None
    entries, col = found
    out = [yaml_text[: entries[0][1]] if entries else yaml_text]
    done: set[str] = set()
    for i, (name, start) in enumerate(entries):
        end = entries[i + 1][1] if i + 1 < len(entries) else len(yaml_text)
        if name is None or name not in todo:
            out.append(yaml_text[start:end])
            continue
        if name not in done and todo[name] is not None:
            out.append(_entry(name, todo[name], col, newline))
        done.add(name)  # later duplicates of a changed key are dropped
        out.append(yaml_text[_trim(yaml_text, start, end, col) : end])
    out.extend(
        _entry(k, v, col, newline) for k, v in todo.items() if v is not None and k not in done
    )
    return "".join(out)


def _reads_back(text: str, expected: Mapping[str, Any], body: str) -> bool:
    block = find_block(text)
    if block is None or text[block.body_start :] != body:
        return False
    try:
        data = load(text[block.yaml_start : block.yaml_end]).data
    except NoteFormatError:
        return False
    return canonical(data) == canonical(expected)


def update(text: str, changes: Mapping[str, Any]) -> str:
    """Set (or, with None, delete) top-level keys, leaving every other byte of `text` as it was.

    Changed entries are rewritten in place, new keys appended at the end of the block, a block is
    created when there is none (with the text's line ending). Changes that leave a value as it is
    change nothing. The result is verified by loading it back; when a line-level edit cannot be
    verified (flow-style block, anchors shared between keys...) the whole block is re-dumped.
    Raises NoteFormatError when the existing YAML is broken (the note is never rewritten) or a
    value cannot be stored and read back unchanged.
    """
    wanted = {key_str(k): None if v is None else plain(v) for k, v in changes.items()}
    block = find_block(text)
    if block is None:
        new = {k: v for k, v in wanted.items() if v is not None}
        if not new:
            return text
        eol = text.find("\n")
        nl = "\r\n" if eol > 0 and text[eol - 1] == "\r" else "\n"
        nl = "\r" if eol < 0 and "\r" in text else nl  # lone CRs: the classic-Mac text's own
        bom = BOM if text.startswith(BOM) else ""
        return bom + "---" + nl + dump(new).replace("\n", nl) + "---" + nl + text[len(bom):]
    yaml_text = text[block.yaml_start : block.yaml_end]
    # a lone-CR block is edited as LF lines (what `_edit` reads) and written back in CRs
    cr = block.newline == "\r" and "\n" not in yaml_text
    if cr:
        yaml_text = yaml_text.replace("\r", "\n")
    loaded = load(yaml_text)
    current = loaded.data
    todo = {
        k: v
        for k, v in wanted.items()
        if (k in current) != (v is not None)
        or (v is not None and canonical(current[k]) != canonical(v))
    }
    if not todo:
        return text
    expected = dict(current)
    for k, v in todo.items():
        if v is None:
            del expected[k]
        else:
            expected[k] = v
    body = text[block.body_start :]
    head, tail = text[: block.yaml_start], text[block.yaml_end :]
    new_yaml = _edit(yaml_text, loaded.root, todo, "\n" if cr else block.newline)
    if new_yaml is not None and cr:
        new_yaml = new_yaml.replace("\n", "\r")
    if new_yaml is None or not _reads_back(head + new_yaml + tail, expected, body):
        new_yaml = dump(expected).replace("\n", block.newline)  # only when the edit failed
        if not _reads_back(head + new_yaml + tail, expected, body):
            raise NoteFormatError("the new values would not read back unchanged from YAML")
    return head + new_yaml + tail
