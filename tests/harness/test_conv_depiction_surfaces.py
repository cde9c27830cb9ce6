"""The NDM seed's depiction by the seed's rule on every surface: `rmh context`, `rmh exec`,
and `rmh serve` (JSON-RPC `vault.context` and the MCP `context` tool), with and without dense
search, at every budget that fits the three lines; and `context` on a vault of plain notes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from tests.forks import run_cli
from tests.harness.test_server_e2e import CHILD_ENV, REPO, Server
from vault import counted

pytestmark = pytest.mark.slow

QUESTION = "When was Alice's vase praised?"
LINES = [
    "[2024-05-01 10:00] Alice: I started a pottery class and made a vase.",
    "[2024-05-01 10:05] Bob: Carla is my teacher at the pottery class.",
    "[2024-05-08 18:00] Bob: Carla praised the vase you made, Alice.",
]
FITS = sum(len(line.split()) for line in LINES)
SEED = {"format": "rmh-conversation/1", "id": "seed", "sessions": [
    {"id": "S1", "date": "2024-05-01T10:00", "turns": [
        {"id": "t0", "speaker": "Alice", "text": "I started a pottery class and made a vase."},
        {"id": "t1", "speaker": "Bob", "text": "Carla is my teacher at the pottery class.",
         "date": "2024-05-01T10:05"},
        {"id": "t2", "speaker": "Bob", "text": "Carla praised the vase you made, Alice.",
         "date": "2024-05-08T18:00"},
        {"id": "t3", "speaker": "Bob", "text": "Last month I sold my bike.",
         "date": "2024-05-09T09:00"}]}]}


# The seed's fifth turn (step 5): "she" resolves to Carla and "it" stays open; the turn shares
# only the stop word "was" with the question, so neither it nor the bike turn before it is shown.
FIFTH = {"id": "t4", "speaker": "Alice", "text": "She said it was my best work.",
         "date": "2024-05-10T12:00"}


@pytest.fixture(scope="module", params=[4, 5], ids=["four-turns", "five-turns"])
def seed_vault(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    tmp = tmp_path_factory.mktemp("seed")
    vault, conv = tmp / "v", tmp / "seed.json"
    doc = json.loads(json.dumps(SEED))
    if request.param == 5:
        doc["sessions"][0]["turns"].append(FIFTH)
    conv.write_text(json.dumps(doc), encoding="utf-8")
    assert main(["--vault", str(vault), "init"]) == 0
    assert main(["--vault", str(vault), "ingest", str(conv)]) == 0
    return vault


def _cli_context(vault: Path, budget: int, *extra: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
    env["PYTHONPATH"] = str(REPO)
    out = run_cli(["--vault", str(vault), "context", QUESTION, "--budget", str(budget),
                   "--json", *extra], env=env, cwd=REPO)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert all(ln["reason"] in ("hit", "before") for ln in doc["lines"])
    return list(doc["text"].splitlines())


@pytest.mark.parametrize("dense", [False, True])
def test_cli_shows_the_three_lines_at_every_budget_that_fits(seed_vault: Path,
                                                             dense: bool) -> None:
    extra = () if dense else ("--no-dense",)
    budgets = (FITS, 60, 1000) if dense else (FITS, FITS + 1, 60, 100, 1000)
    for budget in budgets:
        assert _cli_context(seed_vault, budget, *extra) == LINES, budget


def test_a_named_time_connects_only_what_the_search_found_relevant(seed_vault: Path) -> None:
    """A question naming a day connects that day's turns, but not when the search says its
    topic is nowhere in memory (the whole of May is no answer about tungsten)."""
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
    env["PYTHONPATH"] = str(REPO)

    def context(question: str) -> dict[str, Any]:
        out = run_cli(["--vault", str(seed_vault), "context", question, "--budget", "60",
                       "--json", "--no-dense"], env=env, cwd=REPO)
        assert out.returncode == 0, out.stderr
        return dict(json.loads(out.stdout))

    absent = context("What is the melting point of tungsten in May 2024?")
    assert absent["relevant"] is False and absent["lines"] == []
    found = context("What did Carla praise on 8 May 2024?")
    assert "[2024-05-08 18:00] Bob: Carla praised the vase you made, Alice." in found["text"]
    assert "bike" not in found["text"]


def test_exec_shows_the_three_lines(seed_vault: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
    env["PYTHONPATH"] = str(REPO)
    code = f"r = context({QUESTION!r}, 60)\nprint(json.dumps(r['text']))"
    out = run_cli(["--vault", str(seed_vault), "exec", "-c", "import json\n" + code], env=env,
                  cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]).splitlines() == LINES


def _tool_doc(result: dict[str, Any]) -> Any:
    if "structuredContent" in result:
        return result["structuredContent"]
    return json.loads(result["content"][0]["text"])


def test_served_json_rpc_and_mcp_show_the_three_lines(seed_vault: Path, tmp_path: Path) -> None:
    srv = Server(seed_vault, tmp_path)
    try:
        for budget in (FITS, 60, 1000):
            out = srv.call("vault.context", {"query": QUESTION, "budget_words": budget})
            assert out["result"]["text"].splitlines() == LINES
        srv.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "t", "version": "0"}}, rid=2)
        srv.send("notifications/initialized")
        for budget in (FITS, 60, 1000):
            out = srv.call("tools/call", {"name": "context", "arguments": {
                "query": QUESTION, "budget_words": budget}}, rid=3)
            assert _tool_doc(out["result"])["text"].splitlines() == LINES
    finally:
        assert srv.finish() == 0


def _plain_vault(tmp_path: Path, first: tuple[str, str]) -> Path:
    """An initialised vault of `first` (name, text) and a garden note, dense off."""
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / first[0]).write_text(first[1], encoding="utf-8")
    (vault / "garden.md").write_text("Tomatoes need sun and water.\n", encoding="utf-8")
    assert main(["--vault", str(vault), "init", "--no-dense"]) == 0
    return vault


def _context(vault: Path, question: str, budget: int,
             capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """`rmh context QUESTION --budget B --no-dense --json`, in process."""
    capsys.readouterr()
    assert main(["--vault", str(vault), "context", question, "--budget", str(budget),
                 "--no-dense", "--json"]) == 0
    return dict(json.loads(capsys.readouterr().out))


def test_context_on_a_vault_of_plain_notes(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    vault = _plain_vault(tmp_path, ("billing.md", "---\ndate: 2024-03-02\n---\nThe billing "
                                    "service runs nightly invoices in eu-west-1. Alice owns it.\n"))
    doc = _context(vault, "where do billing invoices run", 40, capsys)
    assert doc["text"].startswith("[2024-03-02] billing.md: The billing service runs nightly")
    assert doc["words"] <= 40 and [ln["note"] for ln in doc["lines"]] == ["billing.md"]
    assert _context(vault, "billing", 5, capsys)["words"] <= 5


def test_context_finds_a_plain_note_by_its_alias(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A question that is a note's alias ("Central Station") shares no word with its text:
    the alias names the note, as the search reads it, so context shows its passage."""
    vault = _plain_vault(tmp_path, ("Hauptbahnhof.md", "---\ndate: 2024-03-02\naliases: "
                                    "[Central Station]\n---\nThe main hub where the trains "
                                    "from the north arrive.\n"))
    doc = _context(vault, "Central Station", 40, capsys)
    assert [ln["note"] for ln in doc["lines"]] == ["Hauptbahnhof.md"], doc
    assert "garden" not in json.dumps(_context(vault, "Central Heating", 40, capsys))


@pytest.mark.parametrize("budget", [1, 5, 9])
def test_a_budget_under_every_line_says_so_not_that_nothing_is_relevant(
        seed_vault: Path, budget: int) -> None:
    """CONV5: each of the seed's lines has 10+ words; under that, `rmh context` printed
    "Nothing in memory is relevant to this question." (relevant false) for the seed question."""
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
    env["PYTHONPATH"] = str(REPO)
    args = ["--vault", str(seed_vault), "context", QUESTION, "--budget", str(budget),
            "--no-dense"]
    doc = json.loads(run_cli([*args, "--json"], env=env, cwd=REPO).stdout)
    assert doc["relevant"] is True and doc["lines"] == [] and doc["candidates"] >= 1
    out = run_cli(args, env=env, cwd=REPO)
    assert out.returncode == 0 and out.stdout.startswith(
        f"(no relevant line fits in {counted(budget, 'word')}: "), out.stdout
