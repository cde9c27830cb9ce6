"""Counts of one said in the singular by the commands NEWUSER9 (session 39) left: `rmh index`
("indexed 1 notes"), `rmh move` ("rewrote links in 1 notes") and `rmh forget` ("would erase 1
notes, 0 trash copies, the stored embeddings of their 1 chunks", "erased 1 notes and 0 trash
copies (0 embeddings, 1 events dropped"); through the real CLI
(NOTES-REV39.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main


def test_index_move_and_forget_say_one_note(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "Only.md").write_text("# Only\nThe one note.\n", encoding="utf-8")
    assert main(["--vault", str(vault), "init", "--no-dense"]) == 0
    capsys.readouterr()
    assert main(["--vault", str(vault), "index", "--no-dense"]) == 0
    assert capsys.readouterr().out.startswith("indexed 1 note (+")  # was "1 notes"
    (vault / "Ref.md").write_text("# Ref\nSee [[Only]].\n", encoding="utf-8")
    assert main(["--vault", str(vault), "move", "Only", "Moved"]) == 0
    assert "; rewrote links in 1 note" in capsys.readouterr().out  # was "1 notes"
    assert main(["--vault", str(vault), "forget", "Ref", "--dry-run"]) == 0
    assert capsys.readouterr().out.startswith(  # "1 notes", "their 1 chunks"
        "would erase 1 note, 0 trash copies, the stored embeddings of their 1 chunk (")
    assert main(["--vault", str(vault), "forget", "Ref"]) == 0
    assert capsys.readouterr().out.startswith(  # "1 notes", "1 events dropped"
        "erased 1 note and 0 trash copies (0 embeddings, 1 event dropped, ")
