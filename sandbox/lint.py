"""A courtesy AST check with friendly messages for code that the sandbox will refuse anyway.

Not a boundary (the kernel guards are): it exists so a model gets "use the vault functions"
instead of a PermissionError deep in a traceback. The escape suite runs with it switched off.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

FORBIDDEN_MODULES = frozenset({
    "os", "sys", "subprocess", "socket", "ctypes", "importlib", "builtins", "multiprocessing",
    "pty", "signal", "shutil", "resource", "mmap", "fcntl", "posix", "gc", "inspect",
    "marshal", "pickle", "asyncio", "threading", "_thread", "urllib", "http", "ssl",
})
FORBIDDEN_CALLS = frozenset({"eval", "exec", "compile", "__import__", "open", "globals",
                             "vars", "getattr", "setattr", "delattr", "breakpoint"})


@dataclass(frozen=True)
class LintIssue:
    line: int
    col: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


def _issue(node: ast.AST, message: str) -> LintIssue:
    return LintIssue(getattr(node, "lineno", 0), getattr(node, "col_offset", 0), message)


def check(code: str) -> list[LintIssue]:
    """Issues in source order; [] for clean code. A syntax error is left to the worker, whose
    traceback is clearer."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    hint = "; use the vault functions (help() lists them) instead"
    issues: list[LintIssue] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [
                node.module or ""]
            for name in names:
                if name.split(".")[0] in FORBIDDEN_MODULES:
                    issues.append(_issue(node, f"import of {name!r} is not allowed{hint}"))
        elif isinstance(node, ast.Attribute) and node.attr.startswith("__"):
            issues.append(_issue(node, f"dunder attribute access ({node.attr}) is not allowed"))
        elif isinstance(node, ast.Name) and node.id.startswith("__") and node.id != "__name__":
            issues.append(_issue(node, f"dunder name {node.id} is not allowed"))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in FORBIDDEN_CALLS):
            issues.append(_issue(node, f"{node.func.id}() is not allowed{hint}"))
    return sorted(issues, key=lambda i: (i.line, i.col, i.message))
