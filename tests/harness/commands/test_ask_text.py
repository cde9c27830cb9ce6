"""`rmh ask`'s text says why a loop is not resolved: the words of the question no note found
holds. "resolved" is every content term of the question covered by the notes found
(harness/ask.py), not a verdict on the answer: before NEWUSER11 (session 40) a right answer
stood above a bare `resolved: no (stop: no new notes)`, which a user reads as "unsure". Real
`rmh` processes on a real vault, offline (the extractive answerer)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.harness.test_cli_notes import rmh

NOTES = {"Postgres decision.md": "We chose Postgres over DynamoDB because routing needs joins.\n",
         "Dashboards.md": "Grafana with Prometheus for dashboards and alerts.\n"}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    root.mkdir()
    for name, text in NOTES.items():
        (root / name).write_text(text, encoding="utf-8")
    assert rmh("init", str(root), "--no-dense").returncode == 0
    return root


@pytest.mark.parametrize("question, missing", [
    ("Why did we pick Postgres instead of DynamoDB?", ["pick"]),
    ("Why did the zebracorn team pick Grafana?", ["zebracorn", "pick"]),
])
def test_an_unresolved_answer_names_the_words_no_note_holds(vault: Path, question: str,
                                                            missing: list[str]) -> None:
    doc = json.loads(rmh("--vault", str(vault), "ask", question, "--json", "--no-dense",
                         env={"RMH_MODEL": ""}).stdout)
    assert doc["resolved"] is False
    said = [t for step in doc["trace"] if step["resolved"] is False
            for t in step["missing_terms"]]
    assert set(missing) <= set(said), said
    out = rmh("--vault", str(vault), "ask", question, "--no-dense", env={"RMH_MODEL": ""})
    assert out.returncode == 0, out.stderr
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("resolved: "))
    assert line.startswith("resolved: no (no note found holds "), line
    for term in missing:
        assert repr(term) in line, line
    assert f"stop: {doc['stop']});" in line


def test_a_resolved_answer_says_only_yes(vault: Path) -> None:
    out = rmh("--vault", str(vault), "ask", "Why Postgres over DynamoDB?", "--no-dense",
              env={"RMH_MODEL": ""})
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("resolved: "))
    assert line.startswith("resolved: yes (stop: "), line
