"""A courtesy AST check with friendly messages for code that the sandbox will refuse anyway.

Not a boundary (the kernel guards are): it exists so a model gets "use the vault functions"
instead of a PermissionError deep in a traceback. The escape suite runs with it switched off.

It refuses (severity "refuse", a LintError before the cell runs) only imports of modules whose
whole purpose the sandbox denies (processes, sockets, foreign calls: REFUSED_MODULES), where
the refusal saves the model a turn. Everything else it notices is a warning (severity "warn",
written above the cell's stderr, the cell still runs): other system modules, dunder access,
eval/open/getattr... Ordinary code such as `type(e).__name__` therefore always runs; the OS
sandbox, not this check, decides what it may do.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Literal

FORBIDDEN_MODULES = frozenset({
    "os", "sys", "subprocess", "socket", "ctypes", "importlib", "builtins", "multiprocessing",
    "pty", "signal", "shutil", "resource", "mmap", "fcntl", "posix", "gc", "inspect",
    "marshal", "pickle", "asyncio", "threading", "_thread", "urllib", "http", "ssl",
})
HARMLESS_DUNDERS = frozenset({"__name__", "__qualname__", "__doc__", "__module__", "__init__",
                              "__len__", "__str__", "__repr__", "__dict__", "__file__"})
REFUSED_MODULES = frozenset({"subprocess", "socket", "ctypes", "multiprocessing", "pty", "ssl",
                             "urllib", "http"})
FORBIDDEN_CALLS = frozenset({"eval", "exec", "compile", "__import__", "open", "globals",
                             "vars", "getattr", "setattr", "delattr", "breakpoint"})
# The longest cell checked. The check parses untrusted code in the supervisor, outside every
# rlimit and outside the deadline: a 1,000,000-character list literal (the REPL's MAX_CODE)
# raised `rmh serve`'s peak RSS from 55 to 540-560 MB and took ~3 s there, each exec. Up to
# this many characters the tree costs at most ~16 MB; a longer cell is not checked (the lint
# is advice, never a boundary).
MAX_CHECKED_CHARS = 32_768
MAX_WARNINGS = 20  # shown above a cell's stderr; the rest are counted


@dataclass(frozen=True)
class LintIssue:
    line: int
    col: int
    message: str
    severity: Literal["refuse", "warn"] = "warn"

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


def _issue(node: ast.AST, message: str, severity: Literal["refuse", "warn"] = "warn"
           ) -> LintIssue:
    return LintIssue(getattr(node, "lineno", 0), getattr(node, "col_offset", 0), message,
                     severity)


def warning_text(issues: list[LintIssue]) -> str:
    """The first MAX_WARNINGS warnings as lines for the top of a cell's stderr, then how many
    more there were: the text is added outside the output cap (a cell of 166,000 `a.__b`
    lines had 20 MB of warnings in its stderr, `stderr_truncated` false)."""
    warnings = [i for i in issues if i.severity == "warn"]
    text = "".join(f"lint warning (advice, not a refusal): {i}\n"
                   for i in warnings[:MAX_WARNINGS])
    if len(warnings) > MAX_WARNINGS:
        text += f"lint: {len(warnings) - MAX_WARNINGS} more warnings not shown\n"
    return text


def check(code: str) -> list[LintIssue]:
    """Issues in source order; [] for clean code and for a cell over MAX_CHECKED_CHARS. A
    syntax error is left to the worker, whose traceback is clearer."""
    if len(code) > MAX_CHECKED_CHARS:
        return []
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
                root = name.split(".")[0]
                if root in REFUSED_MODULES:
                    issues.append(_issue(node, f"import of {name!r} is not allowed{hint}",
                                         "refuse"))
                elif root in FORBIDDEN_MODULES:
                    issues.append(_issue(node, f"{name!r} has little use in the sandbox (no "
                                         f"host files, processes or network){hint}"))
        elif (isinstance(node, ast.Attribute) and node.attr.startswith("__")
              and node.attr not in HARMLESS_DUNDERS):
            issues.append(_issue(node, f"dunder attribute access ({node.attr}): the sandbox "
                                 "may refuse what it reaches"))
        elif (isinstance(node, ast.Name) and node.id.startswith("__")
              and node.id not in HARMLESS_DUNDERS):
            issues.append(_issue(node, f"dunder name {node.id}: the sandbox may refuse what "
                                 "it reaches"))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in FORBIDDEN_CALLS):
            issues.append(_issue(node, f"{node.func.id}() may be refused by the sandbox{hint}"))
    return sorted(issues, key=lambda i: (i.line, i.col, i.message))
