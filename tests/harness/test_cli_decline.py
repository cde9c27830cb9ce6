"""Retrieval that can decline, through the real CLI: a search says whether anything relevant
was found, with its evidence under --explain, and `ask` answers "nothing in memory" instead of
padding with unrelated notes (issue 32, item 3)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.forks import run_cli

ROOT = Path(__file__).resolve().parents[2]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env.update({"PYTHONPATH": str(ROOT), "RMH_EMBED_CACHE": ""})
    return env


def rmh(*args: str) -> dict[str, object]:
    out = run_cli(args, env=_env(), cwd=ROOT)
    assert out.returncode == 0, out.stderr
    doc: dict[str, object] = json.loads(out.stdout.splitlines()[-1])
    return doc


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`rmh demo` once (a real process, the dense index built): each test takes a copy."""
    vault = tmp_path_factory.mktemp("decline") / "demo"
    subprocess.run([sys.executable, "-m", "harness", "demo", str(vault)], cwd=ROOT,
                   capture_output=True, check=True, timeout=300, env=_env())
    return vault


@pytest.fixture
def vault(demo: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(demo, tmp_path / "demo"))


def test_search_and_ask_decline_on_an_absent_topic(vault: Path) -> None:
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


def test_the_human_output_says_so(vault: Path) -> None:
    out = run_cli(["--vault", str(vault), "search", "melting point of tungsten", "--no-dense",
                   "--explain"], env=_env(), cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("nothing relevant found") and "relevance: " in out.stdout


def test_a_weekday_the_notes_say_counts_for_relevance(vault: Path) -> None:
    """The demo's own question: "on Monday" was read as a time and left out of the query's
    words, "broke" is in no note, so `ask` declined though the incident note says "On Monday
    ..."; a weekday nothing says still leaves an absent topic declined."""
    for dense in ([], ["--no-dense"]):
        found = rmh("--vault", str(vault), "search", "what broke on Monday?", "--json",
                    "--explain", *dense)
        assert found["relevant"] is True, found["relevance"]
        absent = rmh("--vault", str(vault), "search", "melting point of tungsten on Friday",
                     "--json", "--explain", *dense)
        assert absent["relevant"] is False, absent["relevance"]
    asked = rmh("--vault", str(vault), "ask", "what broke on Monday?", "--json")
    assert "Incidents/2026-03-02 auth outage.md" in str(asked["notes"])
    assert asked["stop"] != "nothing relevant"
