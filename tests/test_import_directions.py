"""DESIGN.md §3: harness -> {vault, sandbox, rpc}; sandbox -> {rpc}; vault and rpc -> nothing of
ours; other packages import only a package's root, never its internals."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OURS = ("vault", "harness", "rpc", "sandbox", "prompts")
ALLOWED: dict[str, set[str]] = {
    "harness": {"vault", "sandbox", "rpc", "prompts"},
    "sandbox": {"rpc"},
    "vault": set(),
    "rpc": set(),
    "prompts": set(),
}


def imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


def test_import_directions() -> None:
    violations: list[str] = []
    for pkg in OURS:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            for name in imports(path):
                top = name.split(".")[0]
                if top not in OURS or top == pkg:
                    continue
                if top not in ALLOWED[pkg]:
                    violations.append(f"{rel}: {pkg} must not import {name}")
                elif "." in name:
                    violations.append(f"{rel}: imports internals {name}; use `from {top} import`")
    assert violations == []


def test_the_check_sees_violations(tmp_path: Path) -> None:
    bad = tmp_path / "x.py"
    bad.write_text("import harness.cli\nfrom vault.core import Vault\n", encoding="utf-8")
    assert imports(bad) == ["harness.cli", "vault.core"]
