"""Scripted source moves for refactor-D/apply.sh (issue 28): re-appliable after a merge.

    pyedit.py move SRC DST NAME...        move top-level definitions (with the comment lines
                                          right above them) from SRC to the end of DST (to
                                          before its first def or class: DST@first)
    pyedit.py methods SRC CLASS DST NAME...  move methods of CLASS to the class ending DST
    pyedit.py drop SRC SCRATCH NAME...    delete top-level definitions (through a scratch file)
    pyedit.py reimport OLD NEW NAME...    every `from OLD import NAME` in the repo (absolute or
                                          relative) imports NAME from NEW instead
    pyedit.py rename OLD NEW FILE...      rename an identifier (whole words, code only)
"""

from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOPS = ("vault", "harness", "rpc", "sandbox", "bench", "tests", "prompts")


def _span(lines: list[str], node: ast.stmt) -> tuple[int, int]:
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
    while first > 0 and lines[first - 1].startswith("#"):
        first -= 1
    return first, node.end_lineno or node.lineno


def methods(src: Path, cls: str, dst: Path, names: list[str]) -> None:
    """Move methods of class `cls` in `src` (with the comment lines right above each) to the
    end of `dst`, whose last statement is the class that receives them."""
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    body = next(n for n in ast.parse("".join(lines)).body
                if isinstance(n, ast.ClassDef) and n.name == cls).body
    nodes = {n.name: n for n in body if isinstance(n, ast.FunctionDef)}
    if missing := sorted(set(names) - set(nodes)):
        raise SystemExit(f"{src}: {cls} has no {missing}")
    spans = []
    for name in names:
        node = nodes[name]
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
        while first > 0 and lines[first - 1].lstrip().startswith("#"):
            first -= 1
        spans.append((first, node.end_lineno or node.lineno))
    blocks = ["".join(lines[a:b]).strip("\n") + "\n" for a, b in spans]
    for a, b in sorted(spans, reverse=True):
        del lines[a:b]
    src.write_text(re.sub(r"\n(\n\s*\n)+(?=    \S)", "\n\n", "".join(lines)), encoding="utf-8")
    out = dst.read_text(encoding="utf-8").rstrip("\n") + "\n"
    dst.write_text(out + "".join("\n" + b for b in blocks), encoding="utf-8")


def _names(node: ast.stmt) -> set[str]:
    if isinstance(node, ast.FunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.Assign):
        return {t.id for t in node.targets if isinstance(t, ast.Name)}
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return {node.target.id}
    return set()


def move(src: Path, dst: Path, names: list[str], first: bool = False) -> None:
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    spans = [_span(lines, n) for n in ast.parse("".join(lines)).body if _names(n) & set(names)]
    found = {x for n in ast.parse("".join(lines)).body for x in _names(n)} & set(names)
    if found != set(names):
        raise SystemExit(f"{src}: not found: {sorted(set(names) - found)}")
    tree = [n for n in ast.parse("".join(lines)).body if _names(n) & set(names)]
    blocks = ["".join(lines[a:b]).rstrip("\n") + "\n" for a, b in spans]
    assign = [isinstance(n, ast.Assign | ast.AnnAssign) for n in tree]
    seps = ["" if a and k and assign[k - 1] else "\n" if a else "\n\n"
            for k, a in enumerate(assign)]
    for a, b in reversed(spans):
        del lines[a:b]
    text = re.sub(r"\n{4,}", "\n\n\n", "".join(lines))
    src.write_text(text, encoding="utf-8")
    moved = "".join(sep + b for sep, b in zip(seps, blocks, strict=True))
    out = dst.read_text(encoding="utf-8")
    if not first:
        dst.write_text(out.rstrip("\n") + "\n" + moved, encoding="utf-8")
        return
    dst_lines = out.splitlines(keepends=True)
    at = min(_span(dst_lines, n)[0] for n in ast.parse(out).body
             if isinstance(n, ast.FunctionDef | ast.ClassDef))
    head = "".join(dst_lines[:at]).rstrip("\n") + "\n"
    dst.write_text(head + "\n\n" + moved.lstrip("\n") + "\n\n" + "".join(dst_lines[at:]),
                   encoding="utf-8")


def _module(path: Path) -> list[str]:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def _absolute(path: Path, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    pkg = _module(path) if path.name == "__init__.py" else _module(path)[:-1]
    base = pkg[: len(pkg) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _relative(path: Path, target: str) -> str:
    pkg = _module(path) if path.name == "__init__.py" else _module(path)[:-1]
    parts = target.split(".")
    common = 0
    while common < min(len(pkg), len(parts)) and pkg[common] == parts[common]:
        common += 1
    return "." * (len(pkg) - common + 1) + ".".join(parts[common:])


def _statement(module: str, aliases: list[ast.alias], indent: str) -> str:
    names = [a.name + (f" as {a.asname}" if a.asname else "") for a in aliases]
    line = f"{indent}from {module} import {', '.join(names)}\n"
    if len(line) <= 101:
        return line
    body = "".join(f"{indent}    {n},\n" for n in names)
    return f"{indent}from {module} import (\n{body}{indent})\n"


def reimport(old: str, new: str, names: list[str]) -> None:
    for path in sorted(p for top in TOPS for p in (ROOT / top).rglob("*.py")):
        src = path.read_text(encoding="utf-8")
        lines = src.splitlines(keepends=True)
        edits: list[tuple[int, int, str]] = []
        for node in ast.walk(ast.parse(src)):
            if not isinstance(node, ast.ImportFrom) or _absolute(path, node) != old:
                continue
            moved = [a for a in node.names if a.name in names]
            if not moved:
                continue
            kept = [a for a in node.names if a.name not in names]
            indent = re.match(r"\s*", lines[node.lineno - 1]).group(0)  # type: ignore[union-attr]
            target = _relative(path, new) if node.level else new
            text = _statement(target, moved, indent)
            if kept:
                text = _statement(lines[node.lineno - 1].split()[1], kept, indent) + text
            edits.append((node.lineno - 1, node.end_lineno or node.lineno, text))
        for a, b, text in sorted(edits, reverse=True):
            lines[a:b] = [text]
        if edits:
            path.write_text("".join(lines), encoding="utf-8")


def rename(old: str, new: str, files: list[str]) -> None:
    for name in files:
        path = Path(name)
        src = path.read_text(encoding="utf-8")
        toks = list(tokenize.generate_tokens(io.StringIO(src).readline))
        lines = src.splitlines(keepends=True)
        for tok in reversed(toks):
            (row, col), (end_row, end) = tok.start, tok.end
            if tok.type == tokenize.NAME and tok.string == old:
                lines[row - 1] = lines[row - 1][:col] + new + lines[row - 1][end:]
            elif (tok.type == tokenize.STRING and row == end_row
                  and re.match(r"[rRbB]*[fF]", tok.string)):  # names inside f-string braces
                text = re.sub(r"\{[^{}]*\}", lambda m: re.sub(
                    rf"(?<![\w.]){re.escape(old)}\b", new, m.group(0)), tok.string)
                lines[row - 1] = lines[row - 1][:col] + text + lines[row - 1][end:]
        path.write_text("".join(lines), encoding="utf-8")


if __name__ == "__main__":
    cmd, *args = sys.argv[1:]
    if cmd == "move":
        dst, _, where = args[1].partition("@")
        move(Path(args[0]), Path(dst), args[2:], first=where == "first")
    elif cmd == "methods":
        methods(Path(args[0]), args[1], Path(args[2]), args[3:])
    elif cmd == "drop":
        move(Path(args[0]), Path(args[1]), args[2:])
        Path(args[1]).unlink()
    elif cmd == "reimport":
        reimport(args[0], args[1], args[2:])
    elif cmd == "rename":
        rename(args[0], args[1], args[2:])
    else:
        raise SystemExit(__doc__)
