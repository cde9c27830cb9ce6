"""Retrieval that can decline, through the real CLI: a search says whether anything relevant
was found, with its evidence under --explain, and `ask` answers "nothing in memory" instead of
padding with unrelated notes (issue 32, item 3)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.forks import run_cli

ROOT = Path(__file__).resolve().parents[2]


def rmh(*args: str) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env.update({"PYTHONPATH": str(ROOT), "RMH_EMBED_CACHE": ""})
    out = run_cli(args, env=env, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    doc: dict[str, object] = json.loads(out.stdout.splitlines()[-1])
    return doc


def test_search_and_ask_decline_on_an_absent_topic(tmp_path: Path) -> None:
    vault = tmp_path / "demo"
    subprocess.run([sys.executable, "-m", "harness", "demo", str(vault)], cwd=ROOT,
                   capture_output=True, check=True, timeout=300,
                   env={**os.environ, "PYTHONPATH": str(ROOT), "RMH_EMBED_CACHE": ""})
    for dense in ([], ["--no-dense"]):
        found = rmh("--vault", str(vault), "search", "who owns billing", "--json", "--explain",
                    *dense)
        assert found["relevant"] is True and found["hits"]
        absent = rmh("--vault", str(vault), "search", "melting point of tungsten", "--json",
                     "--explain", *dense)
        assert absent["relevant"] is False
        relevance = absent["relevance"]
        assert isinstance(relevance, dict) and relevance["gap"] < 0
        assert set(relevance["evidence"]) == {"dense", "coverage"}
    asked = rmh("--vault", str(vault), "ask", "melting point of tungsten", "--json")
    assert asked["notes"] == [] and asked["stop"] == "nothing relevant"
    assert "Nothing in memory" in str(asked["answer"])
    real = rmh("--vault", str(vault), "ask", "who owns billing", "--json")
    assert real["notes"] and real["stop"] != "nothing relevant"


def test_the_human_output_says_so(tmp_path: Path) -> None:
    vault = tmp_path / "demo"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RMH_EMBED_CACHE": ""}
    subprocess.run([sys.executable, "-m", "harness", "demo", str(vault)], cwd=ROOT,
                   capture_output=True, check=True, timeout=300, env=env)
    out = subprocess.run([sys.executable, "-m", "harness", "--vault", str(vault), "search",
                          "melting point of tungsten", "--no-dense", "--explain"], cwd=ROOT,
                         capture_output=True, text=True, check=True, timeout=300, env=env)
    assert out.stdout.startswith("nothing relevant found") and "relevance: " in out.stdout
