"""The query-dependent association channels (vault/retrieval/association.py) switched on in
rmh.toml `[search] weights`, through the real CLI: a session's search, read and citing write,
`rmh end-session`, then `rmh search --explain --json` shows the stage and, on the notes it
credited, the receipt naming the seeds that credited them."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.forks import run_cli

from .test_server_e2e import make_vault

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def rmh(root: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env["PYTHONPATH"] = str(ROOT)
    out = run_cli(["--vault", str(root), *args], env=env, cwd=ROOT, timeout=120, stdin=stdin)
    assert out.returncode == 0, out.stderr
    return out


def learn(root: Path) -> None:
    rmh(root, "init", "--no-dense")
    rmh(root, "search", "auth rewrite", "--session", "s1", "--no-dense")
    rmh(root, "read", "Project Atlas", "--session", "s1")
    rmh(root, "write", "answers/Owner", "--session", "s1", stdin="Per [[Project Atlas]].\n")
    rmh(root, "end-session", "s1")


def explain(root: Path, query: str) -> dict[str, object]:
    out = rmh(root, "search", query, "--json", "--explain", "--no-learn", "--no-dense")
    doc: dict[str, object] = json.loads(out.stdout)
    return doc


def test_association_is_off_by_default(tmp_path: Path) -> None:
    root = make_vault(tmp_path / "v")
    learn(root)
    doc = explain(root, "Caroline hiking")
    assert "association" not in doc["stages"]  # type: ignore[operator]
    assert all("association" not in h["receipt"] for h in doc["hits"])  # type: ignore[attr-defined]


def test_switched_on_it_credits_only_the_seed_neighbours(tmp_path: Path) -> None:
    root = make_vault(tmp_path / "v")
    (root / "rmh.toml").write_text(
        "[search]\nscope = 1\nweights = { couse = 1.0, spread = 1.0 }\n", encoding="utf-8")
    learn(root)
    doc = explain(root, "Caroline hiking")
    stage = doc["stages"]["association"]  # type: ignore[index]
    assert stage.startswith("ran (seeds 1;"), stage
    hits = {h["title"]: h for h in doc["hits"]}  # type: ignore[attr-defined]
    seed = hits["Caroline"]["id"]  # the one seed: this query's top hit
    assert doc["hits"][0]["title"] == "Caroline"  # type: ignore[index]
    credited = {t: h["receipt"]["association"] for t, h in hits.items()
                if "association" in h["receipt"]}
    assert "Project Atlas" in credited  # linked to the seed, warm from the session's read
    for title, entry in credited.items():
        assert entry["via"] == [seed], (title, entry)
    assert "Lunch" not in credited  # neither linked nor co-used with the seed
