"""`rmh status` says whether a reranker is plugged in, and which: a user who set `[rerank]
model_dir` sees its folder (resolved from rmh.toml's), `top_n` and `keep`; without one, how to
plug one in (it said nothing of the stage either way)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.forks import run_cli
from tests.vault.retrieval.test_rerank import build_model

ROOT = Path(__file__).resolve().parents[2]


def rmh(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("RMH_VAULT", "RMH_CONFIG", "RMH_RERANK_MODEL")}
    env["PYTHONPATH"] = str(ROOT)
    return run_cli(["--vault", str(root), *args], env=env, cwd=ROOT, timeout=180)


def test_status_names_the_configured_reranker(tmp_path: Path) -> None:
    root = tmp_path / "v"
    root.mkdir()
    (root / "A.md").write_text("alpha note about rollbacks\n", "utf-8")
    assert rmh(root, "init", "--no-dense").returncode == 0
    off = rmh(root, "status", "--no-dense")
    assert off.returncode == 0, off.stderr
    assert "rerank      off: no model ([rerank] model_dir or RMH_RERANK_MODEL)" in off.stdout
    (root / "models" / "rr").mkdir(parents=True)
    build_model(root / "models" / "rr")
    (root / "rmh.toml").write_text('[rerank]\nmodel_dir = "models/rr"\ntop_n = 5\nkeep = 3\n',
                                   "utf-8")
    on = rmh(root, "status", "--no-dense")
    assert on.returncode == 0, on.stderr
    assert f"rerank      {root / 'models' / 'rr'} (top 5, keep 3)" in on.stdout.splitlines()
    doc = json.loads(rmh(root, "status", "--no-dense", "--json").stdout)
    assert doc["rerank"] == {"model_dir": str(root / "models" / "rr"), "top_n": 5, "keep": 3}
