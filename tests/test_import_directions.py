"""DESIGN.md §3: harness -> {vault, sandbox, rpc}; sandbox -> {rpc}; vault and rpc ->
nothing of ours; bench -> the public roots of vault, rpc, sandbox and harness (bench registers
`rmh bench` itself: harness.extensions); other packages import
only a package's root, never its internals; and no import cycle anywhere, between modules of
any package (bench included)."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OURS = ("vault", "harness", "rpc", "sandbox", "prompts", "bench")
ALLOWED: dict[str, set[str]] = {
    "harness": {"vault", "sandbox", "rpc", "prompts"},
    "sandbox": {"rpc"},
    "vault": set(),
    "rpc": set(),
    "prompts": set(),
    "bench": {"vault", "rpc", "sandbox", "harness"},  # bench registers `rmh bench`
}
# White-box tools, named one by one: two profilers rebind the stage (and build step) functions
# the pipeline calls and an IVF microbenchmark drives the dense layout's store; all must name
# vault's internals.
WHITE_BOX = {"bench/profile_search.py", "bench/profile_prepare.py", "bench/bench_ivf_scan.py",
             "bench/profile_noop.py", "bench/bench_removal_derived.py",
             "bench/phase_cpu.py"}  # times a cold search's phases by rebinding them


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imported(path: Path) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(absolute module, names imported from it) for every import in the file, at any depth
    (function-level and TYPE_CHECKING imports count: a cycle is a cycle)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    pkg = module_name(path).split(".") if path.is_relative_to(ROOT) else [path.stem]
    if path.name != "__init__.py":
        pkg = pkg[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, ()
        elif isinstance(node, ast.ImportFrom):
            names = tuple(a.name for a in node.names)
            if node.level == 0:
                yield node.module or "", names
            else:
                base = pkg[: len(pkg) - (node.level - 1)]
                yield ".".join([*base, *([node.module] if node.module else [])]), names


def imports(path: Path) -> list[str]:
    return [name for name, _ in imported(path)]


def sources() -> list[Path]:
    return sorted(p for pkg in OURS for p in (ROOT / pkg).rglob("*.py"))


def graph() -> dict[str, set[str]]:
    """Module -> the modules of ours it imports (`from pkg import mod` names a module too)."""
    mods = {module_name(p): p for p in sources()}
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        for target, names in imported(path):
            found = {f"{target}.{n}" for n in names if f"{target}.{n}" in mods}
            if target in mods and (not names or len(found) < len(names)):
                found.add(target)
            edges[mod] |= found - {mod}
    return edges


def cycles(edges: Mapping[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan 1972), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(out)


def test_import_directions() -> None:
    violations: list[str] = []
    for path in sources():
        rel = path.relative_to(ROOT).as_posix()
        pkg = rel.split("/")[0]
        for name in imports(path):
            top = name.split(".")[0]
            if top not in OURS or top == pkg:
                continue
            if top not in ALLOWED[pkg]:
                violations.append(f"{rel}: {pkg} must not import {name}")
            elif "." in name and rel not in WHITE_BOX:
                violations.append(f"{rel}: imports internals {name}; use `from {top} import`")
    assert violations == []


def test_no_import_cycles() -> None:
    assert cycles(graph()) == []


# vault's floors, lowest first: a module imports only modules of its own floor or below
# (TYPE_CHECKING and function-level imports included). The facade floor is vault's top-level
# modules; the package root (`vault/__init__.py`) names the public surface and stands above.
VAULT_FLOORS = ("errors", "notes", "storage", "learning", "retrieval", "facade", "conversation")
FACADE = {"core", "parts", "writes", "reads", "landing", "erasure", "erasure_steps",
          "archive_writes"}
# beside errors: the cooperative stop every floor may check, the map of positions after
# a removal, which every floor that keeps positions follows, the typed error an untyped
# OSError or SQLite error stands for (the boundary's storage_error), and integer set
# operations without numpy's set routines (int_arrays: the shift and every floor use them);
# a count said in words (plural: errors and every floor's reports use it), what a full disk
# looks like (full_disk: the store, the index and the ledger ask it), whether a folder has room
# for a block (room: full_disk reads a write's "disk I/O error" by it, the index asks it)
GROUND = {"cancel", "shift", "untyped_errors", "int_arrays", "plural", "full_disk", "room"}


def vault_floor(module: str) -> int | None:
    """The floor of a vault module (None: the package root or not vault's)."""
    parts = module.split(".")
    if parts[0] != "vault" or len(parts) == 1:
        return None
    room = "facade" if parts[1] in FACADE else "errors" if parts[1] in GROUND else parts[1]
    assert room in VAULT_FLOORS, f"{module}: on no floor (add it to VAULT_FLOORS or FACADE)"
    return VAULT_FLOORS.index(room)


def floor_violations(edges: Mapping[str, set[str]]) -> list[str]:
    out = []
    for mod, targets in sorted(edges.items()):
        low = vault_floor(mod)
        for target in sorted(targets):
            high = vault_floor(target)
            if low is not None and high is not None and high > low:
                out.append(f"{mod} ({VAULT_FLOORS[low]}) imports {target} ({VAULT_FLOORS[high]})")
    return out


def test_every_floor_of_vault_points_down() -> None:
    assert floor_violations(graph()) == []


def test_the_checks_see_violations(tmp_path: Path) -> None:
    bad = tmp_path / "x.py"
    bad.write_text("import harness.cli\nfrom vault.core import Vault\n", encoding="utf-8")
    assert imports(bad) == ["harness.cli", "vault.core"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    assert floor_violations({"vault.notes.links": {"vault.storage.index", "vault.errors"},
                             "vault.core": {"vault.conversation.ingest"},
                             "vault": {"vault.conversation"}}) == [
        "vault.core (facade) imports vault.conversation.ingest (conversation)",
        "vault.notes.links (notes) imports vault.storage.index (storage)"]


def test_ground_modules_re_export_nothing() -> None:
    """A ground module is asked by every floor: each name is imported from the module that
    defines it, so who depends on what shows in the imports (session 41's index took
    room.py's `no_space` through full_disk.py, which only re-exported it)."""
    for name in sorted(GROUND):
        tree = ast.parse((ROOT / "vault" / f"{name}.py").read_text(encoding="utf-8"))
        passed_on = [f"{name}.py re-exports {a.name} from {node.module}"
                     for node in tree.body if isinstance(node, ast.ImportFrom)
                     for a in node.names if a.asname is not None and a.asname == a.name]
        assert passed_on == []
