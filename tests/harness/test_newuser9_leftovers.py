"""A new user's leftovers of session 38 (NOTES-NEWUSER9.md), each through the real CLI or a real
`rmh serve`: a count of one is singular ("(1 notes)", "1 sessions" before); `rmh list` with
no argument says how many folders it did not list (it listed the root's notes alone, with no
hint that folders exist); JSON-RPC `session.end` takes the `session` that `session.start`
took (refused before as an unexpected parameter), and refuses another id clearly, leaving
the session open."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from tests.forks import run_cli

ROOT = Path(__file__).resolve().parents[2]
ONE = {"format": "rmh-conversation/1", "id": "ab", "sessions": [
    {"id": "s1", "date": "2024-05-01T10:00", "turns": [
        {"speaker": "Alice", "text": "I started a pottery class."}]}]}


def test_a_count_of_one_is_singular(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault, conv = tmp_path / "v", tmp_path / "c.json"
    vault.mkdir()
    (vault / "Only.md").write_text("# Only\nThe one note.\n", encoding="utf-8")
    conv.write_text(json.dumps(ONE), encoding="utf-8")
    assert main(["--vault", str(vault), "init", "--no-dense"]) == 0
    assert "(1 note, 0 chunks embedded; dense skipped)" in capsys.readouterr().out  # 1 notes
    assert main(["--vault", str(vault), "ingest", str(conv)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ingested 1 conversation: 1 turn, 1 session, "), out  # 1 sessions


def test_list_says_how_many_folders_it_does_not_list(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = tmp_path / "v"
    for path in ("Top.md", "a/A1.md", "a/deep/A2.md", "b/B1.md"):
        (vault / path).parent.mkdir(parents=True, exist_ok=True)
        (vault / path).write_text(f"# {Path(path).stem}\n", encoding="utf-8")
    assert main(["--vault", str(vault), "init", "--no-dense"]) == 0
    capsys.readouterr()

    def listed(*args: str) -> str:
        assert main(["--vault", str(vault), "list", *args]) == 0
        return capsys.readouterr().out

    assert listed().splitlines() == [  # main: "Top.md" alone
        "Top.md", "(and 2 folders at the top of the vault: `rmh list folders` lists them)"]
    assert listed("--folder", "a").splitlines() == [
        "a/A1.md", "(and 1 folder in a: `rmh list folders --folder a` lists them)"]
    assert listed("--folder", "b").splitlines() == ["b/B1.md"]  # no folder in it: no hint
    assert json.loads(listed("notes", "--json"))["folders"] == 2
    (vault / "Top.md").unlink()
    assert listed().splitlines() == [
        "(no notes at the top of the vault; 2 folders: `rmh list folders` lists them)"]


def _frame(rid: int, method: str, **params: Any) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}) + "\n"


def test_session_end_takes_the_id_session_start_took(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "Alice.md").write_text("# Alice\nAlice owns billing.\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env.update({"PYTHONPATH": str(ROOT), "HOME": str(tmp_path)})
    assert run_cli(["--vault", str(vault), "init", "--no-dense"], env=env, cwd=ROOT).returncode == 0
    proc = run_cli(["--vault", str(vault), "serve", "--no-dense"], env=env, cwd=ROOT,
                   stdin=_frame(1, "session.start", session="nu9")
                   + _frame(2, "session.end", session="another")
                   + _frame(3, "session.end", session="nu9", answer="Alice owns billing."),
                   timeout=120)
    assert proc.returncode == 0, proc.stderr
    answers = {m["id"]: m for m in map(json.loads, proc.stdout.splitlines())}
    assert answers[1]["result"]["session"] == "nu9"
    refused = answers[2]["error"]  # another id: refused, the session left open
    assert refused["code"] == -32041, refused
    assert "'another' is not open here" in refused["data"]["reason"], refused
    assert "'nu9'" in refused["data"]["reason"], refused
    assert answers[3]["result"]["session"] == "nu9", answers[3]  # main: invalid params
