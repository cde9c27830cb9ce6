"""`rmh conversation end-session --apply` and `demote` rewrite a working note from what they
read: an edit made to it meanwhile (by the user in Obsidian, by an agent) was overwritten with
the older text. Both writes are now guarded by the hash they read: the edit stays, and the
command fails with edit_conflict instead of acknowledging a stale rewrite."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import harness.commands.conversation as conversation_cmd
from harness.cli import main
from vault import demoted_text, session_end

NOTE = "conversations/seed/working/S1/kiln.md"


def setup(tmp_path: Path) -> list[str]:
    vault = str(tmp_path / "v")
    assert main(["--vault", vault, "init"]) == 0
    base = ["--vault", vault, "conversation"]
    assert main([*base, "note", "seed", "S1", "kiln", "The kiln runs at 1200 C.",
                 "--date", "2024-05-01T10:00", "--confirmed"]) == 0
    return base


def edit_meanwhile(root: Path) -> str:
    with open(root / NOTE, "a", encoding="utf-8") as fh:
        fh.write("\nEdited meanwhile: the kiln was replaced.\n")
    return (root / NOTE).read_text("utf-8")


def test_end_session_does_not_overwrite_an_edit_made_meanwhile(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = setup(tmp_path)
    real = session_end
    edited: list[str] = []

    def racing(*args: Any) -> Any:
        decisions = list(real(*args))
        edited.append(edit_meanwhile(tmp_path / "v"))
        return decisions

    monkeypatch.setattr(conversation_cmd, "session_end", racing)
    assert main([*base, "end-session", "seed", "S1", "--apply"]) == 1
    assert (tmp_path / "v" / NOTE).read_text("utf-8") == edited[0]


def test_demote_does_not_overwrite_an_edit_made_meanwhile(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = setup(tmp_path)
    assert main([*base, "end-session", "seed", "S1", "--apply"]) == 0
    real = demoted_text
    edited: list[str] = []

    def racing(*args: Any) -> Any:
        edited.append(edit_meanwhile(tmp_path / "v"))
        return real(*args)

    monkeypatch.setattr(conversation_cmd, "demoted_text", racing)
    assert main([*base, "demote", NOTE]) == 1
    assert (tmp_path / "v" / NOTE).read_text("utf-8") == edited[0]
