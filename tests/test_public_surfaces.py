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


STUBBED = ("vault", "harness")  # roots whose surface is written once, in `__init__.pyi`
PRODUCT = ("harness", "sandbox", "rpc", "bench", "tests")


def stub_table(package: str = "vault") -> dict[str, tuple[str, str]]:
    """A package's surface as a type checker reads its `__init__.pyi`: public name -> (module,
    attr), a `Public = _Public` binding naming the import `_Public` under its public name."""
    imports: dict[str, tuple[str, str]] = {}
    public: dict[str, str] = {}  # `_Public` -> `Public`
    stub = ROOT / package / "__init__.pyi"
    for node in ast.parse(stub.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom):
            for a in node.names:
                imports[a.asname or a.name] = ("." * node.level + (node.module or ""), a.name)
        elif isinstance(node, ast.Assign):
            assert isinstance(node.value, ast.Name) and len(node.targets) == 1
            target = node.targets[0]
            assert isinstance(target, ast.Name) and node.value.id == f"_{target.id}"
            public[node.value.id] = target.id
    private = {n for n in imports if n.startswith("_")}
    assert private == set(public), "every `_Public` import is bound once, and only those"
    return {public.get(n, n): where for n, where in imports.items()}


@pytest.mark.parametrize("package", STUBBED)
def test_surface_is_written_once_in_its_stub(package: str) -> None:
    """The runtime table a root builds from `__init__.pyi` is the one a type checker reads (so
    the line reader in its `__init__.py` cannot drift from the stub), and every name loads."""
    root = importlib.import_module(package)  # the module itself, not its stub

    table = stub_table(package)
    assert table == root._LAZY
    assert root.__all__ == sorted(table)
    for name, (module, attr) in table.items():
        assert getattr(root, name) is getattr(importlib.import_module(module, package), attr)


@pytest.mark.parametrize("package", STUBBED)
def test_no_public_name_is_also_a_module(package: str) -> None:
    """Importing `pkg.name` binds `name` on the package to that module, so a public name that
    is also a module's name would be that module once anything imported it."""
    modules = {p.stem for p in (ROOT / package).glob("*.py")} | {
        p.parent.name for p in (ROOT / package).glob("*/__init__.py")}
    assert sorted(set(stub_table(package)) & modules) == []


def test_vault_surface_is_what_the_product_uses() -> None:
    """Every public name of vault is imported by the product or its tests (`from vault import
    X`): a name nobody outside vault uses is not part of the surface."""
    vault = importlib.import_module("vault")  # the module itself, not its stub

    used: set[str] = set()
    for top in PRODUCT:
        for path in (ROOT / top).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module == "vault" and not node.level:
                    used.update(a.name for a in node.names  # not a module of vault's
                                if not (ROOT / "vault" / a.name).with_suffix(".py").exists())
    assert sorted(set(vault.__all__) - used) == []
    assert sorted(used - set(vault.__all__)) == []
