"""Each package's `__all__` is honest: every listed name exists, none is listed twice, and
every public name the package root imports or defines is listed (so `from pkg import *` and
the documented surface are the same thing)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = sorted(
    ".".join(p.parent.relative_to(ROOT).parts)
    for top in ("vault", "harness", "rpc", "sandbox", "bench")
    for p in (ROOT / top).rglob("__init__.py")
)


def bound_names(init: Path) -> set[str]:
    """Public names the root binds at module level: imports, defs, classes, assignments."""
    names: set[str] = set()
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom | ast.Import):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return {n for n in names if not n.startswith("_") and n != "annotations"}


@pytest.mark.parametrize("package", PACKAGES)
def test_all_is_honest(package: str) -> None:
    module = importlib.import_module(package)
    listed = list(getattr(module, "__all__", []))
    assert len(listed) == len(set(listed)), "a name is listed twice"
    assert [n for n in listed if not hasattr(module, n)] == []
    init = ROOT / Path(*package.split(".")) / "__init__.py"
    assert sorted(bound_names(init) - set(listed) - {"TYPE_CHECKING", "importlib", "Any"}) == []
    lazy = getattr(module, "_LAZY", None)  # a root that loads its names on first use
    if lazy is not None:
        assert sorted(lazy) == sorted(listed)
