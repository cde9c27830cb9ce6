"""`rmh conversation stability|note|end-session|demote` through the real CLI entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main

SEED = {"format": "rmh-conversation/1", "id": "seed", "sessions": [
    {"id": "S1", "date": "2024-05-01T10:00", "turns": [
        {"id": "t0", "speaker": "Alice", "text": "I started a pottery class and made a vase.",
         "entities": ["pottery class", "vase"]},
        {"id": "t1", "speaker": "Bob", "text": "Carla is my teacher at the pottery class.",
         "entities": ["Carla", "my teacher", "pottery class"]},
        {"id": "t2", "speaker": "Bob", "text": "Carla praised the vase you made, Alice.",
         "date": "2024-05-08T18:00", "entities": ["Carla", "Alice's vase", "Alice"]},
        {"id": "t3", "speaker": "Bob", "text": "Last month I sold my bike.",
         "date": "2024-05-09T09:00", "entities": ["my bike"]}]}]}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_stability_prints_jaccard_and_the_differing_pairs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault, conv = str(tmp_path / "v"), tmp_path / "seed.json"
    conv.write_text(json.dumps(SEED), encoding="utf-8")
    assert run(capsys, "--vault", vault, "init")[0] == 0
    assert run(capsys, "--vault", vault, "ingest", str(conv))[0] == 0
    code, out = run(capsys, "--vault", vault, "conversation", "stability", "seed",
                    "--file", str(conv), "--json")
    doc = json.loads(out)
    assert code == 0 and doc["mode"] == "supplied" and doc["jaccard"] == pytest.approx(2 / 3)
    assert doc["differing"] == [{"run": "B", "ticks": [0, 2], "turns": ["t0", "t2"],
                                 "shared": ["vase"]}]
    code, out = run(capsys, "--vault", vault, "conversation", "stability", "seed")
    assert code == 0 and "Jaccard J = " in out and "only A: t0 - t1" in out  # from the notes
    assert main(["--vault", vault, "conversation", "stability", "nope"]) == 1


def test_working_notes_end_session_then_demote(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = str(tmp_path / "v")
    assert run(capsys, "--vault", vault, "init")[0] == 0
    base = ["--vault", vault, "conversation"]
    assert run(capsys, *base, "note", "seed", "S1", "kiln", "The kiln runs at 1200 C.",
               "--date", "2024-05-01T10:00", "--confirmed")[0] == 0
    assert run(capsys, *base, "note", "seed", "S1", "guess", "Maybe Carla sells vases.",
               "--date", "2024-05-01T10:00")[0] == 0
    code, out = run(capsys, *base, "end-session", "seed", "S1", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["done"] == 0
    assert [(d["action"], d["reason"]) for d in doc["decisions"]] == [
        ("archive", "neither cited nor confirmed by session end"), ("promote", "confirmed")]
    code, out = run(capsys, *base, "end-session", "seed", "S1", "--apply", "--json")
    assert code == 0 and json.loads(out)["done"] == 2
    code, out = run(capsys, "--vault", vault, "read", "conversations/seed/working/S1/kiln",
                    "--json")
    assert code == 0 and '"promoted_from": "working"' in out
    code, out = run(capsys, *base, "demote", "conversations/seed/working/S1/kiln")
    assert code == 0 and "working note again" in out
    code, out = run(capsys, *base, "end-session", "seed", "S1", "--json")
    assert [d["action"] for d in json.loads(out)["decisions"]] == ["promote"]  # kiln is back
    assert main([*base, "demote", "conversations/seed/working/S1/kiln"]) == 1


def test_demote_refuses_a_name_two_notes_share(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`demote` rewrites the note it names: a bare name two promoted notes share is
    ambiguous_note listing both, as for every command that changes a note (README); reads
    resolving such a name as `[[NAME]]` (session 37) made it demote the shorter path's note
    silently (REV37)."""
    root = tmp_path / "v"
    fm = "---\ntier: working\nkind: fact\npromoted_from: working\n---\n"
    for rel in ("ops/kiln.md", "projects/kilns/kiln.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(fm + f"The kiln of {rel}.\n", encoding="utf-8")
    assert run(capsys, "--vault", str(root), "init", "--no-dense")[0] == 0
    code, out = run(capsys, "--vault", str(root), "conversation", "demote", "kiln", "--json")
    assert code == 1
    assert json.loads(out)["error"]["candidates"] == ["ops/kiln.md", "projects/kilns/kiln.md"]
    for rel in ("ops/kiln.md", "projects/kilns/kiln.md"):
        assert "promoted_from: working" in (root / rel).read_text(encoding="utf-8")
    assert run(capsys, "--vault", str(root), "conversation", "demote", "ops/kiln")[0] == 0
    assert "promoted_from" not in (root / "ops/kiln.md").read_text(encoding="utf-8")
